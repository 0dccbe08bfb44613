/**
 * What the studio page exchanges with the API: the context of one version (the version, the few
 * asset fields the page shows) and the boot data the API embeds in the HTML shell.
 */
import type { Version, VersionScript } from '@dub/core';

/** How the page authenticates: the signed link's query (`expires`, `sig`) or an API key. */
export type StudioAccess = 'link' | 'key';

/** The asset fields a studio page may see (never the asset's other languages or versions). */
export interface StudioAsset {
  asset_id: string;
  name: string;
  /** Source locale. */
  locale: string;
  /** Source duration in seconds; null while the asset is processing. */
  duration: number | null;
  source_video_url: string | null;
  thumbnail_url: string | null;
}

/** GET /v1/versions/{version_id}/studio/context. */
export interface StudioContext {
  access: StudioAccess;
  /** When the signed link stops working (ISO 8601); null for API-key access. */
  link_expires_at: string | null;
  /** The version has a script (it was prepared). */
  has_script: boolean;
  version: Version;
  asset: StudioAsset;
}

/** A script as read or saved, with the ETag that the next save sends as If-Match. */
export interface TaggedScript {
  script: VersionScript;
  etag: string;
}

/** Embedded in the HTML shell as JSON (`<script type="application/json" id="dub-studio-boot">`). */
export interface StudioBoot {
  v: 1;
  /** Base URL of the API (the `/v1/...` calls go there). */
  api_base: string;
  version_id: string;
  access: StudioAccess;
  /** Present when the page request itself was authorized: the first render needs no round trip. */
  context?: StudioContext;
  /** The script when the version has one (with context). */
  script?: TaggedScript | null;
  /** Why the page cannot open (expired link, unknown version), as the API says it. */
  error?: { status: number; detail: string };
}
