/**
 * Whisper ASR engine over ONNX: log-mel features in TypeScript, encoder + merged decoder with KV
 * cache from the session cache, greedy decoding with timestamp rules, long audio cut into chunks of
 * at most 30 s on VAD region boundaries, optional language detection on the first chunk.
 */
import { existsSync } from 'node:fs';
import { isModelAvailable, reportProgress, resolveModelFile, throwIfAborted, type StageContext } from '@dub/core';
import { groupRegions } from '../asr/chunking.js';
import type { AsrEngine, AsrEngineOutput, AsrEngineProvider, AsrRequest, AsrSegment, DetectedLanguage } from '../asr/types.js';
import { WhisperFeatureExtractor } from '../dsp/whisper-mel.js';
import type { EngineEnv } from '../engine-env.js';
import type { SpeechAudio } from '../speech-audio.js';
import { detectLanguageFromEncoding, greedyDecode } from './decode.js';
import { whisperLanguageOf } from './languages.js';
import { decoderLayout, encoderMels, WhisperSessions } from './model.js';
import { WHISPER_FILES, type ResolvedWhisperOptions } from './options.js';
import { tokensToSegments } from './segments.js';
import { WhisperTokenizer } from './tokenizer.js';

export interface WhisperFiles {
  encoder: string;
  decoder: string;
  tokenizer: string;
}

/** Paths of the model's files: explicit options first, then the model resolver. */
export function resolveWhisperFiles(o: ResolvedWhisperOptions, env: EngineEnv): WhisperFiles {
  return {
    encoder: o.encoderFile ?? resolveModelFile(o.model, WHISPER_FILES.encoder, env.models),
    decoder: o.decoderFile ?? resolveModelFile(o.model, WHISPER_FILES.decoder, env.models),
    tokenizer: o.tokenizerFile ?? resolveModelFile(o.model, WHISPER_FILES.tokenizer, env.models),
  };
}

export interface LoadedWhisper {
  sessions: WhisperSessions;
  tokenizer: WhisperTokenizer;
  features: WhisperFeatureExtractor;
}

export async function loadWhisper(o: ResolvedWhisperOptions, env: EngineEnv): Promise<LoadedWhisper> {
  const files = resolveWhisperFiles(o, env);
  const sessionOpts = { device: env.device, threads: env.threads, logger: env.logger };
  const [encoder, decoder] = await Promise.all([env.sessions.get(files.encoder, sessionOpts), env.sessions.get(files.decoder, sessionOpts)]);
  const tokenizer = WhisperTokenizer.fromFile(files.tokenizer);
  const nMels = o.nMels ?? encoderMels(encoder) ?? 80;
  const sessions = new WhisperSessions(encoder, decoder, decoderLayout(decoder), nMels);
  return { sessions, tokenizer, features: new WhisperFeatureExtractor(nMels) };
}

class Whisper implements AsrEngine {
  readonly id = 'whisper';
  constructor(private readonly w: LoadedWhisper, private readonly o: ResolvedWhisperOptions) {}

  async transcribe(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput> {
    const { sessions, tokenizer, features } = this.w;
    const language = whisperLanguageOf(req.locale, tokenizer.languages.size ? tokenizer.languages : new Map([['en', tokenizer.sot]]));
    if (!language) throw new RangeError(`this Whisper model has no language token for ${req.locale}`);
    const chunks = groupRegions(req.regions, this.o.chunkSeconds);
    const segments: AsrSegment[] = [];
    let detectedLanguage: DetectedLanguage | undefined;
    for (let i = 0; i < chunks.length; i++) {
      throwIfAborted(ctx.signal);
      const c = chunks[i]!;
      const samples = await audio.readSeconds(c.start, c.end);
      const encoded = await sessions.encode(features.extract(samples));
      if (i === 0 && this.o.detectLanguage && tokenizer.languages.size > 0) {
        const g = await detectLanguageFromEncoding(sessions, tokenizer, encoded);
        detectedLanguage = { language: g.language, probability: g.probability };
        ctx.logger.debug({ detected: g.language, probability: g.probability, requested: language }, 'whisper language detection');
      }
      const decoded = await greedyDecode(sessions, tokenizer, encoded, {
        language,
        timestamps: this.o.timestamps,
        maxNewTokens: this.o.maxNewTokens,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      for (const s of tokensToSegments(tokenizer, decoded.tokens, c.start, c.end - c.start, req.locale)) {
        if (s.start >= c.end) continue;
        s.end = Math.min(s.end, c.end);
        for (const w of s.words) {
          w.start = Math.min(w.start, s.end);
          w.end = Math.min(w.end, s.end);
        }
        segments.push(s);
      }
      reportProgress(ctx, 'asr', (i + 1) / chunks.length);
    }
    return { segments, ...(detectedLanguage ? { detectedLanguage } : {}) };
  }
}

export const whisperProvider: AsrEngineProvider<ResolvedWhisperOptions> = {
  id: 'whisper',
  async supports(locale, o, env) {
    if (!whisperLanguageOf(locale)) return false;
    if (o.encoderFile || o.decoderFile || o.tokenizerFile) return [o.encoderFile, o.decoderFile, o.tokenizerFile].every((f) => !!f && existsSync(f));
    return isModelAvailable(o.model, Object.values(WHISPER_FILES), env.models);
  },
  installHint: () => 'run `npx dub models fetch whisper-base` (or whisper-small; Whisper covers about 99 languages) or set DUB_MODELS_DIR to a folder holding it',
  async create(o, env) {
    return new Whisper(await loadWhisper(o, env), o);
  },
};
