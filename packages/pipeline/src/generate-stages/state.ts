/**
 * The state a generation's stages read and add to (generate.ts runs them with runStages): what
 * the setup gives every stage (the runtime, the runner, the cache, the resolved options, the job
 * resolved once), then what each stage adds, in the order of the list. A stage's `inputs` name the fields
 * it reads that an earlier stage sets.
 */
import type { EngineRecord, EngineRecords, JobRuntime, QualityReport } from '@dub/core';
import type { MediaToolOptions } from '@dub/media';
import type { ArtifactCache, StageResult } from '../artifacts.js';
import type { PipelineStage } from '../pipeline-stage.js';
import type { StageRunner } from '../stage-runner.js';
import type { ResolvedGenerateOptions } from '../generate-options.js';
import type { ResolvedGenerateJob } from '../generate-job.js';
import type { MeasuredLines, QualityMeasureInput } from '../generate-quality.js';
import type { MixUpdate, QualityPlan, QualityStageResult } from '../generate-quality-stage.js';
import type { PlacedSegment, SegmentArtifact, SynthesisResult } from '../generate-synthesis.js';
import type { LoudnessNormalization, MixState, RedubCollection } from '../redub-state.js';

/**
 * The version's latest earlier completed generation that aimed at the same target with the same
 * mix: its loudness normalization (a re-dub keeps its gain while within tolerance) and its mix
 * state while the blobs that state names are there (mix.ts: previousNormalization).
 */
export type PreviousGeneration = LoudnessNormalization & { generation: number; mixState?: MixState };

/** The mix stage's value (cached with mix.wav). */
export interface MixStageValue {
  inputIntegrated: number;
  frames: number;
  gainDb: number;
  exactGainDb: number;
  gainKept: boolean;
  /** Replace mixes: whether the previous generation's mix was updated near the changed speech (frames computed again), or why not. */
  update?: MixUpdate;
}

/** The audio stage's value: how the dubbed track's AAC chunks were made. */
export interface AudioStageValue {
  chunks: { total: number; encoded: number; reused: number };
  encode: string;
  fallback?: string;
  identities?: { settings: string; frames: number; hashes: string[] };
  /** Chunks whose identity came from the previous generation's (their samples were not read). */
  hashesReused?: number;
}

/** A placed line that has its fitted audio. */
export type VoicedSegment = PlacedSegment & { result: StageResult<SegmentArtifact> };

/**
 * What a stage sets up that the generation's teardown releases when a later stage fails: the
 * TTS engine (synthesis) and the lines' measurements running beside the encode (audio).
 */
export interface GenerateHeld {
  synth?: SynthesisResult;
  linesMeasured?: Promise<MeasuredLines>;
}

export interface GenerateState {
  // Setup (generate.ts).
  /** The job, resolved once (generate-job.ts): its ids, keys, target locale and options. */
  job: ResolvedGenerateJob;
  rt: JobRuntime;
  runner: StageRunner;
  cache: ArtifactCache;
  media: MediaToolOptions;
  /** The generation's temporary folder. */
  work: string;
  /** A local file for a blob key. */
  local: (key: string) => Promise<string>;
  opts: ResolvedGenerateOptions;
  voiceOver: boolean;
  withLips: boolean;
  /** Stops the lines' measurements started beside the encode (the quality stage, or the teardown on failure). */
  earlyLines: AbortController;
  held: GenerateHeld;

  // synthesis
  synth?: SynthesisResult;
  voiced?: VoicedSegment[];
  /** The model files whose sessions the synthesis loaded (the TTS engine's, voice conversion's), with the provider each got. */
  synthSessions?: ReadonlyMap<string, 'cpu' | 'cuda'>;
  // timeline
  speechKey?: string;
  // release-tts (DUB_KEEP_MODELS=0): the sessions released, with their providers (the engine records still name them)
  releasedSessions?: ReadonlyMap<string, 'cpu' | 'cuda'>;
  // quality-plan
  qualityPlan?: QualityPlan;
  // background (replace mixes only)
  backgroundKey?: string;
  // mix
  previous?: PreviousGeneration;
  mixed?: StageResult<MixStageValue>;
  normalization?: LoudnessNormalization;
  // audio
  linesMeasured?: Promise<MeasuredLines>;
  audio?: StageResult<AudioStageValue>;
  audioKey?: string;
  // lips (with_lips): the video muxed (the source's without lips), the lips chunk blobs ([] without lips; null: not known), the engine record
  videoKey?: string;
  lipsChunks?: string[] | null;
  lipsRecord?: EngineRecord;
  // video
  resultMp4?: string;
  /** The dubbed track's loudness, measured while the video is muxed (the quality stage takes it), and what stops it. */
  trackLoudness?: NonNullable<QualityMeasureInput['trackLoudness']>;
  stopTrackLoudness?: AbortController;
  /** What the quality stage keeps of the previous generation's loudness measurement (previousLoudness). */
  prevLoudness?: { previousLoudness: NonNullable<QualityMeasureInput['previousLoudness']> };
  // quality
  quality?: QualityStageResult;
  // publish
  resultVideoKey?: string;
  resultAudioKey?: string;
  // report
  report?: QualityReport;
  reportKey?: string;
  engines?: EngineRecords;
  // redub-state
  collected?: RedubCollection;
}

/** A stage of a generation. */
export type GenerateStage = PipelineStage<GenerateState>;
