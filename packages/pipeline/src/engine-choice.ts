/**
 * Engine choices read from the environment of the worker process (`dub run`, `dub serve`,
 * `dub worker` alike): `DUB_TTS_ENGINE` (auto, espeak-ng, piper), `DUB_LIPS_ENGINE` (auto,
 * wav2lip, viseme-warp) and `DUB_SPEAKER_ENGINE` (auto, mfcc, wespeaker). `auto` (or unset) keeps the default choice; an
 * explicit engine that cannot run fails the version with an error naming what is missing, it is
 * never replaced by another one. An unknown value is refused when the handlers are created.
 */
import fs from 'node:fs';
import { isModelAvailable, resolveModelFile, ValidationError } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from '@dub/lips';
import { TTS_ENGINE_IDS, type TtsEngineId } from '@dub/voice';
import type { GenerateVersionOptions } from './generate.js';

export const SPEAKER_ENGINE_IDS = ['mfcc', 'wespeaker'] as const;
export type SpeakerEngineId = (typeof SPEAKER_ENGINE_IDS)[number];

export interface EngineChoice {
  tts: 'auto' | TtsEngineId;
  lips: 'auto' | LipsEngineId;
  speaker: 'auto' | SpeakerEngineId;
}

function pick<T extends string>(env: Record<string, string | undefined>, name: string, known: readonly T[]): 'auto' | T {
  const raw = env[name]?.trim();
  if (!raw || raw === 'auto') return 'auto';
  if (!(known as readonly string[]).includes(raw)) throw new ValidationError(`${name}="${raw}" is not an engine: auto, ${known.join(', ')}`, { field: name });
  return raw as T;
}

export function engineChoiceFromEnv(env: Record<string, string | undefined> = process.env): EngineChoice {
  return { tts: pick(env, 'DUB_TTS_ENGINE', TTS_ENGINE_IDS), lips: pick(env, 'DUB_LIPS_ENGINE', LIPS_ENGINE_IDS), speaker: pick(env, 'DUB_SPEAKER_ENGINE', SPEAKER_ENGINE_IDS) };
}

const WESPEAKER = { id: 'wespeaker-resnet34', file: 'voxceleb_resnet34_LM.onnx' };

/** The speaker engine a prepare runs: its id, the @dub/asr embedding it uses, and the identity of its model file (for cache keys). */
export interface SpeakerEngine {
  id: SpeakerEngineId;
  embedding: 'mfcc' | 'onnx';
  selected: 'auto' | 'explicit';
  model?: { file: string; size: number; mtime: number };
}

/**
 * auto: WeSpeaker when its model is installed, else the MFCC statistics (no weights). An explicit
 * `wespeaker` whose model is missing throws the resolver's error naming `dub models fetch`.
 */
export function resolveSpeakerEngine(choice: EngineChoice['speaker'], modelsDir: string | undefined): SpeakerEngine {
  const where = modelsDir ? { modelsDir } : {};
  const wespeaker = choice === 'wespeaker' || (choice === 'auto' && isModelAvailable(WESPEAKER.id, [WESPEAKER.file], where));
  if (!wespeaker) return { id: 'mfcc', embedding: 'mfcc', selected: choice === 'auto' ? 'auto' : 'explicit' };
  const file = resolveModelFile(WESPEAKER.id, WESPEAKER.file, where);
  const st = fs.statSync(file);
  return { id: 'wespeaker', embedding: 'onnx', selected: choice === 'auto' ? 'auto' : 'explicit', model: { file, size: st.size, mtime: st.mtimeMs } };
}

/** The generate-version options these choices make. */
export function generateOptionsOf(choice: EngineChoice): GenerateVersionOptions {
  return {
    ...(choice.tts !== 'auto' ? { tts: { engine: choice.tts } } : {}),
    ...(choice.lips !== 'auto' ? { lips: { engine: choice.lips } } : {}),
  };
}

/**
 * The speech recognition engine a prepare of `locale` runs on this host and the identity of its
 * model files (path, size, time), for the transcription stage's cache key: installing Whisper (or
 * replacing its model) makes the next prepare transcribe again instead of reusing the old
 * transcript. `none` when no engine speaks the locale (the stage then fails naming what to install).
 */
export async function asrEngineIdentity(locale: string, modelsDir: string | undefined): Promise<{ engine: string; model: { file: string; size: number; mtime: number }[] | null }> {
  const { asrEnginesFor, resolveWhisperOptions, WHISPER_FILES } = await import('@dub/asr');
  const where = modelsDir ? { modelsDir } : {};
  const [engine] = await asrEnginesFor(locale, modelsDir ? { models: where } : {});
  if (!engine) return { engine: 'none', model: null };
  if (engine !== 'whisper') return { engine, model: null };
  const model = resolveWhisperOptions().model;
  const files = Object.values(WHISPER_FILES).map((f) => {
    const file = resolveModelFile(model, f, where);
    const st = fs.statSync(file);
    return { file, size: st.size, mtime: st.mtimeMs };
  });
  return { engine, model: files };
}
