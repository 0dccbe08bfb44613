import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext, TARGET_LOCALES, ValidationError } from '@dub/core';
import { getLibraryVoice, libraryVoiceSettings, listLibraryVoices } from './library.js';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { medianPitch } from './analysis/pitch.js';
import { genderOf } from './analysis/voice-profile.js';

describe('library voices', () => {
  it('lists named voices of both genders that speak every target locale', () => {
    const voices = listLibraryVoices();
    expect(voices.length).toBeGreaterThanOrEqual(4);
    expect(new Set(voices.map((v) => v.gender))).toEqual(new Set(['male', 'female']));
    for (const v of voices) expect([...v.languages].sort()).toEqual([...TARGET_LOCALES].sort());
  });

  it('finds a voice by id; an unknown id is a ValidationError on voice_library_id', () => {
    expect(getLibraryVoice('marco').name).toBe('Marco');
    let err: unknown;
    try {
      getLibraryVoice('nobody');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('voice_library_id');
  });

  it('sounds like its declared gender', async () => {
    const engine = createEspeakEngine();
    for (const id of ['ana', 'marco']) {
      const v = getLibraryVoice(id);
      const a = await engine.synthesize({ text: 'Buenas tardes, bienvenidos al programa.', locale: 'es-ES', speed: 1, voice: libraryVoiceSettings(v, 'es-ES') }, resolveContext());
      expect(genderOf(medianPitch(a.channels[0]!, a.sampleRate))).toBe(v.gender);
    }
  });

  it('rejects a malformed catalogue', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lib-'));
    const file = path.join(dir, 'voices.json');
    await fsp.writeFile(file, JSON.stringify({ v: 1, voices: [{ id: 'x', name: 'X', gender: 'robot', languages: [], espeak: { variant: '', pitch: 50, wordsPerMinute: 160 } }] }));
    expect(() => listLibraryVoices(file)).toThrow(/gender/);
    await fsp.writeFile(file, JSON.stringify({ v: 1, voices: [{ id: 'x', name: 'X', gender: 'male', languages: ['he-IL'], espeak: { variant: '', pitch: 50, wordsPerMinute: 160 } }] }));
    expect(() => listLibraryVoices(file)).toThrow(/he-IL/);
    await fsp.rm(dir, { recursive: true, force: true });
  });
});
