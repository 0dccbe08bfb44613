export interface WhisperOptions {
  /** Manifest id of the model (default `whisper-base`); its files are resolved through the model resolver. */
  model?: string;
  /** Explicit files (override the resolver). */
  encoderFile?: string;
  decoderFile?: string;
  tokenizerFile?: string;
  /** Mel bins of the model (default: read from the encoder's input shape, else 80). */
  nMels?: number;
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
}

export const WHISPER_FILES = { encoder: 'encoder_model.onnx', decoder: 'decoder_model_merged.onnx', tokenizer: 'tokenizer.json' } as const;

export function resolveWhisperOptions(o: WhisperOptions = {}): ResolvedWhisperOptions {
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
  };
}
