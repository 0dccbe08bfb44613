/**
 * Job contracts between any API front and the worker daemon, versioned (`v: 1`) and validated
 * with JSON Schema. Subjects (NATS): jobs are published to `dub.jobs.<type>` on the work-queue
 * stream DUB_JOBS with header Nats-Msg-Id = job_id (deduplication); the worker publishes events
 * to `dub.events.<asset_id>` on the stream DUB_EVENTS.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ASSET_ERROR_CODES, VERSION_ERROR_CODES, ValidationError } from './errors.js';
import { GENERATE_MODES, LIPS_MODELS } from './domain.js';
import { EngineRecordsSchema } from './engines.js';
import { GlossarySchema } from './glossary.js';
import { QualitySummarySchema } from './quality-report.js';

const Lit = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));

export const JOB_SUBJECT_PREFIX = 'dub.jobs';
export const EVENT_SUBJECT_PREFIX = 'dub.events';
export const JOBS_STREAM = 'DUB_JOBS';
export const EVENTS_STREAM = 'DUB_EVENTS';

/** A media input: a blob already in the store, or a URL the worker fetches (size/time limited, SSRF-checked). */
export const MediaRefSchema = Type.Union([
  Type.Object({ blob: Type.String({ minLength: 1 }) }),
  Type.Object({ url: Type.String({ minLength: 1 }) }),
]);
export type MediaRef = Static<typeof MediaRefSchema>;

export const VersionSpecSchema = Type.Object({
  version_id: Type.String({ minLength: 1 }),
  dubbing_id: Type.String({ minLength: 1 }),
  locale: Type.String({ minLength: 2 }),
  /** Reference SRT contents for this language (it becomes the translation). */
  srt: Type.Optional(Type.String()),
  /**
   * Or the blob key of those contents (UTF-8), where inline text would not fit the bus's message
   * limit (NATS: max_payload, 1 MiB by default). Not both. The worker reads it before the handler runs.
   */
  srt_key: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * The glossary the translation applies (the asset's with the dubbing's on top; glossary.ts).
   * Optional and ignored by workers before it (job schema v 1 unchanged: fields are only added).
   */
  glossary: Type.Optional(GlossarySchema),
});
export type VersionSpec = Static<typeof VersionSpecSchema>;

export const LimitsSchema = Type.Object({
  max_video_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  max_media_bytes: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  /** Allow loopback/private URLs (development and tests). */
  allow_private_urls: Type.Optional(Type.Boolean()),
});
export type Limits = Static<typeof LimitsSchema>;

const JobBase = {
  v: Type.Literal(1),
  job_id: Type.String({ minLength: 1 }),
  asset_id: Type.String({ minLength: 1 }),
  org_id: Type.Optional(Type.String()),
};

/** Probe, fetch/trim, separation, transcription, speakers; then one prepare-version per version. */
export const PrepareAssetJobSchema = Type.Object({
  ...JobBase,
  type: Type.Literal('prepare-asset'),
  locale: Type.String({ minLength: 2 }),
  media: MediaRefSchema,
  background: Type.Optional(MediaRefSchema),
  speech: Type.Optional(MediaRefSchema),
  start_time: Type.Optional(Type.Number({ minimum: 0 })),
  end_time: Type.Optional(Type.Number({ minimum: 0 })),
  speakers_count: Type.Optional(Type.Integer({ minimum: 1 })),
  source_srt: Type.Optional(Type.String()),
  /** Or the blob key of the source_srt text (UTF-8), like `versions[].srt_key`. Not both. */
  source_srt_key: Type.Optional(Type.String({ minLength: 1 })),
  limits: Type.Optional(LimitsSchema),
  versions: Type.Array(VersionSpecSchema),
});
export type PrepareAssetJob = Static<typeof PrepareAssetJobSchema>;

/** Translation (or the reference srt) and the editable script for one target language. */
export const PrepareVersionJobSchema = Type.Object({
  ...JobBase,
  type: Type.Literal('prepare-version'),
  source_locale: Type.String({ minLength: 2 }),
  version: VersionSpecSchema,
  /** Copy the script of this version instead of translating (a new version of a language). */
  copy_from_version_id: Type.Optional(Type.String()),
});
export type PrepareVersionJob = Static<typeof PrepareVersionJobSchema>;

export const GenerateOptionsSchema = Type.Object({
  voice_over: Type.Optional(Type.Boolean()),
  voice_library_id: Type.Optional(Type.String()),
  voice_anonymization: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  lips_model: Type.Optional(Lit(LIPS_MODELS)),
});
export type GenerateOptions = Static<typeof GenerateOptionsSchema>;

/** Synthesis, duration fitting, mixing, lips (with_lips), mux. */
export const GenerateVersionJobSchema = Type.Object({
  ...JobBase,
  type: Type.Literal('generate-version'),
  version_id: Type.String({ minLength: 1 }),
  locale: Type.String({ minLength: 2 }),
  mode: Lit(GENERATE_MODES),
  /** Blob key of the version's (edited) script. */
  script_key: Type.String({ minLength: 1 }),
  /** Generation number: results are stored under it, so a revise+generate never mixes outputs. */
  generation: Type.Integer({ minimum: 1 }),
  options: GenerateOptionsSchema,
});
export type GenerateVersionJob = Static<typeof GenerateVersionJobSchema>;

export const JobSchema = Type.Union([PrepareAssetJobSchema, PrepareVersionJobSchema, GenerateVersionJobSchema]);
export type Job = PrepareAssetJob | PrepareVersionJob | GenerateVersionJob;
export type JobType = Job['type'];
export const JOB_TYPES: readonly JobType[] = ['prepare-asset', 'prepare-version', 'generate-version'];

const AssetErr = Type.Object({ error_code: Lit(ASSET_ERROR_CODES), detail: Type.String() });
const VersionErr = Type.Object({ error_code: Lit(VERSION_ERROR_CODES), detail: Type.String() });
const EvBase = { v: Type.Literal(1), job_id: Type.String(), asset_id: Type.String(), at: Type.String() };

export const WorkerEventSchema = Type.Union([
  Type.Object({ ...EvBase, type: Type.Literal('progress'), job_type: Type.String(), version_id: Type.Optional(Type.String()), stage: Type.String(), fraction: Type.Number({ minimum: 0, maximum: 1 }) }),
  Type.Object({ ...EvBase, type: Type.Literal('stage_done'), job_type: Type.String(), version_id: Type.Optional(Type.String()), stage: Type.String(), cached: Type.Boolean(), seconds: Type.Number() }),
  Type.Object({
    ...EvBase,
    type: Type.Literal('asset_prepared'),
    duration: Type.Number(),
    source_video_key: Type.String(),
    thumbnail_key: Type.Optional(Type.String()),
    transcript_key: Type.String(),
  }),
  Type.Object({ ...EvBase, type: Type.Literal('asset_failed'), error: AssetErr }),
  Type.Object({ ...EvBase, type: Type.Literal('version_prepared'), version_id: Type.String(), script_key: Type.String() }),
  Type.Object({ ...EvBase, type: Type.Literal('version_failed'), version_id: Type.String(), error: VersionErr }),
  Type.Object({
    ...EvBase,
    type: Type.Literal('version_generated'),
    version_id: Type.String(),
    generation: Type.Integer(),
    result_video_key: Type.String(),
    result_audio_key: Type.String(),
    /** Optional separate tracks. */
    speech_key: Type.Optional(Type.String()),
    background_key: Type.Optional(Type.String()),
    duration: Type.Number(),
    /** The engine every stage ran for this result (prepare's, translation's and generation's), see EngineRecordSchema. */
    engines: Type.Optional(EngineRecordsSchema),
    /** The quality report's blob key and its summary counts (QualitySummarySchema). */
    quality: Type.Optional(Type.Intersect([Type.Object({ report_key: Type.String() }), QualitySummarySchema])),
  }),
  Type.Object({ ...EvBase, type: Type.Literal('version_generate_failed'), version_id: Type.String(), generation: Type.Integer(), error: VersionErr }),
]);
export type WorkerEvent = Static<typeof WorkerEventSchema>;
export type WorkerEventType = WorkerEvent['type'];

const compiled = new Map<TSchema, ReturnType<typeof TypeCompiler.Compile>>();
function checker(schema: TSchema) {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

/** Validate a value against a schema; ValidationError lists the first errors with their paths. */
export function validate<T>(schema: TSchema, value: unknown, what = 'value'): T {
  const c = checker(schema);
  if (c.Check(value)) return value as T;
  const errs = [...c.Errors(value)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
  throw new ValidationError(`invalid ${what}: ${errs.join('; ')}`, { details: { errors: errs } });
}

const JOB_SCHEMAS: Record<JobType, TSchema> = {
  'prepare-asset': PrepareAssetJobSchema,
  'prepare-version': PrepareVersionJobSchema,
  'generate-version': GenerateVersionJobSchema,
};

function variant(union: TSchema, value: unknown): TSchema | undefined {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  return ((union as unknown as { anyOf: TSchema[] }).anyOf ?? []).find(
    (s) => (s as unknown as { properties: { type: { const: unknown } } }).properties.type.const === type,
  );
}

/** Validate a job; the `type` field picks the schema so errors name the offending field. */
export function parseJob(value: unknown): Job {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  const schema = typeof type === 'string' ? JOB_SCHEMAS[type as JobType] : undefined;
  if (!schema) throw new ValidationError(`invalid job: /type must be one of ${JOB_TYPES.join(', ')}`, { field: 'type' });
  return validate<Job>(schema, value, `${type} job`);
}

export function parseWorkerEvent(value: unknown): WorkerEvent {
  const schema = variant(WorkerEventSchema, value);
  if (!schema) throw new ValidationError('invalid worker event: unknown /type', { field: 'type' });
  return validate<WorkerEvent>(schema, value, 'worker event');
}

export function jobSubject(type: JobType): string {
  return `${JOB_SUBJECT_PREFIX}.${type}`;
}

export function eventSubject(assetId: string): string {
  return `${EVENT_SUBJECT_PREFIX}.${assetId}`;
}

/** Conventional blob keys of an asset and its versions. */
export const blobKeys = {
  sourceUpload: (assetId: string) => `assets/${assetId}/upload/source`,
  backgroundUpload: (assetId: string) => `assets/${assetId}/upload/background`,
  speechUpload: (assetId: string) => `assets/${assetId}/upload/speech`,
  sourceVideo: (assetId: string) => `assets/${assetId}/source.mp4`,
  thumbnail: (assetId: string) => `assets/${assetId}/thumbnail.jpg`,
  transcript: (assetId: string) => `assets/${assetId}/transcript.json`,
  artifact: (assetId: string, stage: string, hash: string, file: string) => `assets/${assetId}/artifacts/${stage}-${hash}/${file}`,
  script: (versionId: string) => `versions/${versionId}/script.json`,
  resultVideo: (versionId: string, generation: number) => `versions/${versionId}/gen-${generation}/result.mp4`,
  resultAudio: (versionId: string, generation: number) => `versions/${versionId}/gen-${generation}/result.m4a`,
  /** The quality report of a generation (dub.quality-report/1). */
  qualityReport: (versionId: string, generation: number) => `versions/${versionId}/gen-${generation}/report.json`,
  /**
   * Before re-dub state moved out of the result prefix: where a generation's mix state was (read
   * only as a fallback for generations made before; revise removes it with the result).
   */
  mixState: (versionId: string, generation: number) => `versions/${versionId}/gen-${generation}/mix-state.json`,
  /** A generation's results (video, audio, report): what revise removes. Nothing else lives here. */
  resultPrefix: (versionId: string) => `versions/${versionId}/gen-`,
  /**
   * A generation's re-dub state (internal): what the version's next generation updates from
   * (mix state, loudness normalization, AAC and lips chunk identities). Outside the result prefix,
   * so revise keeps it; removed when a later generation of the version supersedes it.
   */
  redubState: (assetId: string, versionId: string, generation: number) => `assets/${assetId}/redub/${versionId}/gen-${generation}.json`,
  /** A generation in progress (its start time): chunk collection waits while one is. */
  redubRunning: (assetId: string, versionId: string, generation: number) => `assets/${assetId}/redub/${versionId}/running-${generation}.json`,
  /** Every version's re-dub state of an asset. */
  redubPrefix: (assetId: string) => `assets/${assetId}/redub/`,
};

/** The blob keys of one generation of a version (what generate-version reads and writes), resolved once from its job. */
export interface GenerationBlobKeys {
  /** The asset's source video (prepare-asset's). */
  sourceVideo: string;
  /** The asset's transcript (prepare-asset's). */
  transcript: string;
  /** The version's (edited) script: the job's script_key. */
  script: string;
  resultVideo: string;
  resultAudio: string;
  qualityReport: string;
}

/** Every key blobKeys gives for this generation of the job's version, in one lookup. */
export function generationBlobKeys(job: Pick<GenerateVersionJob, 'asset_id' | 'version_id' | 'generation' | 'script_key'>): GenerationBlobKeys {
  const { asset_id: assetId, version_id: versionId, generation } = job;
  return {
    sourceVideo: blobKeys.sourceVideo(assetId),
    transcript: blobKeys.transcript(assetId),
    script: job.script_key,
    resultVideo: blobKeys.resultVideo(versionId, generation),
    resultAudio: blobKeys.resultAudio(versionId, generation),
    qualityReport: blobKeys.qualityReport(versionId, generation),
  };
}
