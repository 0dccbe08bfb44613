export * from './artifacts.js';
export { StageRunner, type StagePlan } from './stage-runner.js';
export { LocalFiles, copyBlob } from './local-files.js';
export { resolveMedia, type MediaField, type ResolvedMedia, type MediaInputOptions } from './media-input.js';
export { defaultStages, type PrepareStages, type StageEnv, type Region, type SpeechRegions, type RecognizedSegment, type Recognition, type SpeakerTurns } from './stages.js';
export { buildTranscript, noSpeechNotes, noSpeechWindows, segmentId } from './transcript.js';
export { prepareAsset, prepareVersionJobId, type PrepareAssetOptions, type PrepareAssetResult } from './prepare-asset.js';
export { prepareVersion, type PrepareVersionOptions, type PrepareVersionResult } from './prepare-version.js';
export { createJobHandlers, generateOptionsFromEnv, jobHandlers, type JobHandlersOptions } from './handlers.js';
export { generateVersion, type GenerateVersionOptions, type GenerateVersionResult } from './generate.js';
export { placeLines, type Placement, type PlacementLine, type PlacementOptions } from './generate-placement.js';
export { BACK_TRANSCRIPTION_PACK_GAP, BACK_TRANSCRIPTION_WHISPER, decodeUnits, measureQuality, measureQualityLines, speechRmsDbfs, wordsByLine, wordsOverLines, type MeasuredLines, type QualityLine, type QualityLinesInput, type QualityMeasurements } from './generate-quality.js';
export { buildQualityReport, type ReportInput } from './generate-quality-report.js';
export {
  asrEngineIdentity,
  checkModelPolicy,
  engineChoiceFromEnv,
  generateOptionsOf,
  engineHost,
  resolveEngine,
  speakerEngineOf,
  ASR_ENGINE_IDS,
  SEPARATION_ENGINE_IDS,
  SPEAKER_ENGINE_IDS,
  type AsrEngineChoice,
  type AsrEngineId,
  type EngineChoice,
  type EngineGenerateOptions,
  type EngineHostOf,
  type EngineStage,
  type PolicyJob,
  type ResolvedStageEngine,
  type SeparationEngineId,
  type SpeakerEngine,
  type SpeakerEngineId,
  type StageEngine,
} from './engine-choice.js';
export { warmup, type WarmupRuntime } from './warmup.js';
export { redubSegment, previewSpeakerVoice, REDUB_MAX_TEXT, type RedubSegmentRequest, type RedubSegmentResult, type PreviewVoiceRequest, type PreviewVoiceResult } from './redub.js';
export { separationGraph } from './separation-graph.js';
export { PairChecker, pairRefusalMessage, type PairCapabilities, type PairCheckOptions, type PairJob, type PairRefusal, type PairStage, type PairTarget } from './pair-support.js';
// the DUB_ONNX_* settings, checked at a command's start (dub run, serve, worker, doctor)
export { checkOnnxEnv } from '@dub/onnx';
