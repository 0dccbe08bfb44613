/**
 * Checks of the create/upload/add-languages requests beyond their JSON schemas: locales, SRT
 * contents, URLs (SSRF rules of @dub/core net), the voice-over rules. Every failure is a
 * ValidationError whose message names the field; voice-over rules carry the contract's asset
 * error code in the message (HTTP 400).
 */
import { assertPublicUrl, isSourceLocale, isTargetLocale, parseGlossary, ValidationError, type AutoGenerate, type Glossary, type LipsModel } from '@dub/core';
import { pairRefusalMessage, type PairJob, type PairRefusal } from '@dub/pipeline';
import { checkSrt, looksLikeWebVtt } from '@dub/srt';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AddLanguagesBodySchema, CreateAssetBodySchema, PatchAssetBodySchema, UploadRequestSchema, type AddLanguagesBody, type PatchAssetBody, type UploadRequest } from './schemas.js';

export const MAX_NAME_LENGTH = 255;

export interface LanguageInput {
  locale: string;
  srt?: string;
  /** Extension: the dubbing's glossary (parseGlossary), on top of the asset's. */
  glossary?: Glossary;
}

/** A create request after every check: what the service stores and sends to the worker. */
export interface CreateAssetInput {
  name: string;
  locale: string;
  languages: LanguageInput[];
  media_url?: string;
  callback_url?: string;
  speakers_count?: number;
  start_time?: number;
  end_time?: number;
  auto_generate: AutoGenerate;
  source_srt?: string;
  lips_model: LipsModel;
  voice_anonymization: number;
  voice_over: boolean;
  voice_library_id?: string;
  background_url?: string;
  speech_url?: string;
  /** Extension: the asset's glossary (parseGlossary); absent when none or empty. */
  glossary?: Glossary;
}

export interface UrlPolicy {
  allowPrivateUrls: boolean;
  /** Accept http:// callback URLs. */
  allowInsecureCallbacks: boolean;
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export interface CreateChecks extends UrlPolicy {
  /** Known library voice ids. */
  isLibraryVoice: (id: string) => boolean;
  /** Whether the engines that will run the work serve the pairs (absent: not checked here). */
  pairs?: PairCapability;
}

/**
 * What the engines that run the work serve: where the API runs it itself, the pipeline's
 * PairChecker (the registries' supports here); with NATS, the live workers' published
 * capabilities (@dub/worker FleetCapabilities), which accept while no worker has reported.
 */
export interface PairCapability {
  /** The first refusal of the job, or undefined when it can run (or cannot be known yet). */
  check(job: PairJob): Promise<PairRefusal | undefined>;
}

/**
 * 400 before anything is created when the engines do not serve a pair: the contract's "not
 * supported for its role", naming the field, the stage, what is missing and the fix.
 */
export async function checkPairs(pairs: PairCapability | undefined, job: PairJob): Promise<void> {
  const r = await pairs?.check(job);
  if (r) throw new ValidationError(pairRefusalMessage(r), { field: r.field, details: { stage: r.stage, source: r.source, ...(r.target ? { target: r.target } : {}) } });
}

const compiled = new WeakMap<TSchema, ReturnType<typeof TypeCompiler.Compile>>();

/** "/languages/0/locale" -> "languages[0].locale" */
export function fieldOfPointer(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/** The allowed values of a union of string literals, if the schema is one. */
export function literalValues(schema: unknown): string[] | undefined {
  const any = (schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf;
  if (!Array.isArray(any) || !any.every((s) => typeof s.const === 'string')) return undefined;
  return any.map((s) => s.const as string);
}

/** Schema check with a message that names the field (e.g. "speakers_count: must be an integer"). */
export function checkSchema<T>(schema: TSchema, value: unknown, what: string): T {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  if (c.Check(value)) return value as T;
  const err = c.Errors(value).First()!;
  const field = fieldOfPointer(err.path);
  const allowed = literalValues(err.schema);
  const missing = err.value === undefined;
  const msg = missing ? 'is required' : allowed ? `must be one of ${allowed.join(', ')}` : err.message.charAt(0).toLowerCase() + err.message.slice(1);
  throw new ValidationError(`${field || what}: ${msg}`, { field: field || what });
}

export function checkLanguages(languages: readonly (Omit<LanguageInput, 'glossary'> & { glossary?: unknown })[], field = 'languages'): LanguageInput[] {
  const seen = new Set<string>();
  return languages.map((l, i) => {
    if (!isTargetLocale(l.locale)) throw new ValidationError(`${field}[${i}].locale: unsupported target locale "${l.locale}"`, { field: `${field}[${i}].locale` });
    if (seen.has(l.locale)) throw new ValidationError(`${field}[${i}].locale: duplicate target locale "${l.locale}"`, { field: `${field}[${i}].locale` });
    seen.add(l.locale);
    if (l.srt !== undefined) {
      // Read as ffmpeg reads it (@dub/srt readSrt); refused with the line, the problem and the fix.
      const v = checkSrt(l.srt);
      if (!v.ok) throw new ValidationError(`${field}[${i}].srt: invalid SRT: ${v.error.message}`, { field: `${field}[${i}].srt` });
    }
    const glossary = l.glossary !== undefined ? parseGlossary(l.glossary, `${field}[${i}].glossary`) : [];
    return { locale: l.locale, ...(l.srt !== undefined ? { srt: l.srt } : {}), ...(glossary.length ? { glossary } : {}) };
  });
}

/**
 * source_srt: WebVTT (with its header) and plain text (no timing line) pass as they are; text with
 * timing lines must be SRT that readSrt reads (what ffmpeg reads), or it is refused here with the
 * line, the problem and the fix instead of failing the asset later.
 */
export function checkSourceSrt(text: string): void {
  if (looksLikeWebVtt(text)) return;
  const c = checkSrt(text);
  if (!c.ok && c.error.details?.reason !== 'no_cues') throw new ValidationError(`source_srt: invalid SRT: ${c.error.message}`, { field: 'source_srt' });
}

async function checkUrl(field: string, url: string, policy: UrlPolicy, httpsOnly: boolean): Promise<void> {
  const allowHttp = !httpsOnly || policy.allowInsecureCallbacks;
  await assertPublicUrl(url, { field, allowPrivate: policy.allowPrivateUrls, protocols: allowHttp ? ['http:', 'https:'] : ['https:'], ...(policy.lookup ? { lookup: policy.lookup } : {}) });
}

/** Validate a create body (JSON) or an upload `request` part (`upload: true`, no media_url). */
export async function parseCreateAsset(body: unknown, checks: CreateChecks, upload = false): Promise<CreateAssetInput> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError(upload ? 'request: must be a JSON object' : 'body: must be a JSON object', { field: upload ? 'request' : 'body' });
  const b = checkSchema<UploadRequest & { media_url?: string }>(upload ? UploadRequestSchema : CreateAssetBodySchema, body, upload ? 'request' : 'body');
  const name = b.name.trim();
  if (name === '') throw new ValidationError('name: must not be empty', { field: 'name' });
  if (!isSourceLocale(b.locale)) throw new ValidationError(`locale: unsupported source locale "${b.locale}"`, { field: 'locale' });
  if (b.languages.length === 0) throw new ValidationError('languages: at least one target language is required', { field: 'languages' });
  const languages = checkLanguages(b.languages);
  if (b.source_srt !== undefined) checkSourceSrt(b.source_srt);
  const glossary = b.glossary !== undefined ? parseGlossary(b.glossary, 'glossary') : [];
  await checkPairs(checks.pairs, { source: b.locale, sourceSrt: b.source_srt !== undefined && b.source_srt.trim() !== '', targets: languages.map((l) => ({ locale: l.locale, srt: l.srt !== undefined && l.srt.trim() !== '' })) });
  if (b.start_time !== undefined && b.end_time !== undefined && b.end_time <= b.start_time) throw new ValidationError('end_time: must be greater than start_time', { field: 'end_time' });
  const voiceOver = b.voice_over ?? false;
  const auto = b.auto_generate ?? 'off';
  if (voiceOver && !b.voice_library_id) throw new ValidationError('voice_over_library_required: voice_over is enabled but voice_library_id is absent', { field: 'voice_library_id' });
  if (voiceOver && auto === 'with_lips') throw new ValidationError('voice_over_with_lips_not_allowed: voice_over cannot be combined with auto_generate=with_lips; use no_lips or off', { field: 'auto_generate' });
  if (b.voice_library_id !== undefined && !checks.isLibraryVoice(b.voice_library_id)) throw new ValidationError(`voice_library_id: unknown library voice "${b.voice_library_id}" (see GET /v1/voices)`, { field: 'voice_library_id' });
  if (!upload) await checkUrl('media_url', b.media_url!, checks, false);
  if (b.background_url !== undefined) await checkUrl('background_url', b.background_url, checks, false);
  if (b.speech_url !== undefined) await checkUrl('speech_url', b.speech_url, checks, false);
  if (b.callback_url !== undefined) await checkUrl('callback_url', b.callback_url, checks, true);
  const out: CreateAssetInput = {
    name: truncate(name, MAX_NAME_LENGTH),
    locale: b.locale,
    languages,
    auto_generate: auto,
    lips_model: b.lips_model ?? 'real_face',
    voice_anonymization: b.voice_anonymization ?? 0,
    voice_over: voiceOver,
  };
  const copy = ['media_url', 'callback_url', 'speakers_count', 'start_time', 'end_time', 'source_srt', 'voice_library_id', 'background_url', 'speech_url'] as const;
  for (const k of copy) if (b[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = b[k];
  if (glossary.length) out.glossary = glossary;
  return out;
}

/** Truncate to `max` characters (code points, so no surrogate pair is split). */
export function truncate(s: string, max: number): string {
  const cps = Array.from(s);
  return cps.length > max ? cps.slice(0, max).join('') : s;
}

export function parseAddLanguages(body: unknown): { languages: LanguageInput[]; auto_generate: AutoGenerate } {
  const b = checkSchema<AddLanguagesBody>(AddLanguagesBodySchema, body ?? {}, 'body');
  return { languages: checkLanguages(b.languages), auto_generate: b.auto_generate ?? 'off' };
}

/** Extension: PUT /v1/versions/{version_id}/glossary: `{ asset?, language? }`, each a list or null (clears). */
export function parseVersionGlossary(body: unknown): { asset?: Glossary | null; language?: Glossary | null } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('body: must be a JSON object', { field: 'body' });
  const b = body as { asset?: unknown; language?: unknown };
  if (b.asset === undefined && b.language === undefined) throw new ValidationError('body: give asset and/or language (a glossary list, or null to clear)', { field: 'body' });
  const out: { asset?: Glossary | null; language?: Glossary | null } = {};
  for (const k of ['asset', 'language'] as const) {
    if (b[k] === undefined) continue;
    const g = b[k] === null ? [] : parseGlossary(b[k], k);
    out[k] = g.length ? g : null;
  }
  return out;
}

/** Extension: PATCH /v1/assets/{asset_id}. `null` (or []) clears a glossary; absent leaves it. */
export interface PatchAssetInput {
  glossary?: Glossary | null;
  languages?: { locale: string; glossary: Glossary | null }[];
}

export function parsePatchAsset(body: unknown): PatchAssetInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('body: must be a JSON object', { field: 'body' });
  const b = checkSchema<PatchAssetBody>(PatchAssetBodySchema, body, 'body');
  if (b.glossary === undefined && b.languages === undefined) throw new ValidationError('body: give glossary and/or languages[].glossary to change', { field: 'body' });
  const out: PatchAssetInput = {};
  const parse = (g: unknown[] | null, field: string): Glossary | null => {
    const parsed = g === null ? [] : parseGlossary(g, field);
    return parsed.length ? parsed : null;
  };
  if (b.glossary !== undefined) out.glossary = parse(b.glossary, 'glossary');
  if (b.languages !== undefined) {
    const seen = new Set<string>();
    out.languages = b.languages.map((l, i) => {
      if (seen.has(l.locale)) throw new ValidationError(`languages[${i}].locale: duplicate locale "${l.locale}"`, { field: `languages[${i}].locale` });
      seen.add(l.locale);
      return { locale: l.locale, glossary: parse(l.glossary, `languages[${i}].glossary`) };
    });
  }
  return out;
}
