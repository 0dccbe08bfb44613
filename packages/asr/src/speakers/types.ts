import type { Engine } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';

/** Turns 16 kHz mono speech into fixed-size speaker vectors (one per window). */
export interface SpeakerEmbeddingEngine extends Engine {
  /** The embedding kind (`onnx`, `mfcc`: its SPEAKER_ENGINES entry's `embedding`). */
  readonly id: string;
  /** Vector length. */
  readonly dimension: number;
  /** Whether the vectors are raw statistics that need standardizing across the file before cosine scoring. */
  readonly needsStandardization: boolean;
  embed(samples: Float32Array): Promise<Float32Array>;
}

export type SpeakerEmbeddingFactory<O> = (options: O, env: EngineEnv) => Promise<SpeakerEmbeddingEngine>;
