/**
 * Spoken-language identification with Whisper: the most likely language token after
 * <|startoftranscript|> for the first 30 s of speech (the VAD's regions, so leading silence or
 * music does not decide it). Needs a Whisper model; without one it throws the resolver's error
 * naming `dub models fetch`.
 */
import { resolveContext, type PartialContext } from '@dub/core';
import { createEngineEnv, type EngineEnvOptions } from '../engine-env.js';
import { openSpeechAudio, type AudioInput } from '../speech-audio.js';
import { detectSpeech } from '../vad/detect-speech.js';
import { detectLanguageFromEncoding } from './decode.js';
import { loadWhisper } from './engine.js';
import { resolveWhisperOptions, type WhisperOptions } from './options.js';

export interface IdentifiedLanguage {
  /** Whisper's language code, e.g. "en". */
  language: string;
  probability: number;
  /** Seconds of the input the decision was made on. */
  from: number;
  to: number;
}

export async function identifyLanguage(input: AudioInput, options: EngineEnvOptions & { whisper?: WhisperOptions; tmpDir?: string } = {}, context: PartialContext = {}): Promise<IdentifiedLanguage> {
  const ctx = resolveContext(context);
  const { env, release } = createEngineEnv(options, ctx.logger);
  const audio = await openSpeechAudio(input, options.tmpDir ? { tmpDir: options.tmpDir } : {}, ctx);
  try {
    const w = await loadWhisper(resolveWhisperOptions(options.whisper), env);
    if (w.tokenizer.languages.size === 0) throw new RangeError('this Whisper model is English-only: it cannot identify a language');
    const speech = await detectSpeech(audio, { sessions: env.sessions });
    const first = speech.regions[0];
    const from = first ? first.start : 0;
    const to = Math.min(audio.duration, from + 30);
    const encoded = await w.sessions.encode(w.features.extract(await audio.readSeconds(from, to)));
    const g = await detectLanguageFromEncoding(w.sessions, w.tokenizer, encoded);
    return { language: g.language, probability: g.probability, from, to };
  } finally {
    await audio.close();
    await release();
  }
}
