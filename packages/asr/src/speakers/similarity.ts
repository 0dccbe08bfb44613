/**
 * Speaker similarity of two clips: one vector per clip from a speaker-embedding engine and the
 * cosine of the two. With the `onnx` engine (WeSpeaker) the vector is a neural speaker embedding
 * and the cosine a verification score; with `mfcc` it is the raw mean and standard deviation of
 * the clip's MFCCs, a timbre statistic that channel, level and text move as much as the voice:
 * its cosine is reported as `mfcc_stats_cosine` and has no calibrated same-speaker threshold.
 */
import { resolveContext, type PartialContext } from '@dub/core';
import { createEngineEnv, type EngineEnvOptions } from '../engine-env.js';
import { withSpeechAudio, type AudioInput, type SpeechAudioOptions } from '../speech-audio.js';
import { DEFAULT_THRESHOLDS } from './diarize.js';
import { resolveMfccStatsOptions, type MfccStatsOptions } from './mfcc-stats.js';
import { resolveOnnxEmbeddingOptions, type OnnxEmbeddingOptions } from './onnx-embedding.js';
import { createSpeakerEmbedding, type EmbeddingEngineId } from './registry.js';
import type { SpeakerEmbeddingEngine } from './types.js';

/** What a cosine of two vectors of this engine means. */
export type SimilarityKind = 'speaker_embedding_cosine' | 'mfcc_stats_cosine';

export const SIMILARITY_KINDS: Readonly<Record<EmbeddingEngineId, SimilarityKind>> = { onnx: 'speaker_embedding_cosine', mfcc: 'mfcc_stats_cosine' };

/**
 * Cosine similarity under which two clips count as different speakers, per engine: for `onnx`,
 * 1 - the diarizer's clustering distance (DEFAULT_THRESHOLDS.onnx = 0.6, so 0.4), the same line
 * the diarizer draws between two speakers; for `mfcc` none (null): the raw statistics of any two
 * voices score high and are not a verification score.
 */
export const SIMILARITY_THRESHOLDS: Readonly<Record<EmbeddingEngineId, number | null>> = { onnx: Math.round((1 - DEFAULT_THRESHOLDS.onnx) * 1000) / 1000, mfcc: null };

export interface SpeakerEmbedderOptions extends EngineEnvOptions, SpeechAudioOptions {
  /** `mfcc` (default, no weights) or `onnx` (WeSpeaker). */
  embedding?: EmbeddingEngineId;
  mfcc?: MfccStatsOptions;
  onnx?: OnnxEmbeddingOptions;
}

export interface SpeakerEmbedder {
  readonly engine: EmbeddingEngineId;
  readonly kind: SimilarityKind;
  /** Same-speaker threshold of the cosine, or null when the engine has none. */
  readonly threshold: number | null;
  /** One vector for the whole clip (16 kHz mono after conversion). */
  embed(input: AudioInput, context?: PartialContext): Promise<Float32Array>;
  close(): Promise<void>;
}

/** An embedder that keeps its engine (and ONNX session) open across clips. */
export async function createSpeakerEmbedder(options: SpeakerEmbedderOptions = {}, context: PartialContext = {}): Promise<SpeakerEmbedder> {
  const ctx = resolveContext(context);
  const id = options.embedding ?? 'mfcc';
  const envOptions: EngineEnvOptions = { ...(options.models ? { models: options.models } : {}), ...(options.sessions ? { sessions: options.sessions } : {}), ...(options.device ? { device: options.device } : {}), ...(options.threads !== undefined ? { threads: options.threads } : {}) };
  const audioOptions: SpeechAudioOptions = { ...(options.tmpDir ? { tmpDir: options.tmpDir } : {}), ...(options.ffmpegPath ? { ffmpegPath: options.ffmpegPath } : {}), ...(options.ffprobePath ? { ffprobePath: options.ffprobePath } : {}) };
  const { env, release } = createEngineEnv(envOptions, ctx.logger);
  let engine: SpeakerEmbeddingEngine;
  try {
    engine = id === 'onnx' ? await createSpeakerEmbedding('onnx', { onnx: resolveOnnxEmbeddingOptions(options.onnx) }, env) : await createSpeakerEmbedding('mfcc', { mfcc: resolveMfccStatsOptions(options.mfcc) }, env);
  } catch (e) {
    await release();
    throw e;
  }
  return {
    engine: id,
    kind: SIMILARITY_KINDS[id],
    threshold: SIMILARITY_THRESHOLDS[id],
    async embed(input, c = {}) {
      return withSpeechAudio(input, audioOptions, resolveContext(c), async (audio) => engine.embed(await audio.read(0, audio.frames)));
    },
    close: release,
  };
}

/** Cosine of two vectors (0 when either is all zeros). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vectors of different lengths (${a.length}, ${b.length})`);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}
