/**
 * Neural speaker embeddings over ONNX (WeSpeaker ResNet / CAM++ exports): Kaldi-compatible fbank
 * (80 mel, 25/10 ms, no dither, samples scaled to 16-bit range) with mean normalization over the
 * window -> input `feats` f32[1, T, 80] -> output `embs` f32[1, E]. The analysis window is the
 * one the model was trained with: the `fbank.window` of its entry in models/manifest.json
 * (WeSpeaker: `hamming`, 3D-Speaker CAM++/ERes2Net: `povey`); a model without one gets
 * `hamming`, WeSpeaker's (DEFAULT_EMBEDDING_WINDOW). An explicit `fbank.window` option wins.
 */
import path from 'node:path';
import { getModelEntry, ModelError, resolveModelFile, type Manifest, type ModelEntry } from '@dub/core';
import { tensorF32, type OnnxModel } from '@dub/onnx';
import { FBANK_WINDOWS, FbankExtractor, type FbankOptions, type FbankWindow } from '../dsp/kaldi-fbank.js';
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

/** The window of an embedding model without `fbank.window` in the manifest: WeSpeaker's. */
export const DEFAULT_EMBEDDING_WINDOW: FbankWindow = 'hamming';

/** The fbank window of manifest model `id` (DEFAULT_EMBEDDING_WINDOW when the entry has none or there is no entry). */
export function embeddingWindowOf(id: string, manifest?: Manifest): FbankWindow {
  let entry: ModelEntry | undefined;
  try {
    entry = getModelEntry(id, manifest);
  } catch {
    entry = undefined;
  }
  const w = entry?.fbank?.window;
  if (w === undefined) return DEFAULT_EMBEDDING_WINDOW;
  if (!FBANK_WINDOWS.includes(w)) throw new ModelError(`models/manifest.json: ${id} has fbank.window "${String(w)}" (one of ${FBANK_WINDOWS.join(', ')})`);
  return w;
}

export function resolveOnnxEmbeddingOptions(o: OnnxEmbeddingOptions = {}, manifest?: Manifest): ResolvedOnnxEmbeddingOptions {
  const model = o.model ?? 'wespeaker-resnet34';
  return {
    model,
    fileName: o.fileName ?? 'voxceleb_resnet34_LM.onnx',
    file: o.file,
    inputName: o.inputName ?? 'feats',
    outputName: o.outputName ?? 'embs',
    fbank: { nMels: 80, inputScale: 32768, cmn: true, ...o.fbank, window: o.fbank?.window ?? embeddingWindowOf(model, manifest) },
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
  constructor(private readonly model: OnnxModel, private readonly input: string, private readonly output: string, fbank: FbankOptions, readonly label: string) {
    this.fbank = new FbankExtractor(fbank);
  }
  /** The session belongs to the env's cache (released with the env). */
  async dispose(): Promise<void> {}
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
  return new OnnxEmbedding(model, ioName(model.inputNames, o.inputName, 'input', file), ioName(model.outputNames, o.outputName, 'output', file), o.fbank, o.file ? `speaker embedding ${path.basename(file)}` : o.model === 'wespeaker-resnet34' ? 'WeSpeaker ResNet34' : `speaker embedding ${o.model}`);
};
