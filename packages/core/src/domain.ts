/**
 * Domain objects of the interface contract as TypeBox schemas (JSON Schema at run time, static
 * types at compile time). Identifier and timestamp formats (not shown in the contract) are fixed
 * here: ids are prefixed random ids (`ast_`, `dub_`, `ver_` + 24 base32 chars), timestamps are
 * ISO 8601 UTC strings with milliseconds.
 */
import { Type, type Static } from '@sinclair/typebox';
import { randomBytes } from 'node:crypto';
import { ASSET_ERROR_CODES, VERSION_ERROR_CODES } from './errors.js';
import { GlossarySchema, type Glossary } from './glossary.js';
import { EngineRecordsSchema, type EngineRecord } from './engines.js';

export const ASSET_STATUSES = ['Dubbing', 'PendingReview', 'Ready', 'Failed'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

export const VERSION_STATUSES = ['NotReady', 'ReadyToEdit', 'Generating', 'Completed', 'Failed'] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];

export const AUTO_GENERATE_VALUES = ['off', 'with_lips', 'no_lips'] as const;
export type AutoGenerate = (typeof AUTO_GENERATE_VALUES)[number];

export const GENERATE_MODES = ['with_lips', 'no_lips'] as const;
export type GenerateMode = (typeof GENERATE_MODES)[number];

export const LIPS_MODELS = ['real_face', 'real_face_turbo'] as const;
export type LipsModel = (typeof LIPS_MODELS)[number];

export const SRT_PROFILES = ['regular', 'mobile', 'global_regular', 'global_mobile'] as const;
export type SrtProfileName = (typeof SRT_PROFILES)[number];

export const SRT_LOCALITIES = ['source', 'target'] as const;
export type SrtLocality = (typeof SRT_LOCALITIES)[number];

export const EVENT_TYPES = [
  'asset_failed',
  'version_ready',
  'version_failed',
  'version_generating',
  'version_generated',
  'version_generate_failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const lit = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)) as never) as unknown as ReturnType<typeof Type.String>;

export const ErrorBodySchema = Type.Object({ detail: Type.String() }, { $id: 'ErrorBody' });
export type ErrorBody = Static<typeof ErrorBodySchema>;

export const AssetErrorSchema = Type.Object({ error_code: lit(ASSET_ERROR_CODES), detail: Type.String() }, { $id: 'AssetError' });
export type AssetErrorObject = { error_code: (typeof ASSET_ERROR_CODES)[number]; detail: string };

export const VersionErrorSchema = Type.Object({ error_code: lit(VERSION_ERROR_CODES), detail: Type.String() }, { $id: 'VersionError' });
export type VersionErrorObject = { error_code: (typeof VERSION_ERROR_CODES)[number]; detail: string };

export const VersionSummarySchema = Type.Object({ version_id: Type.String(), voice_over: Type.Optional(Type.Boolean()) }, { $id: 'VersionSummary' });
export type VersionSummary = Static<typeof VersionSummarySchema>;

export const LanguageEntrySchema = Type.Object(
  {
    dubbing_id: Type.String(),
    locale: Type.String(),
    versions: Type.Array(VersionSummarySchema),
    /** Extension: the dubbing's own glossary terms (on top of the asset's), when it has any. */
    glossary: Type.Optional(GlossarySchema),
  },
  { $id: 'LanguageEntry' },
);
export type LanguageEntry = Static<typeof LanguageEntrySchema>;

export const AssetSchema = Type.Object(
  {
    asset_id: Type.String(),
    name: Type.String(),
    locale: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    status: lit(ASSET_STATUSES),
    duration: Type.Union([Type.Number(), Type.Null()]),
    error: Type.Optional(AssetErrorSchema),
    source_video_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    thumbnail_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    languages: Type.Array(LanguageEntrySchema),
    /** Extension: the asset's glossary (glossary.ts), when it has one. */
    glossary: Type.Optional(GlossarySchema),
  },
  { $id: 'Asset' },
);
export interface Asset {
  asset_id: string;
  name: string;
  locale: string;
  created_at: string;
  status: AssetStatus;
  duration: number | null;
  error?: AssetErrorObject;
  source_video_url?: string | null;
  thumbnail_url?: string | null;
  languages: LanguageEntry[];
  glossary?: Glossary;
}

export const VersionSchema = Type.Object(
  {
    asset_id: Type.String(),
    dubbing_id: Type.String(),
    version_id: Type.String(),
    name: Type.String(),
    studio_url: Type.String(),
    locale: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    status: lit(VERSION_STATUSES),
    result_url: Type.Optional(Type.String()),
    result_audio_url: Type.Optional(Type.String()),
    result_generated_at: Type.Optional(Type.String({ format: 'date-time' })),
    voice_over: Type.Optional(Type.Boolean()),
    error: Type.Optional(VersionErrorSchema),
    /** Project extension: the engine every stage ran for the current result (separation, vad, asr, speakers, translation, tts, lips): model file, sha256, provider, how and why it was chosen. */
    engines: Type.Optional(EngineRecordsSchema),
  },
  { $id: 'Version' },
);
export interface Version {
  asset_id: string;
  dubbing_id: string;
  version_id: string;
  name: string;
  studio_url: string;
  locale: string;
  created_at: string;
  status: VersionStatus;
  result_url?: string;
  result_audio_url?: string;
  result_generated_at?: string;
  voice_over?: boolean;
  error?: VersionErrorObject;
  engines?: Record<string, EngineRecord>;
}

/** Callback payload (documented in the README). version_id and locale are null for asset events. */
export interface CallbackEvent {
  event: EventType;
  asset_id: string;
  version_id: string | null;
  locale: string | null;
  status: AssetStatus | VersionStatus;
  error: AssetErrorObject | VersionErrorObject | null;
  sent_at: string;
}

const B32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** A prefixed random id: `ast_` + 24 base32 characters (120 bits). */
export function newId(prefix: 'ast' | 'dub' | 'ver' | 'job' | 'evt' | string): string {
  const bytes = randomBytes(15);
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${out}`;
}

/** Timestamps are ISO 8601 UTC with milliseconds, e.g. 2026-11-21T12:00:00.000Z. */
export function nowIso(d: Date = new Date()): string {
  return d.toISOString();
}
