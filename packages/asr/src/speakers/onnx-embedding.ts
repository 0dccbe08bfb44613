/**
 * Neural speaker embeddings over ONNX (WeSpeaker ResNet / CAM++ exports): Kaldi-compatible fbank
 * (80 mel, 25/10 ms, Povey window, no dither, samples scaled to 16-bit range) with mean
 * normalization over the window -> input `feats` f32[1, T, 80] -> output `embs` f32[1, E].
 */
import { ModelError, resolveModelFile } from '@dub/core';
import { tensorF32, type OnnxModel } from '@dub/onnx';
import { FbankExtractor, type FbankOptions } from '../dsp/kaldi-fbank.js';
import type { SpeakerEmbeddingEngine, SpeakerEmbeddingFactory } from './types.js';

export interface OnnxEmbeddingOptions {
  /** Manifest id (default `wespeaker-resnet34`). */
  model?: string;
  /** File name inside the model folder (default `voxceleb_resnet34_LM.onnx`). */
  fileName?: string;
  /** Explicit path (overrides the resolver). */
  file?: string;
  /** Input/output names (default: `feats`/`embs`, else the model's only input/output). */
  inputName?: string;
  outputName?: string;
  fbank?: FbankOptions;
}

export interface ResolvedOnnxEmbeddingOptions {
  model: string;
  fileName: string;
  file: string | undefined;
  inputName: string;
  outputName: string;
  fbank: FbankOptions;
}

export function resolveOnnxEmbeddingOptions(o: OnnxEmbeddingOptions = {}): ResolvedOnnxEmbeddingOptions {
  return {
    model: o.model ?? 'wespeaker-resnet34',
    fileName: o.fileName ?? 'voxceleb_resnet34_LM.onnx',
    file: o.file,
    inputName: o.inputName ?? 'feats',
    outputName: o.outputName ?? 'embs',
    fbank: { nMels: 80, inputScale: 32768, cmn: true, ...o.fbank },
  };
}

function ioName(names: readonly string[], wanted: string, what: string, file: string): string {
  if (names.includes(wanted)) return wanted;
  if (names.length === 1) return names[0]!;
  throw new ModelError(`${file}: no ${what} named "${wanted}" (has ${names.join(', ')})`);
}

class OnnxEmbedding implements SpeakerEmbeddingEngine {
  readonly id = 'onnx';
  readonly needsStandardization = false;
  dimension = 0;
  private readonly fbank: FbankExtractor;
  constructor(private readonly model: OnnxModel, private readonly input: string, private readonly output: string, fbank: FbankOptions) {
    this.fbank = new FbankExtractor(fbank);
  }
  async embed(samples: Float32Array): Promise<Float32Array> {
    const f = this.fbank.compute(samples);
    if (f.frames === 0) throw new RangeError(`a speaker window needs at least ${this.fbank.frameLength} samples`);
    const out = await this.model.run({ [this.input]: tensorF32(f.data, [1, f.frames, f.nMels]) });
    const e = out[this.output]!;
    this.dimension = (e.dims as number[])[e.dims.length - 1]!;
    return (e.data as Float32Array).slice(0, this.dimension);
  }
}

export const createOnnxEmbedding: SpeakerEmbeddingFactory<ResolvedOnnxEmbeddingOptions> = async (o, env) => {
  const file = o.file ?? resolveModelFile(o.model, o.fileName, env.models);
  const model = await env.sessions.get(file, { device: env.device, threads: env.threads, logger: env.logger });
  return new OnnxEmbedding(model, ioName(model.inputNames, o.inputName, 'input', file), ioName(model.outputNames, o.outputName, 'output', file), o.fbank);
};
