/**
 * Signed links: result downloads (video, audio) of one generation, an asset's source video and
 * thumbnail, and studio links of one version; making them and resolving them (403 tampered or
 * expired, 410 when the generation is gone). HMAC claims and the secret are signing.ts's.
 */
import { NotFoundError } from '@dub/core';
import * as cat from '../catalog.js';
import { GoneError, LinkExpiredError, LinkInvalidError, type LinkKind } from '../errors.js';
import type { StudioUrlRequest } from '../schemas.js';
import type { SignedClaims, TokenCheck } from '../signing.js';
import { studioMinutes } from '../validators.js';
import type { Access, ServiceContext } from './context.js';

/** Signed link to an asset's source video or thumbnail. */
export type MediaLink = (assetId: string, kind: 'source' | 'thumbnail') => string;

/** A blob a signed link resolves to. */
export interface LinkedBlob {
  key: string;
  contentType: string;
  filename: string;
}

/** A refused signature check: expired or invalid (403 either way). */
function refused(check: Extract<TokenCheck, { ok: false }>, kind: LinkKind): LinkExpiredError | LinkInvalidError {
  return check.reason === 'expired' ? new LinkExpiredError(kind) : new LinkInvalidError(kind);
}

export class LinkService {
  constructor(private readonly ctx: ServiceContext) {}

  /** Expiry of media links made now: the result URL lifetime, rounded up to a whole minute. */
  linkExpiry(): number {
    return Math.ceil(this.ctx.now().getTime() / 60_000) * 60 + this.ctx.o.resultUrlTtlSeconds;
  }

  signedUrl(baseUrl: string, c: SignedClaims): string {
    const sig = this.ctx.signer.sign(c);
    if (c.purpose === 'source-video' || c.purpose === 'thumbnail') return `${baseUrl}/v1/media/${c.versionId}/${c.purpose === 'source-video' ? 'source' : 'thumbnail'}?expires=${c.expires}&sig=${sig}`;
    if (c.purpose === 'studio') return `${baseUrl}/studio/${c.versionId}?expires=${c.expires}&sig=${sig}`;
    const kind = c.purpose === 'result-video' ? 'video' : 'audio';
    return `${baseUrl}/v1/downloads/${c.versionId}/${c.generation}/${kind}?expires=${c.expires}&sig=${sig}`;
  }

  /** Result video and audio links of one generation, valid for the result URL lifetime from now. */
  resultUrls(baseUrl: string, versionId: string, generation: number): { video: string; audio: string } {
    const expires = this.ctx.nowSeconds() + this.ctx.o.resultUrlTtlSeconds;
    return {
      video: this.signedUrl(baseUrl, { purpose: 'result-video', versionId, generation, expires }),
      audio: this.signedUrl(baseUrl, { purpose: 'result-audio', versionId, generation, expires }),
    };
  }

  /** Signed links to an asset's source video and thumbnail (same lifetime as result URLs). */
  mediaLink(baseUrl: string): MediaLink {
    const expires = this.linkExpiry();
    return (assetId, kind) => this.signedUrl(baseUrl, { purpose: kind === 'source' ? 'source-video' : 'thumbnail', versionId: assetId, generation: 0, expires });
  }

  /** Resolve a signed source/thumbnail link of an asset. */
  async resolveAssetMedia(assetId: string, kind: 'source' | 'thumbnail', expires: unknown, sig: unknown): Promise<LinkedBlob> {
    const check = this.ctx.signer.verify({ purpose: kind === 'source' ? 'source-video' : 'thumbnail', versionId: assetId, generation: 0, expires: Number(expires) }, String(sig ?? ''), this.ctx.nowSeconds());
    if (!check.ok) throw refused(check, 'link');
    const a = await cat.getAsset(this.ctx.db, assetId);
    const key = kind === 'source' ? a?.source_video_key : a?.thumbnail_key;
    if (!a || !key) throw new NotFoundError(`${kind} of asset ${assetId} not found`);
    return { key, contentType: kind === 'source' ? 'video/mp4' : 'image/jpeg', filename: `${assetId}-${kind}.${kind === 'source' ? 'mp4' : 'jpg'}` };
  }

  /** Resolve a signed download: 403 bad/expired signature, 410 when the generation is gone. */
  async resolveDownload(versionId: string, generation: number, kind: 'video' | 'audio', expires: unknown, sig: unknown): Promise<LinkedBlob> {
    const purpose = kind === 'video' ? 'result-video' : 'result-audio';
    const check = this.ctx.signer.verify({ purpose, versionId, generation, expires: Number(expires) }, String(sig ?? ''), this.ctx.nowSeconds());
    if (!check.ok) throw refused(check, 'download link');
    const v = await cat.getVersion(this.ctx.db, versionId);
    if (!v) throw new NotFoundError(`version ${versionId} not found`);
    const key = kind === 'video' ? v.result_video_key : v.result_audio_key;
    if (v.status !== 'Completed' || v.result_generation !== generation || !key) throw new GoneError(`generation ${generation} of version ${versionId} is no longer available`);
    return { key, contentType: kind === 'video' ? 'video/mp4' : 'audio/mp4', filename: `${versionId}-${generation}.${kind === 'video' ? 'mp4' : 'm4a'}` };
  }

  /** Plain (authenticated) studio URL of a version. */
  plainStudioUrl(baseUrl: string, versionId: string): string {
    return `${baseUrl}/v1/versions/${versionId}/studio`;
  }

  /** POST studio_url (and revise's studio_url_request): a signed link by default, or the plain URL. */
  async studioUrl(org: string, versionId: string, req: StudioUrlRequest, baseUrl: string, field = 'expiration_minutes'): Promise<string> {
    await this.ctx.accessVersion({ org }, versionId);
    const minutes = studioMinutes(req.expiration_minutes, field);
    if (req.sign_url === false) return this.plainStudioUrl(baseUrl, versionId);
    const expires = this.ctx.nowSeconds() + minutes * 60;
    return this.signedUrl(baseUrl, { purpose: 'studio', versionId, generation: 0, expires });
  }

  /** Check a signed studio link; throws 403 when tampered or expired. */
  checkStudioToken(versionId: string, expires: unknown, sig: unknown): Access {
    const check = this.ctx.signer.verify({ purpose: 'studio', versionId, generation: 0, expires: Number(expires) }, String(sig ?? ''), this.ctx.nowSeconds());
    if (!check.ok) throw refused(check, 'studio link');
    return { studioVersionId: versionId };
  }
}
