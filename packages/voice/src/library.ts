/**
 * Library voices: named voices (packages/voice/library-voices.json) that narrate every speaker
 * of an asset when voice_library_id is set. Each has a gender, the target locales it speaks and
 * its espeak-ng settings. GET /v1/voices serves `listLibraryVoices()`.
 */
import fs from 'node:fs';
import { getLocale, ValidationError } from '@dub/core';
import type { VoiceSettings } from './types.js';

export interface LibraryVoice {
  /** Stable id, the value of voice_library_id. */
  id: string;
  name: string;
  gender: 'male' | 'female';
  description: string;
  /** Contract target locales this voice speaks. */
  languages: string[];
  espeak: { variant: string; pitch: number; wordsPerMinute: number };
}

function checkVoice(v: unknown, i: number): LibraryVoice {
  const bad = (why: string): never => {
    throw new ValidationError(`library voice catalogue: voices[${i}]: ${why}`);
  };
  const o = (typeof v === 'object' && v !== null ? v : bad('not an object')) as Record<string, unknown>;
  const str = (k: string): string => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : bad(`${k} must be a non-empty string`));
  const id = str('id');
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(id)) bad(`invalid id "${id}"`);
  const gender = str('gender');
  if (gender !== 'male' && gender !== 'female') bad('gender must be male or female');
  const languages = Array.isArray(o.languages) ? (o.languages as unknown[]) : bad('languages must be a list');
  const notTarget = languages.filter((l) => typeof l !== 'string' || !getLocale(l)?.target);
  if (notTarget.length) bad(`not target locales: ${notTarget.join(', ')}`);
  const e = (typeof o.espeak === 'object' && o.espeak !== null ? o.espeak : bad('espeak settings missing')) as Record<string, unknown>;
  const int = (k: string, min: number, max: number): number => (Number.isInteger(e[k]) && (e[k] as number) >= min && (e[k] as number) <= max ? (e[k] as number) : bad(`espeak.${k} must be an integer in ${min}..${max}`));
  if (typeof e.variant !== 'string') bad('espeak.variant must be a string');
  return {
    id,
    name: str('name'),
    gender: gender as 'male' | 'female',
    description: typeof o.description === 'string' ? o.description : '',
    languages: languages as string[],
    espeak: { variant: e.variant as string, pitch: int('pitch', 0, 99), wordsPerMinute: int('wordsPerMinute', 80, 450) },
  };
}

/** packages/voice/library-voices.json (next to src/ and dist/). */
export const LIBRARY_FILE = new URL('../library-voices.json', import.meta.url);

/** Every library voice of the catalogue, in catalogue order. */
export function listLibraryVoices(file: URL | string = LIBRARY_FILE): LibraryVoice[] {
  const cat = JSON.parse(fs.readFileSync(file, 'utf8')) as { voices?: unknown };
  if (!Array.isArray(cat.voices)) throw new ValidationError('library voice catalogue: voices must be a list');
  const voices = cat.voices.map(checkVoice);
  const ids = new Set(voices.map((v) => v.id));
  if (ids.size !== voices.length) throw new ValidationError('library voice catalogue: duplicate ids');
  return voices;
}

/** The library voice `id`; ValidationError (field voice_library_id) when there is none. */
export function getLibraryVoice(id: string, file: URL | string = LIBRARY_FILE): LibraryVoice {
  const v = listLibraryVoices(file).find((x) => x.id === id);
  if (!v) throw new ValidationError(`unknown voice_library_id "${id}"`, { field: 'voice_library_id' });
  return v;
}

/** Engine settings of a library voice for `locale` (ValidationError when it does not speak it). */
export function libraryVoiceSettings(voice: LibraryVoice, locale: string): VoiceSettings {
  if (!voice.languages.includes(locale)) throw new ValidationError(`library voice ${voice.id} does not speak ${locale}`, { field: 'voice_library_id' });
  return { variant: voice.espeak.variant, pitch: voice.espeak.pitch, wordsPerMinute: voice.espeak.wordsPerMinute, amplitude: 100 };
}
