/**
 * Engine choices of generation read from the environment of the worker process (`dub run`,
 * `dub serve`, `dub worker` alike): `DUB_TTS_ENGINE` (auto, espeak-ng, piper) and
 * `DUB_LIPS_ENGINE` (auto, wav2lip, viseme-warp). `auto` (or unset) keeps the default choice; an
 * explicit engine that cannot run fails the version with an error naming what is missing, it is
 * never replaced by another one. An unknown value is refused when the handlers are created.
 */
import { ValidationError } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from '@dub/lips';
import { TTS_ENGINE_IDS, type TtsEngineId } from '@dub/voice';
import type { GenerateVersionOptions } from './generate.js';

export interface EngineChoice {
  tts: 'auto' | TtsEngineId;
  lips: 'auto' | LipsEngineId;
}

function pick<T extends string>(env: Record<string, string | undefined>, name: string, known: readonly T[]): 'auto' | T {
  const raw = env[name]?.trim();
  if (!raw || raw === 'auto') return 'auto';
  if (!(known as readonly string[]).includes(raw)) throw new ValidationError(`${name}="${raw}" is not an engine: auto, ${known.join(', ')}`, { field: name });
  return raw as T;
}

export function engineChoiceFromEnv(env: Record<string, string | undefined> = process.env): EngineChoice {
  return { tts: pick(env, 'DUB_TTS_ENGINE', TTS_ENGINE_IDS), lips: pick(env, 'DUB_LIPS_ENGINE', LIPS_ENGINE_IDS) };
}

/** The generate-version options these choices make. */
export function generateOptionsOf(choice: EngineChoice): GenerateVersionOptions {
  return {
    ...(choice.tts !== 'auto' ? { tts: { engine: choice.tts } } : {}),
    ...(choice.lips !== 'auto' ? { lips: { engine: choice.lips } } : {}),
  };
}
