/**
 * One-call synthesis for tools that use @dub/voice alone:
 *   const audio = await synthesize('Hola', { locale: 'es-ES' });
 * Public options are partial; `resolveSynthesizeOptions` completes them.
 */
import { getLocale, resolveContext, ValidationError, type PartialContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { DEFAULT_TTS_ENGINE, TTS_ENGINES, type TtsEngineConfig, type TtsEngineId } from './registry.js';
import { getLibraryVoice, libraryVoiceSettings } from './library.js';
import { DEFAULT_VOICE, type TtsEngine, type VoiceSettings } from './types.js';

export interface SynthesizeOptions {
  /** Contract locale of the text (required). */
  locale: string;
  /** Engine id (default espeak-ng) ... */
  engine?: TtsEngineId;
  /** ... with its options, or an engine instance the caller owns (kept open). */
  engineInstance?: TtsEngine;
  engineConfig?: TtsEngineConfig;
  /** A library voice id; its settings are the base the `voice` fields override. */
  libraryVoice?: string;
  voice?: Partial<VoiceSettings>;
  /** Speed relative to the voice's rate (default 1). */
  speed?: number;
}

export interface ResolvedSynthesizeOptions {
  locale: string;
  engine: TtsEngineId;
  voice: VoiceSettings;
  speed: number;
}

export function resolveSynthesizeOptions(o: SynthesizeOptions): ResolvedSynthesizeOptions {
  if (!getLocale(o.locale)?.target) throw new ValidationError(`"${o.locale}" is not a supported target locale`, { field: 'locale' });
  const speed = o.speed ?? 1;
  if (!(speed > 0.1 && speed < 10)) throw new ValidationError(`speed must be within 0.1..10, got ${speed}`, { field: 'speed' });
  const base = o.libraryVoice ? libraryVoiceSettings(getLibraryVoice(o.libraryVoice), o.locale) : DEFAULT_VOICE;
  return { locale: o.locale, engine: o.engine ?? DEFAULT_TTS_ENGINE, voice: { ...base, ...o.voice }, speed };
}

/** Synthesize `text`: mono audio at the engine's sample rate. */
export async function synthesize(text: string, options: SynthesizeOptions, context: PartialContext = {}): Promise<PlanarAudio> {
  const ctx = resolveContext(context);
  const o = resolveSynthesizeOptions(options);
  const engine = options.engineInstance ?? (await TTS_ENGINES.create(o.engine, options.engineConfig ?? {}, { models: {} }));
  try {
    return await engine.synthesize({ text, locale: o.locale, voice: o.voice, speed: o.speed }, ctx);
  } finally {
    if (!options.engineInstance) await engine.dispose();
  }
}
