/**
 * Request schemas (TypeBox = JSON Schema): fastify validates with them and @fastify/swagger
 * publishes them; the plain modules check the same schemas with TypeBox's compiler (the upload's
 * `request` part never passes through fastify's validation). Unknown fields are ignored.
 */
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import { AUTO_GENERATE_VALUES, GENERATE_MODES, LIPS_MODELS, SRT_LOCALITIES, SRT_PROFILES } from '@dub/core';

/** A union of string literals (JSON Schema anyOf/const), typed as the literal union. */
const Enum = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {}) as unknown as TUnsafe<T[number]>;

/** The contract's error body; a 500 also names its request id (the X-Request-Id header). */
export const ApiErrorBodySchema = Type.Object(
  {
    detail: Type.String({ description: 'A full description of the error.' }),
    request_id: Type.Optional(Type.String({ description: 'Present on 500: the request id under which the cause is logged (also the X-Request-Id header of every response).' })),
  },
  { $id: 'ErrorBody' },
);

/**
 * Extension: a glossary (checked in full by @dub/core parseGlossary, which names the entry and the
 * limit: at most 200 terms, a term up to 100 characters, a translation up to 200).
 */
export const GlossaryRequestSchema = Type.Array(
  Type.Object({
    term: Type.String({ description: 'Source-language term, matched as a whole word (case-insensitive unless case_sensitive).' }),
    translation: Type.Optional(Type.String({ description: 'Its fixed translation (or keep: true).' })),
    keep: Type.Optional(Type.Boolean({ description: 'true: keep the term as it is (a name, a brand).' })),
    case_sensitive: Type.Optional(Type.Boolean({ description: 'Match the exact case (default false).' })),
  }),
  { description: 'Extension: terms with a fixed translation or kept as they are (at most 200).' },
);

export const LanguageRequestSchema = Type.Object({
  locale: Type.String({ description: 'Supported target locale.' }),
  srt: Type.Optional(Type.String({ description: 'Reference SRT contents for this language (must be valid SRT).' })),
  glossary: Type.Optional(GlossaryRequestSchema),
});

const createFields = {
  name: Type.String({ description: 'Display name; must not be empty; longer than 255 characters is truncated.' }),
  locale: Type.String({ description: 'Source locale.' }),
  languages: Type.Array(LanguageRequestSchema, { description: 'Target languages (distinct locales).' }),
  callback_url: Type.Optional(Type.String({ description: 'HTTPS URL receiving signed status callbacks.' })),
  speakers_count: Type.Optional(Type.Integer({ minimum: 1, description: 'Number of distinct speakers (positive integer).' })),
  start_time: Type.Optional(Type.Number({ minimum: 0, description: 'Trim start in seconds.' })),
  end_time: Type.Optional(Type.Number({ minimum: 0, description: 'Trim end in seconds.' })),
  auto_generate: Type.Optional(Enum(AUTO_GENERATE_VALUES)),
  source_srt: Type.Optional(Type.String({ description: 'Reference transcript of the source language (SRT recommended; other text accepted).' })),
  lips_model: Type.Optional(Enum(LIPS_MODELS)),
  voice_anonymization: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  voice_over: Type.Optional(Type.Boolean()),
  voice_library_id: Type.Optional(Type.String({ description: 'Library voice id (GET /v1/voices).' })),
  background_url: Type.Optional(Type.String({ description: 'Public URL of a clean background track.' })),
  speech_url: Type.Optional(Type.String({ description: 'Public URL of a clean speech track.' })),
  glossary: Type.Optional(GlossaryRequestSchema),
};

export const CreateAssetBodySchema = Type.Object({ ...createFields, media_url: Type.String({ description: 'Public URL of the source video.' }) }, { $id: 'CreateAssetBody' });
export type CreateAssetBody = Static<typeof CreateAssetBodySchema>;

/** The `request` part of the upload: the create fields without media_url. */
export const UploadRequestSchema = Type.Object(createFields, { $id: 'UploadRequest' });
export type UploadRequest = Static<typeof UploadRequestSchema>;

export const AddLanguagesBodySchema = Type.Object({ languages: Type.Array(LanguageRequestSchema, { minItems: 1 }), auto_generate: Type.Optional(Enum(AUTO_GENERATE_VALUES)) }, { $id: 'AddLanguagesBody' });
export type AddLanguagesBody = Static<typeof AddLanguagesBodySchema>;

/** Extension: PATCH /v1/assets/{asset_id}: replace the asset's glossary and/or a dubbing's (null or [] clears it). */
export const PatchAssetBodySchema = Type.Object(
  {
    glossary: Type.Optional(Type.Union([GlossaryRequestSchema, Type.Null()])),
    languages: Type.Optional(
      Type.Array(Type.Object({ locale: Type.String({ description: 'Target locale of an existing dubbing.' }), glossary: Type.Union([GlossaryRequestSchema, Type.Null()]) }), { minItems: 1 }),
    ),
  },
  { $id: 'PatchAssetBody' },
);
export type PatchAssetBody = Static<typeof PatchAssetBodySchema>;

export const StudioUrlRequestSchema = Type.Object(
  {
    sign_url: Type.Optional(Type.Boolean({ description: 'Default true: a signed link usable without login. false: the plain studio_url (requires authentication).' })),
    expiration_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: 'Validity of a signed link in minutes (default 180).' })),
  },
  { $id: 'StudioUrlRequest' },
);
export type StudioUrlRequest = Static<typeof StudioUrlRequestSchema>;

export const ReviseBodySchema = Type.Object({ studio_url_request: Type.Optional(StudioUrlRequestSchema) }, { $id: 'ReviseBody' });
export type ReviseBody = Static<typeof ReviseBodySchema>;

export const GenerateBodySchema = Type.Object({ generate_mode: Enum(GENERATE_MODES) }, { $id: 'GenerateBody' });
export type GenerateBody = Static<typeof GenerateBodySchema>;

export const NewVersionBodySchema = Type.Object(
  {
    from_version_id: Type.Optional(Type.String({ description: 'Version to copy (default: the newest version of the dubbing that has a script).' })),
    name: Type.Optional(Type.String({ description: 'Name of the new version (default "<locale> v<n>").' })),
  },
  { $id: 'NewVersionBody' },
);
export type NewVersionBody = Static<typeof NewVersionBodySchema>;

export const ListAssetsQuerySchema = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Page size 1..100 (default 20).' })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page.' })),
});

export const SrtQuerySchema = Type.Object({
  locality: Type.Optional(Enum(SRT_LOCALITIES, 'source or target (default target).')),
  srt_profile: Type.Optional(Enum(SRT_PROFILES, 'Default regular.')),
});

export const StudioUrlResponseSchema = Type.Object({ studio_url: Type.String() }, { $id: 'StudioUrlResponse' });
export const ReviseResponseSchema = Type.Object({ studio_url: Type.Optional(Type.String()) }, { $id: 'ReviseResponse' });

export const VoiceSchema = Type.Object(
  {
    voice_id: Type.String(),
    name: Type.String(),
    gender: Type.Union([Type.Literal('female'), Type.Literal('male')]),
    description: Type.String(),
    languages: Type.Array(Type.String()),
    preview_url: Type.String(),
  },
  { $id: 'Voice' },
);
