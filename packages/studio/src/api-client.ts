/**
 * The studio's calls to the API, each carrying the page's credential: the signed link's
 * `expires`/`sig` query (scoped by the API to this one version) or `Authorization: Bearer <key>`.
 * Errors come back as ApiError with the HTTP status and the API's `detail`.
 */
import type { GenerateMode, Glossary, SpeakerVoice, SrtLocality, SrtProfileName, Version, VersionScript } from '@dub/core';
import type { VersionGlossaryView } from './glossary-panel.js';
import type { QualityReportView } from './report.js';
import type { StudioContext, TaggedScript } from './types.js';
import type { WaveformBody } from './waveform.js';

export type StudioCredential = { kind: 'link'; expires: string; sig: string } | { kind: 'key'; key: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface StudioClientOptions {
  /** API base URL (no trailing slash needed). */
  apiBase: string;
  versionId: string;
  credential: StudioCredential;
  fetch?: FetchLike;
}

/** The signed link's credential from a page URL's query, or undefined when it has none. */
export function linkCredential(search: string): StudioCredential | undefined {
  const q = new URLSearchParams(search);
  const sig = q.get('sig');
  const expires = q.get('expires');
  return sig !== null && expires !== null ? { kind: 'link', expires, sig } : undefined;
}

export class StudioClient {
  private readonly base: string;
  private readonly fetchFn: FetchLike;

  constructor(private readonly o: StudioClientOptions) {
    this.base = o.apiBase.replace(/\/+$/, '');
    this.fetchFn = o.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Absolute URL of a path of this version (`/script`, `/srt`, ...) with the link's query when signed. */
  url(suffix: string, query: Record<string, string> = {}): string {
    const q = new URLSearchParams(query);
    if (this.o.credential.kind === 'link') {
      q.set('expires', this.o.credential.expires);
      q.set('sig', this.o.credential.sig);
    }
    const s = q.toString();
    return `${this.base}/v1/versions/${encodeURIComponent(this.o.versionId)}${suffix}${s ? `?${s}` : ''}`;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', ...extra };
    if (this.o.credential.kind === 'key') h.authorization = `Bearer ${this.o.credential.key}`;
    return h;
  }

  private async call(method: string, suffix: string, opts: { body?: unknown; headers?: Record<string, string>; query?: Record<string, string> } = {}): Promise<Response> {
    const init: RequestInit = { method, headers: this.headers(opts.body !== undefined ? { 'content-type': 'application/json', ...opts.headers } : opts.headers), cache: 'no-store', credentials: 'omit' };
    if (opts.body !== undefined) init.body = JSON.stringify(opts.body);
    let res: Response;
    try {
      res = await this.fetchFn(this.url(suffix, opts.query), init);
    } catch (e) {
      throw new ApiError(0, `the API could not be reached (${(e as Error).message})`);
    }
    if (!res.ok) throw new ApiError(res.status, await errorDetail(res));
    return res;
  }

  async context(): Promise<StudioContext> {
    return (await this.call('GET', '/studio/context')).json() as Promise<StudioContext>;
  }

  async version(): Promise<Version> {
    return (await this.call('GET', '')).json() as Promise<Version>;
  }

  async script(): Promise<TaggedScript> {
    const r = await this.call('GET', '/script');
    return { script: (await r.json()) as VersionScript, etag: r.headers.get('etag') ?? '' };
  }

  /** PUT the whole script with If-Match; a 412 means someone else saved first. */
  async saveScript(script: VersionScript, etag: string): Promise<TaggedScript> {
    const r = await this.call('PUT', '/script', { body: script, headers: etag ? { 'if-match': etag } : {} });
    return { script: (await r.json()) as VersionScript, etag: r.headers.get('etag') ?? '' };
  }

  async generate(mode: GenerateMode): Promise<Version> {
    return (await this.call('POST', '/generate', { body: { generate_mode: mode } })).json() as Promise<Version>;
  }

  async revise(): Promise<void> {
    await this.call('PATCH', '/revise', { body: {} });
  }

  /** The source audio's waveform (computed by the API on the first request for the asset, then stored). */
  async waveform(): Promise<WaveformBody> {
    return (await this.call('GET', '/waveform')).json() as Promise<WaveformBody>;
  }

  /** The quality report of the version's last generation (GET /report); undefined when the API has none (404). */
  async report(): Promise<QualityReportView | undefined> {
    try {
      return (await (await this.call('GET', '/report')).json()) as QualityReportView;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * Re-dub one line (POST /segments/{id}/redub): the segment synthesized with `text`, `speaker`,
   * `start`, `end` (default: the saved ones) as the next generation would; the WAV of the line as placed.
   */
  async redub(segmentId: string, body: { text?: string; speaker?: string; start?: number; end?: number } = {}): Promise<LineAudio> {
    const r = await this.call('POST', `/segments/${encodeURIComponent(segmentId)}/redub`, { body, headers: { accept: 'audio/wav, application/json' } });
    return lineAudio(r);
  }

  /** A speaker's voice under a choice (undefined: the saved one; null: none), speaking `text` or the start of their first line. */
  async previewVoice(speakerId: string, voice?: SpeakerVoice | null, text?: string): Promise<LineAudio> {
    const body: { voice?: SpeakerVoice | null; text?: string } = {};
    if (voice !== undefined) body.voice = voice;
    if (text !== undefined) body.text = text;
    const r = await this.call('POST', `/speakers/${encodeURIComponent(speakerId)}/preview`, { body, headers: { accept: 'audio/wav, application/json' } });
    return lineAudio(r);
  }

  /** The library voices a speaker can be given (GET /voices of this version: works with the studio link too). */
  async voices(): Promise<LibraryVoiceView[]> {
    return ((await (await this.call('GET', '/voices')).json()) as { voices: LibraryVoiceView[] }).voices;
  }

  /** The asset's and this version's language's glossary (GET /glossary, an extension). */
  async glossary(): Promise<VersionGlossaryView> {
    return (await this.call('GET', '/glossary')).json() as Promise<VersionGlossaryView>;
  }

  /** Replace the language's glossary and (API key only) the asset's; null clears one. */
  async saveGlossary(body: { asset?: Glossary | null; language?: Glossary | null }): Promise<VersionGlossaryView> {
    return (await this.call('PUT', '/glossary', { body })).json() as Promise<VersionGlossaryView>;
  }

  async srt(locality: SrtLocality, profile: SrtProfileName): Promise<{ text: string; filename: string }> {
    const r = await this.call('GET', '/srt', { query: { locality, srt_profile: profile }, headers: { accept: 'application/x-subrip, application/json' } });
    const cd = r.headers.get('content-disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(cd)?.[1] ?? `${this.o.versionId}-${locality}.srt`;
    return { text: await r.text(), filename: name.replace(/\.srt$/, `-${profile}.srt`) };
  }
}

export interface LibraryVoiceView {
  voice_id: string;
  name: string;
  gender: string;
  description: string;
  languages: string[];
  speaks_locale: boolean;
}

/** A line's audio from the one-line endpoints, with what the API said about it. */
export interface LineAudio {
  wav: Blob;
  /** Seconds of audio (the line as placed, or the preview). */
  duration: number;
  /** X-Dub-Regenerated: synthesized now (re-dub only). */
  regenerated: boolean | undefined;
  /** Placed span (re-dub only). */
  start: number | undefined;
  end: number | undefined;
  voiceSource: string;
  engine: string;
}

async function lineAudio(r: Response): Promise<LineAudio> {
  const num = (h: string): number | undefined => {
    const v = r.headers.get(h);
    return v === null || v === '' || !Number.isFinite(Number(v)) ? undefined : Number(v);
  };
  const regen = r.headers.get('x-dub-regenerated');
  return {
    wav: new Blob([await r.arrayBuffer()], { type: 'audio/wav' }),
    duration: num('x-dub-duration') ?? 0,
    regenerated: regen === null ? undefined : regen === 'true',
    start: num('x-dub-start'),
    end: num('x-dub-end'),
    voiceSource: r.headers.get('x-dub-voice-source') ?? '',
    engine: r.headers.get('x-dub-tts-engine') ?? '',
  };
}

async function errorDetail(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const j = JSON.parse(text) as { detail?: unknown };
    if (typeof j.detail === 'string' && j.detail) return j.detail;
  } catch {
    // not JSON
  }
  return text.trim() ? `${res.status} ${text.trim().slice(0, 300)}` : `the API answered ${res.status} ${res.statusText}`.trim();
}
