export * from './artifacts.js';
export { StageRunner, type StagePlan } from './stage-runner.js';
export { LocalFiles, copyBlob } from './local-files.js';
export { resolveMedia, type MediaField, type ResolvedMedia, type MediaInputOptions } from './media-input.js';
export { defaultStages, type PrepareStages, type StageEnv, type Region, type SpeechRegions, type RecognizedSegment, type Recognition, type SpeakerTurns } from './stages.js';
export { buildTranscript, segmentId } from './transcript.js';
export { prepareAsset, prepareVersionJobId, type PrepareAssetOptions, type PrepareAssetResult } from './prepare-asset.js';
export { prepareVersion, type PrepareVersionOptions, type PrepareVersionResult } from './prepare-version.js';
export { createJobHandlers, jobHandlers, type JobHandlersOptions } from './handlers.js';
