/**
 * @dub/core's public surface, named one by one (no `export *`): what each module gives the other
 * packages is listed here, so a new export is a choice made in this file.
 */
export {
  AbortedError, ASSET_ERROR_CODES, AssetError, type AssetErrorCode, asStorageError, ConflictError, DubError,
  type DubErrorOptions, EngineUnavailableError, errnoOf, type ErrorCode, isDiskFault, isDubError, ModelError,
  ModelMissingError, NotFoundError, ProcessError, SrtParseError, StorageError, throwIfAborted, TimeoutError,
  toDubError, UpstreamError, ValidationError, VERSION_ERROR_CODES, VersionError, type VersionErrorCode
} from './errors.js';
export {
  getLocale, isSourceLocale, isTargetLocale, languageOf, type LocaleInfo, LOCALES, type Script,
  SOURCE_LOCALES, TARGET_LOCALES
} from './locales.js';
export {
  type Asset, ASSET_STATUSES, type AssetErrorObject, AssetErrorSchema, AssetSchema, type AssetStatus,
  AUTO_GENERATE_VALUES, type AutoGenerate, type CallbackEvent, type ErrorBody, ErrorBodySchema, EVENT_TYPES,
  type EventType, GENERATE_MODES, type GenerateMode, type LanguageEntry, LanguageEntrySchema, LIPS_MODELS,
  type LipsModel, newId, nowIso, SRT_LOCALITIES, SRT_PROFILES, type SrtLocality, type SrtProfileName,
  type Version, VERSION_STATUSES, type VersionErrorObject, VersionErrorSchema, VersionSchema,
  type VersionStatus, type VersionSummary, VersionSummarySchema
} from './domain.js';
export {
  deriveAssetStatus, type TransitionAnswer, VERSION_TRANSITIONS, versionTransition, type VersionTransition,
  type VersionTrigger
} from './state.js';
export {
  foldCase, type Glossary, GLOSSARY_LIMITS, type GlossaryEntry, GlossaryEntrySchema, GlossaryLineSchema,
  type GlossaryLineTerm, GlossaryLineTermSchema, GlossarySchema, glossaryTarget, mergeGlossaries,
  parseGlossary, type VersionGlossaryBody
} from './glossary.js';
export {
  type ScriptSegment, ScriptSegmentSchema, type Speaker, type SpeakerAdjustment, SpeakerAdjustmentSchema,
  SpeakerCountMethodSchema, SpeakerSchema, type SpeakerVoice, SpeakerVoiceSchema, type Transcript,
  RemovedTextSchema, type RemovedText, TranscriptSchema, type TranscriptSegment, TranscriptSegmentSchema, type TranscriptSeparation,
  TranscriptSeparationSchema, type VersionScript, VersionScriptSchema, type Word, WordSchema
} from './script.js';
export {
  LineTurnSchema, PLACEMENT_DEFAULTS, PLACEMENT_RESOLUTIONS, type PlacementResolution, QUALITY_FLAGS,
  QUALITY_REPORT_SCHEMA, QUALITY_THRESHOLDS, type QualityFlag, type QualityReport, QualityReportSchema,
  type QualitySegment, QualitySegmentSchema, type QualitySummary, QualitySummarySchema,
  RATE_RATIO_THRESHOLDS, ShorteningSchema, TURN_DEFAULTS
} from './quality-report.js';
export type { WaveformBody } from './waveform.js';
export {
  blobKeys, EVENT_SUBJECT_PREFIX, EVENTS_STREAM, eventSubject, type GenerateOptions, GenerateOptionsSchema,
  type GenerationBlobKeys, generationBlobKeys,
  type GenerateVersionJob, GenerateVersionJobSchema, type Job, JOB_SUBJECT_PREFIX, JOB_TYPES, JOBS_STREAM,
  JobSchema, jobSubject, type JobType, type Limits, LimitsSchema, type MediaRef, MediaRefSchema, parseJob,
  parseWorkerEvent, type PrepareAssetJob, PrepareAssetJobSchema, type PrepareVersionJob,
  PrepareVersionJobSchema, validate, type VersionSpec, VersionSpecSchema, type WorkerEvent,
  WorkerEventSchema, type WorkerEventType
} from './jobs.js';
export { type BlobStat, type BlobStore, checkBlobKey, FsBlobStore, writeStreamToFile } from './blob.js';
export { type DeviceChoice, type DubConfig, loadConfig, parseDevice } from './config.js';
export { createLogger, type Logger, silentLogger } from './logger.js';
export {
  type PartialContext, type Progress, reportProgress, resolveContext, type StageContext, subContext
} from './context.js';
export {
  defaultManifestFile, type DerivedEntry, getModelEntry, inRepoCheckout, isModelAvailable, loadManifest,
  type Manifest, type ModelEntry, type ModelFile, modelsDir, modelSearchPaths, REPO_MODELS_DIR,
  resolveModelFile, type ResolveOptions, type SystemEntry, termsEntries, termsOf, userModelsDir
} from './models.js';
export {
  fetchModels, ensureModel, publishedChecksums, publishedChecksumNames, type FetchedFile,
  type FetchModelsOptions, type NpmPackSource
} from './model-store.js';
export {
  CheckError, checkFile, downloadVerified, hashFile, ModelLock, sha256File, type DownloadOptions,
  type Expected, type LockEntry
} from './model-fetch.js';
export { bpeMerge } from './bpe.js';
export { Crc32, crc32 } from './crc32.js';
export { exitIfStillRunning, type Retrying, retryingOnce, settlesWithin } from './async.js';
export {
  type Commercial, COMMERCIAL_VALUES, licenseId, MODEL_POLICIES, type ModelPolicy, ModelPolicyError,
  modelPolicyFromEnv, type ModelTerms, policyAllows, termsLine, termsProblems
} from './licence.js';
export {
  type EngineRecord, type EngineRecords, EngineRecordSchema, EngineRecordsSchema, licenceWarnings,
  forgetModelHashes, MODEL_HASH_KEEP_MIN_BYTES, modelEngineRecord, modelHashCacheOn, modelHashesDir, modelIdentity, type ModelIdentity, recordTerms,
  type RecordTerms, uncleared
} from './engines.js';
export {
  abortProblem, defineEngineRegistry, type Engine, engineChoiceOf, engineContractProblems, type EngineEntry, type EngineHost, engineLabel,
  type EngineLabel, type EngineModel, engineRecordOf, type EngineRegistry, type EngineRegistryOptions,
  type EngineSupport, type EngineTerms, type EngineWeights, entryTerms, modelEntry, modelSupport, policyOf,
  recordTermsOf, type ResolvedEngine, unknownEngineError
} from './engine-registry.js';
export {
  type EmittedEvent, type EventFeed, type EventSink, type JobHandler, type JobHandlers, type JobQueue,
  type JobRuntime, type SessionStore, type Subscription, type WorkerEventHandler
} from './queue.js';
export { assetErrorCode, failureEvent, versionErrorCode } from './job-failure.js';
export {
  type AddressClass, assertPublicUrl, type CheckedUrl, classifyAddress, isPublicAddress,
  PayloadTooLargeError, readBody, safeFetch, type SafeFetchOptions, type SafeResponse, UnsafeUrlError,
  type UrlSafetyOptions
} from './net.js';

