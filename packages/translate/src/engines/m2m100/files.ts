/** Where an M2M100 model's files are (light: the registry and `auto` import it without loading the engine). */
import { resolveModelFile } from '@dub/core';
import type { PairSupport } from '../../types.js';
import { M2M100_GAPS, m2m100Code } from './languages.js';

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

const SIZE_NOTE = 'about 632 MB: encoder 287.9 MB + decoder 344.1 MB + tokenizer files';

/**
 * Whether M2M100 translates a pair here: both languages in its table, two languages (not one in
 * two regions), and the model's files installed. The translator's `supports` and the registry's
 * entry (registry.ts) both answer with this.
 */
export function m2m100PairSupport(opts: M2M100Location, sourceLocale: string, targetLocale: string): PairSupport {
  const src = m2m100Code(sourceLocale);
  const tgt = m2m100Code(targetLocale);
  for (const [loc, code] of [[sourceLocale, src], [targetLocale, tgt]] as const) {
    if (!code) return { supported: false, reason: M2M100_GAPS[loc] ?? `M2M100 has no language for ${loc}` };
  }
  if (src === tgt) return { supported: false, reason: `${sourceLocale} and ${targetLocale} are one language for M2M100 (${src}): it has no direction between them` };
  const id = opts.model ?? M2M100_MODEL_ID;
  if (!m2m100Installed(opts)) {
    return {
      supported: false,
      reason: `the M2M100 model (${id}) is not installed here`,
      fix: `npx dub models fetch ${id} (on a host that reaches huggingface.co; ${SIZE_NOTE}), or put its files in DUB_MODELS_DIR/${id}/`,
    };
  }
  return { supported: true };
}
