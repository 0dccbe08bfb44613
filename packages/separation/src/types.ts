/**
 * What a separation engine takes and gives: planar audio in memory, or a WAV file streamed in
 * windows to two WAV files.
 */
import type { Engine, EngineHost, PartialContext, StageContext } from '@dub/core';
import type { PlanarAudio, WavWriteFormat } from '@dub/media';
import type { TimeSpan } from './background.js';

export type { PlanarAudio } from '@dub/media';

/** What the separation engines' `supports` and `create` see: where models are, and the context an engine logs to. */
export interface SeparationEngineHost extends EngineHost {
  ctx?: StageContext;
  /** The device the engine will run on (cpu, cuda, cuda:N); `auto` takes htdemucs-int8 only on the CPU (unset counts as CPU). */
  device?: string | undefined;
}

/** A WAV file to separate, and where the two tracks go. */
export interface WavSeparationInput {
  /** The mix, a WAV file (any rate and channel count; converted when the engine needs it). */
  path: string;
  speechPath: string;
  backgroundPath: string;
  /** Sample encoding of the written tracks (default float32: no clipping, no quantization). */
  format?: WavWriteFormat;
}

export interface SeparatedAudio {
  speech: PlanarAudio;
  background: PlanarAudio;
}

/** Paths of the two tracks. */
export interface SeparatedFiles {
  speech: string;
  background: string;
}

export type SeparationInput = PlanarAudio | WavSeparationInput;

/** Per-call options of `SeparationEngine.separate`. */
export interface SeparationRunOptions {
  /**
   * Run the model only on these spans (seconds; see `planSeparation`): outside them the mix is
   * the background and the speech is silence. Default: everywhere.
   */
  spans?: readonly TimeSpan[];
}
export type SeparationOutput<I extends SeparationInput> = I extends WavSeparationInput ? SeparatedFiles : SeparatedAudio;

/**
 * A speech/background separation engine. Created once (it owns its ONNX session) and used for
 * many inputs, one at a time; `dispose()` releases the session.
 */
export interface SeparationEngine extends Engine {
  /** The sample rate the engine works at; in-memory input must have it. */
  readonly sampleRate: number;
  /** Channels of the outputs. */
  readonly channels: number;
  /**
   * Separate `input`. In-memory audio must be at `sampleRate` (mono is duplicated, channels past
   * the second are ignored); a WAV file is converted when it is not. Outputs have the input's
   * length. Progress is reported per window, the signal is checked between windows.
   */
  separate<I extends SeparationInput>(input: I, ctx?: PartialContext, opts?: SeparationRunOptions): Promise<SeparationOutput<I>>;
}

export function isWavInput(input: SeparationInput): input is WavSeparationInput {
  return typeof (input as WavSeparationInput).path === 'string';
}
