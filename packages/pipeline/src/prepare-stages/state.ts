/**
 * What the stages of a preparation share: the job's context (set up once by prepareAsset) and
 * the state each stage reads and adds to (runStages merges what a stage returns). A field is
 * undefined until the stage that sets it has run; `null` means decided and absent (no given
 * track, no separation engine or plan with given tracks).
 */
import type { JobRuntime, PrepareAssetJob, Transcript } from '@dub/core';
import type { MediaInfo } from '@dub/media';
import type { SeparationPlan } from '@dub/separation';
import type { StageResult } from '../artifacts.js';
import type { SpeakerEngine, StageEngine } from '../engine-choice.js';
import type { LocalFiles } from '../local-files.js';
import type { ResolvedMedia } from '../media-input.js';
import type { separationGraph } from '../separation-graph.js';
import type { StageRunner } from '../stage-runner.js';
import type { PrepareStages, Recognition, Region, SpeakerTurns, SpeechRegions, StageEnv } from '../stages.js';
import type { ResolvedPrepareOptions } from './options.js';
import { typedStage } from './typed-stage.js';

/** The ONNX execution provider a model ran on. */
export type Provider = 'cpu' | 'cuda';

/** The job a preparation's stages run for and what they run with (set up once, read by every stage). */
export interface PrepareContext {
  readonly job: PrepareAssetJob;
  readonly rt: JobRuntime;
  /** The stage functions: defaultStages with the embedding's replacements (PrepareAssetOptions.stages). */
  readonly stages: PrepareStages;
  readonly env: StageEnv;
  readonly runner: StageRunner;
  readonly files: LocalFiles;
  readonly options: ResolvedPrepareOptions;
  /** Work a stage started that runs beside the later ones (trim, thumbnail): settled before the job ends. */
  readonly beside: BesideWork;
}

/** The source video blob and the thumbnail's (none when it could not be made). */
export interface SourceVideo {
  sourceVideoKey: string;
  thumbnailKey: string | undefined;
}

export interface PrepareState {
  readonly prep: PrepareContext;
  /** fetch-media: the source media. */
  media?: ResolvedMedia;
  /** probe: what the source holds, the trim window, its duration. */
  info?: MediaInfo;
  range?: Region;
  duration?: number;
  /** trim (pending: runs beside the audio stages): the trimmed video's artifact and its blob. */
  trimmed?: Promise<{ result: StageResult<Region>; sourceVideoKey: string }>;
  /** thumbnail (pending, after the trim): the blobs the versions read; awaited by `transcript`. */
  video?: Promise<SourceVideo>;
  /** audio: the 44.1 kHz stereo mix of the window (`mix.wav`). */
  audio?: StageResult<null>;
  /** fetch-speech, fetch-background: the clean tracks given with the asset. */
  givenSpeech?: ResolvedMedia | null;
  givenBackground?: ResolvedMedia | null;
  /** separation-plan: the engines of VAD and separation (none with given tracks), the plan measured and the plan applied. */
  vadEngine?: StageEngine;
  separationEngine?: StageEngine | null;
  planned?: StageResult<{ vad: SpeechRegions; plan: SeparationPlan }> | null;
  plan?: SeparationPlan | null;
  /** separation: its artifact (speech.wav, background.wav), the model file that ran and its graph. */
  separated?: StageResult<{ engine: string; provider?: Provider }>;
  separationModel?: StageEngine['models'][number] | null;
  separationGraph?: Awaited<ReturnType<typeof separationGraph>> | null;
  /** The blob key of the speech track the later stages read. */
  speechKey?: string;
  /** vad: the speech regions of the speech track. */
  vad?: StageResult<SpeechRegions>;
  /** transcription: the engine (or source_srt) and its segments. */
  asr?: StageEngine;
  recognition?: StageResult<Recognition & { provider?: Provider; runAs?: string[] }>;
  /** speakers: the engine, the turns and each speaker's reference clip blob. */
  speakerEngine?: SpeakerEngine;
  speakers?: StageResult<SpeakerTurns & { provider?: Provider }>;
  referenceKeys?: Record<string, string>;
  /** transcript: the transcript and its blob, and the video blobs it waited for. */
  transcript?: Transcript;
  transcriptKey?: string;
  source?: SourceVideo;
}

/** A preparation stage whose `run` sees its inputs set. */
export const prepareStage = typedStage<PrepareState>();

/**
 * Work started by a stage that runs beside the later ones (the trim and the thumbnail beside the
 * audio analysis). Each promise is settled when the job ends and its failure read: never an
 * unhandled rejection, and nothing of the job still writes into its work directory.
 */
export class BesideWork {
  private readonly settled: Promise<{ error: unknown } | undefined>[] = [];

  add<T>(work: Promise<T>): Promise<T> {
    this.settled.push(
      work.then(
        () => undefined,
        (error: unknown) => ({ error }),
      ),
    );
    return work;
  }

  /** Waits for all of it: the first failure in the order it was started, if any. */
  async failure(): Promise<{ error: unknown } | undefined> {
    let first: { error: unknown } | undefined;
    for (const s of this.settled) {
      const r = await s;
      first ??= r;
    }
    return first;
  }
}

/**
 * The ONNX execution provider a model file's session got in this worker (CUDA may fall back to
 * CPU); on a CPU-only worker, cpu. Undefined when the session is not loaded and the device is a GPU.
 */
export function providerOf(rt: Pick<JobRuntime, 'sessions' | 'config'>, file: string): Provider | undefined {
  return rt.sessions.providers.get(file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined);
}

/** How the sessions of these model files ran other than as shipped (SessionStore.runAs), "<model file>: <how>" each; read before they are released. */
export function runAsOf(rt: Pick<JobRuntime, 'sessions'>, models: readonly { file: string; model: string }[]): string[] {
  return models.flatMap((m) => (rt.sessions.runAs?.get(m.file) ?? []).map((line) => `${m.model}: ${line}`));
}
