import type { Engine } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';

/** A stretch of speech, in seconds from the start of the audio. */
export interface SpeechRegion {
  start: number;
  end: number;
  /** Mean speech probability over the region's frames. */
  probability: number;
}

export interface SpeechDetection {
  engine: string;
  /** Seconds of audio analysed. */
  duration: number;
  /** Seconds per probability frame. */
  frameSeconds: number;
  /** Speech probability per frame. */
  probabilities: Float32Array;
  regions: SpeechRegion[];
}

/** One audio's pass through a VAD: frames must be fed in order. */
export interface VadStream {
  /**
   * Speech probabilities of the next frames: `samples.length` must be a multiple of the
   * engine's `frameSamples` (the caller zero-pads the last frame).
   */
  process(samples: Float32Array): Promise<Float32Array>;
}

/** A voice activity engine (its `dispose()` releases nothing the env's session cache does not own: a no-op for both engines here). */
export interface VadEngine extends Engine {
  /** Samples at 16 kHz per decision frame. */
  readonly frameSamples: number;
  createStream(): VadStream;
}

export type VadEngineFactory = (env: EngineEnv) => Promise<VadEngine>;
