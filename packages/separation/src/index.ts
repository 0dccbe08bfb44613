export { separate } from './separate.js';
export { fromGivenTracks, defaultTrackPath, type GivenTracksInput, type FromGivenTracksOptions } from './given-tracks.js';
export {
  resolveSeparateOptions,
  resolveEngineOptions,
  type SeparateOptions,
  type ResolvedSeparateOptions,
  type SeparationEngineOptions,
  type ResolvedEngineOptions,
  type SeparationConfig,
  type GivenTracks,
  type SeparatePlan,
} from './options.js';
export { resolveHtdemucsGraph, splitChoiceFromEnv, HTDEMUCS_SPLIT_FORMAT, type HtdemucsGraph, type HtdemucsGraphOptions, type SplitPlan, type SplitPart } from './engines/htdemucs-graph.js';
export {
  SEPARATION_ENGINES,
  HTDEMUCS_MODEL,
  HTDEMUCS_INT8_MODEL,
  createSeparationEngine,
  loadSeparationEngine,
  type SeparationEngineHost,
} from './registry.js';
export { isSeparationEngineId, SEPARATION_ENGINE_IDS, type SeparationEngineId } from './engine-ids.js';
export {
  isWavInput,
  type SeparationEngine,
  type SeparationInput,
  type SeparationOutput,
  type SeparatedAudio,
  type SeparatedFiles,
  type WavSeparationInput,
  type SeparationRunOptions,
  type PlanarAudio,
} from './types.js';
export { SegmentedSeparationEngine } from './segmented-engine.js';
export { SegmentRunner, type SegmentModel, type SegmentSinks } from './segment-runner.js';
export { planarSource, MemorySink, type AudioSink, type AudioSource } from './audio-io.js';
export { planWindows, transitionWeight, type SegmentWindow, type WindowPlan } from './windowing.js';
export { Fft, hannWindow } from '@dub/media';
export { DemucsSpectrogram } from './dsp/demucs-spectrogram.js';
export { SpleeterSpectrogram, SPLEETER_BINS, SPLEETER_FRAMES, SPLEETER_HOP, SPLEETER_NFFT } from './dsp/spleeter-spectrogram.js';
export { SPLEETER_MODEL } from './engines/spleeter-entry.js';
export { planSeparation, frameStats, mergeSpans, DEFAULT_BACKGROUND_THRESHOLDS, type SeparationPlan, type SeparationMode, type BackgroundMeasurement, type BackgroundOptions, type BackgroundThresholds, type TimeSpan } from './background.js';
export { passThrough, runSpans } from './plan-runner.js';
export { keepOutsideSpeech, keptOutsideSpeech, replacedRegions, resolveKeep, SpeechWeight, KEEP_OUTSIDE_SPEECH_DEFAULTS, type KeepOutsideSpeechOptions, type KeptOutsideSpeech } from './keep-outside-speech.js';

/** Model files for library users: fetch (ensureModel, fetchModels) into modelsDir(), shared with the CLI (see @dub/core). */
export { ensureModel, fetchModels, modelsDir, resolveModelFile, type FetchedFile } from '@dub/core';
