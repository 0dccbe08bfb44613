/**
 * TTS engines by id, loaded lazily: importing @dub/voice loads neither onnxruntime nor any
 * model. Each factory gets its own section of TtsEngineConfig.
 */
import { ValidationError } from '@dub/core';
import type { EspeakEngineOptions } from './engines/espeak-engine.js';
import type { PiperEngineOptions } from './engines/piper-engine.js';
import type { ChatterboxOptions } from './engines/chatterbox.js';
import type { TtsEngine } from './types.js';

export interface TtsEngineConfig {
  'espeak-ng'?: EspeakEngineOptions;
  piper?: PiperEngineOptions;
  chatterbox?: ChatterboxOptions;
}

export type TtsEngineId = keyof TtsEngineConfig;

type Factory<K extends TtsEngineId> = (opts: TtsEngineConfig[K]) => Promise<TtsEngine>;

export const TTS_ENGINES: { [K in TtsEngineId]-?: Factory<K> } = {
  'espeak-ng': async (o) => (await import('./engines/espeak-engine.js')).createEspeakEngine(o ?? {}),
  piper: async (o) => (await import('./engines/piper-engine.js')).createPiperEngine(o ?? {}),
  chatterbox: async (o) => (await import('./engines/chatterbox.js')).createChatterboxEngine(o ?? {}),
};

export const TTS_ENGINE_IDS = Object.keys(TTS_ENGINES) as TtsEngineId[];

/** The default engine here: real offline synthesis for every target locale, no model download. */
export const DEFAULT_TTS_ENGINE: TtsEngineId = 'espeak-ng';

export function isTtsEngineId(id: string): id is TtsEngineId {
  return (TTS_ENGINE_IDS as string[]).includes(id);
}

/** Build engine `id` with its options. */
export function createTtsEngine<K extends TtsEngineId>(id: K, opts?: TtsEngineConfig[K]): Promise<TtsEngine> {
  const f = TTS_ENGINES[id] as Factory<K> | undefined;
  if (!f) return Promise.reject(new ValidationError(`unknown TTS engine "${String(id)}" (known: ${TTS_ENGINE_IDS.join(', ')})`, { field: 'engine' }));
  return f(opts);
}
