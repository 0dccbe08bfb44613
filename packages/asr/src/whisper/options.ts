import { resolveFallbackOptions, type FallbackOptions, type ResolvedFallbackOptions } from './decode.js';

export interface WhisperOptions extends FallbackOptions {
  /** Manifest id of the model (default `whisper-base`); its files are resolved through the model resolver. */
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
  /** Most tokens generated per 30 s chunk (default 224). */
  maxNewTokens?: number;
  /** Detect the spoken language of the first chunk and report it (default true). */
  detectLanguage?: boolean;
  /** Decode with timestamp tokens (default true); without them each chunk is one segment. */
  timestamps?: boolean;
  /** Seconds per chunk, at most 30 (default 30). */
  chunkSeconds?: number;
}

export interface ResolvedWhisperOptions {
  model: string;
  encoderFile: string | undefined;
  decoderFile: string | undefined;
  tokenizerFile: string | undefined;
  nMels: number | undefined;
  maxNewTokens: number;
  detectLanguage: boolean;
  timestamps: boolean;
  chunkSeconds: number;
  suppressTokens: 'non-speech' | readonly number[];
  suppressBlank: boolean;
  fallback: ResolvedFallbackOptions;
}

export const WHISPER_FILES = { encoder: 'encoder_model.onnx', decoder: 'decoder_model_merged.onnx', tokenizer: 'tokenizer.json' } as const;
/** The feature extractor's settings of a Hugging Face export (feature_size = mel bins); optional. */
export const WHISPER_PREPROCESSOR_CONFIG = 'preprocessor_config.json';

export function resolveWhisperOptions(o: WhisperOptions = {}): ResolvedWhisperOptions {
  if (o.nMels !== undefined && !(Number.isInteger(o.nMels) && o.nMels >= 1 && o.nMels <= 512)) throw new RangeError(`whisper nMels must be an integer in 1..512, got ${o.nMels}`);
  const chunkSeconds = o.chunkSeconds ?? 30;
  if (!(chunkSeconds > 0 && chunkSeconds <= 30)) throw new RangeError('whisper chunkSeconds must be in (0, 30]');
  return {
    model: o.model ?? 'whisper-base',
    encoderFile: o.encoderFile,
    decoderFile: o.decoderFile,
    tokenizerFile: o.tokenizerFile,
    nMels: o.nMels,
    maxNewTokens: o.maxNewTokens ?? 224,
    detectLanguage: o.detectLanguage ?? true,
    timestamps: o.timestamps ?? true,
    chunkSeconds,
    suppressTokens: o.suppressTokens ?? 'non-speech',
    suppressBlank: o.suppressBlank ?? true,
    fallback: resolveFallbackOptions(o),
  };
}
