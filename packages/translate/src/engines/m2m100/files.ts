/** Where an M2M100 model's files are (light: the registry and `auto` import it without loading the engine). */
import { resolveModelFile } from '@dub/core';

/** The manifest id of the default model. */
export const M2M100_MODEL_ID = 'm2m100-418m';

/** The files an M2M100 model directory holds (models/<id>/), by role. */
export const M2M100_FILES = {
  encoder: 'encoder_model_quantized.onnx',
  decoder: 'decoder_model_merged_quantized.onnx',
  spm: 'sentencepiece.bpe.model',
  vocab: 'vocab.json',
  generation: 'generation_config.json',
} as const;

export interface M2M100Location {
  /** Manifest id (default m2m100-418m). */
  model?: string;
  /** DUB_MODELS_DIR. */
  modelsDir?: string;
  /** Extra directories searched after it (tests point here at fixtures). */
  searchDirs?: string[];
}

/** Absolute paths of the model's files (throws the resolver's ModelMissingError naming `npx dub models fetch`). */
export function m2m100Files(opts: M2M100Location = {}): Record<keyof typeof M2M100_FILES, string> {
  const id = opts.model ?? M2M100_MODEL_ID;
  const ro = { modelsDir: opts.modelsDir, ...(opts.searchDirs ? { searchDirs: opts.searchDirs } : {}) };
  return Object.fromEntries(Object.entries(M2M100_FILES).map(([k, f]) => [k, resolveModelFile(id, f, ro)])) as Record<keyof typeof M2M100_FILES, string>;
}

/** Whether every file of the model is present here. */
export function m2m100Installed(opts: M2M100Location = {}): boolean {
  try {
    m2m100Files(opts);
    return true;
  } catch {
    return false;
  }
}
