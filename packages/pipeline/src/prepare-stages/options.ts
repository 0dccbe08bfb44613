/**
 * The options of a preparation, resolved once when it starts: the media limits of the job and
 * the engine of each stage (the option, else its DUB_*_ENGINE variable, else auto). An unknown
 * engine in the environment is refused here, before any stage ("is not an engine").
 */
import type { PrepareAssetJob } from '@dub/core';
import { engineChoiceFromEnv, type EngineChoice } from '../engine-choice.js';
import type { MediaInputOptions } from '../media-input.js';
import type { PrepareStages } from '../stages.js';

export interface PrepareAssetOptions {
  stages?: Partial<PrepareStages>;
  /** Time limit of connecting to a media URL and of idle body reads (default 60 s). */
  fetchTimeoutMs?: number;
  /** Speaker engine (default: DUB_SPEAKER_ENGINE, else auto: WeSpeaker when installed, else MFCC). */
  speakerEngine?: EngineChoice['speaker'];
  /** Speech recognition engine (default: DUB_ASR_ENGINE, else auto: Whisper when installed and it speaks the locale, else pocketsphinx for English). */
  asrEngine?: EngineChoice['asr'];
  /** Voice activity engine (default: DUB_VAD_ENGINE, else auto: Silero when installed, else energy). */
  vadEngine?: EngineChoice['vad'];
  /** Separation engine (default: DUB_SEPARATION_ENGINE, else auto: HTDemucs when installed, else none). Clean tracks given with the asset replace it. */
  separationEngine?: EngineChoice['separation'];
}

export interface ResolvedPrepareOptions {
  /** The source media: the job's size limit (max_media_bytes), private URLs, the fetch time limit. */
  readonly media: MediaInputOptions;
  /** The given clean tracks (speech, background): as the media, without its size limit. */
  readonly givenMedia: MediaInputOptions;
  /** The job's limit of the trimmed duration (max_video_seconds). */
  readonly maxVideoSeconds: number | undefined;
  /** Each stage's engine choice (auto or an id; resolved against what is installed by its stage). */
  readonly engines: Pick<EngineChoice, 'vad' | 'separation' | 'asr' | 'speaker'>;
}

/** Time limit of connecting to a media URL and of idle body reads, by default (ms). */
export const FETCH_TIMEOUT_MS = 60_000;

export function resolvePrepareOptions(job: PrepareAssetJob, opts: PrepareAssetOptions, env: Record<string, string | undefined> = process.env): ResolvedPrepareOptions {
  const limits = job.limits ?? {};
  const media: MediaInputOptions = { maxBytes: limits.max_media_bytes, allowPrivate: limits.allow_private_urls === true, fetchTimeoutMs: opts.fetchTimeoutMs ?? FETCH_TIMEOUT_MS };
  const choice = engineChoiceFromEnv(env);
  return {
    media,
    givenMedia: { ...media, maxBytes: undefined },
    maxVideoSeconds: limits.max_video_seconds,
    engines: {
      vad: opts.vadEngine ?? choice.vad,
      separation: opts.separationEngine ?? choice.separation,
      asr: opts.asrEngine ?? choice.asr,
      speaker: opts.speakerEngine ?? choice.speaker,
    },
  };
}
