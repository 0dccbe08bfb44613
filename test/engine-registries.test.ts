/**
 * Every stage that has moved onto @dub/core's EngineRegistry exposes the same shape: stage,
 * variable, ids, preference, resolve/create; and resolves `auto` on a host without models to its
 * offline engine with the reason naming what to fetch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPEAKER_ENGINES } from '@dub/asr';
import { LIPS_ENGINES } from '@dub/lips';
import { TRANSLATE_ENGINES } from '@dub/translate';
import { TTS_ENGINES, VOICE_CONVERSION_ENGINES } from '@dub/voice';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-registries-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const registries = { tts: TTS_ENGINES, voice_conversion: VOICE_CONVERSION_ENGINES, speakers: SPEAKER_ENGINES, lips: LIPS_ENGINES, translation: TRANSLATE_ENGINES } as const;

describe('engine registries of the stages', () => {
  it('share one shape', () => {
    for (const [stage, r] of Object.entries(registries)) {
      expect(Object.isFrozen(r), stage).toBe(true);
      expect(r.stage).toBe(stage);
      expect(r.envVar).toMatch(/^DUB_[A-Z_]+$/);
      expect(r.ids.length).toBeGreaterThan(1);
      for (const id of r.preference) expect(r.ids).toContain(id);
      for (const e of r.entries) expect([typeof e.id, typeof e.supports, typeof e.create]).toEqual(['string', 'function', 'function']);
      expect(typeof r.resolve).toBe('function');
      expect(typeof r.create).toBe('function');
    }
  });

  it('auto on a host without models runs the offline engine and says what to fetch; explicit model engines fail naming the fetch', async () => {
    const host = { models: { modelsDir: dir, searchDirs: [] } };
    expect((await SPEAKER_ENGINES.resolve('auto', undefined, host as never)).record).toEqual({ id: 'mfcc', selected: 'auto', reason: 'auto: no WeSpeaker model here (MFCC statistics, no weights)' });
    expect((await SPEAKER_ENGINES.resolve('mfcc', undefined, host as never)).record).toEqual({ id: 'mfcc', selected: 'explicit', reason: 'DUB_SPEAKER_ENGINE=mfcc' });
    await expect(SPEAKER_ENGINES.resolve('wespeaker', undefined, host as never)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch wespeaker-resnet34/) });
    await expect(SPEAKER_ENGINES.resolve('pyannote', undefined, host as never)).rejects.toThrow('DUB_SPEAKER_ENGINE="pyannote" is not an engine: auto, wespeaker, mfcc');
    expect((await TTS_ENGINES.resolve('auto', 'fr-FR', host)).id).toBe('espeak-ng');
    expect((await VOICE_CONVERSION_ENGINES.resolve('auto', 'fr-FR', host)).id).toBe('none');
    expect((await LIPS_ENGINES.resolve('auto', 'fr-FR', host)).record).toEqual({ id: 'viseme-warp', selected: 'auto', reason: 'auto: no Wav2Lip model here (classical mouth warp)' });
    await expect(LIPS_ENGINES.resolve('wav2lip', 'fr-FR', host)).rejects.toMatchObject({ code: 'model_missing' });
    expect((await TRANSLATE_ENGINES.resolve('auto', 'es-ES', host)).record).toEqual({ id: 'apertium', selected: 'auto', reason: 'auto: the offline default' });
    expect((await TRANSLATE_ENGINES.resolve('deepl', 'es-ES', host)).record).toEqual({ id: 'deepl', selected: 'explicit', reason: 'DUB_TRANSLATE_ENGINE=deepl' });
  });
});
