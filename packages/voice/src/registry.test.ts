import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelMissingError, ValidationError, type EngineRegistry } from '@dub/core';
import { TTS_ENGINES, VOICE_CONVERSION_ENGINES } from './registry.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-voice-registry-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const host = { models: { modelsDir: dir } };

describe('voice engine registries', () => {
  it('are @dub/core EngineRegistry values with their stage and variable', () => {
    const all: EngineRegistry<unknown, never>[] = [TTS_ENGINES as never, VOICE_CONVERSION_ENGINES as never];
    expect(TTS_ENGINES.preference).toEqual(['chatterbox', 'kokoro', 'piper', 'espeak-ng']);
    expect(all.map((r) => [r.stage, r.envVar, r.ids])).toEqual([
      ['tts', 'DUB_TTS_ENGINE', ['espeak-ng', 'piper', 'kokoro', 'chatterbox']],
      ['voice_conversion', 'DUB_VOICE_CONVERSION', ['openvoice', 'none']],
    ]);
  });

  // German: Kokoro has no German voice, so auto's choice between Piper and espeak-ng shows here
  it('tts: for a language Kokoro does not speak, auto is espeak-ng without a Piper voice (naming its fetch), Piper once the voice is in place; explicit piper without it fails naming the fetch', async () => {
    const before = await TTS_ENGINES.resolve('auto', 'de-DE', host);
    expect(before.record).toEqual({ id: 'espeak-ng', label: 'espeak-ng', model_id: 'espeak-ng-data', license: 'GPL-3.0-or-later', commercial: 'yes', selected: 'auto', reason: 'auto: no Piper voice here (npx dub models fetch piper-de_DE-thorsten-medium)' });
    expect((await TTS_ENGINES.resolve('auto', 'ru-RU', host)).record).toEqual({ id: 'espeak-ng', label: 'espeak-ng', model_id: 'espeak-ng-data', license: 'GPL-3.0-or-later', commercial: 'yes', selected: 'auto', reason: 'auto: no Piper voice is listed for ru-RU' });
    const e = await TTS_ENGINES.resolve('piper', 'de-DE', host).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ModelMissingError);
    expect((e as Error).message).toMatch(/npx dub models fetch piper-de_DE-thorsten-medium/);
    await expect(TTS_ENGINES.resolve('piper', 'ja-JP', host)).rejects.toBeInstanceOf(ValidationError);
    fs.mkdirSync(path.join(dir, 'piper-de_DE-thorsten-medium'));
    fs.writeFileSync(path.join(dir, 'piper-de_DE-thorsten-medium', 'de_DE-thorsten-medium.onnx'), 'voice');
    fs.writeFileSync(path.join(dir, 'piper-de_DE-thorsten-medium', 'de_DE-thorsten-medium.onnx.json'), '{}');
    const after = await TTS_ENGINES.resolve('auto', 'de-DE', host);
    expect(after.record).toMatchObject({ id: 'piper', label: 'Piper de_DE-thorsten-medium', model: 'de_DE-thorsten-medium.onnx', size: 5, model_id: 'piper-de_DE-thorsten-medium', selected: 'auto', reason: 'auto: the Piper voice de_DE-thorsten-medium is installed' });
    expect(after.record.files).toBeUndefined();
    expect((await TTS_ENGINES.resolve('espeak-ng', 'de-DE', host)).record).toEqual({ id: 'espeak-ng', label: 'espeak-ng', model_id: 'espeak-ng-data', license: 'GPL-3.0-or-later', commercial: 'yes', selected: 'explicit', reason: 'DUB_TTS_ENGINE=espeak-ng' });
  });

  it('tts: auto passes over an installed Chatterbox on CUDA for a language whose reference text step is not ported (zh, ru), saying so; explicit still runs it; es-ES takes it', async () => {
    const models = fs.mkdtempSync(path.join(dir, 'chatterbox-'));
    fs.mkdirSync(path.join(models, 'chatterbox-multilingual'));
    for (const f of ['language_model.onnx', 'speech_encoder.onnx', 'embed_tokens.onnx', 'conditional_decoder.onnx', 'tokenizer.json']) fs.writeFileSync(path.join(models, 'chatterbox-multilingual', f), f);
    const cuda = { models: { modelsDir: models }, device: 'cuda' as const };
    expect((await TTS_ENGINES.resolve('auto', 'es-ES', cuda)).record).toMatchObject({ id: 'chatterbox', label: 'Chatterbox Multilingual', model: 'language_model.onnx', selected: 'auto' });
    // zh-CN: no engine here speaks it well: Chatterbox without its text step and espeak-ng are passed over, each saying why
    const zh = await TTS_ENGINES.resolve('auto', 'zh-CN', cuda).catch((e: unknown) => e as Error);
    expect(zh).toMatchObject({ code: 'engine_unavailable' });
    expect((zh as Error).message).toMatch(/Chatterbox Multilingual's reference text step for zh \(Cangjie codes .*\) is not ported here: auto does not use it for zh-CN .*; espeak-ng speaks zh-CN poorly: /);
    expect((await TTS_ENGINES.resolve('auto', 'ru-RU', cuda)).record.reason).toMatch(/^auto: no Piper voice is listed for ru-RU; .*text step for ru \(stress marks \(russian_text_stresser\)\) is not ported here/);
    // on CPU both reasons are given
    expect(((await TTS_ENGINES.resolve('auto', 'ja-JP', { ...cuda, device: 'cpu' as const }).catch((e: unknown) => e)) as Error).message).toMatch(/only on a CUDA device .*; .*text step for ja \(kanji to hiragana \(pykakasi\)\) is not ported.*; espeak-ng speaks ja-JP poorly/);
    const explicit = await TTS_ENGINES.resolve('chatterbox', 'zh-CN', cuda);
    expect(explicit.record).toMatchObject({ id: 'chatterbox', label: 'Chatterbox Multilingual', model: 'language_model.onnx', selected: 'explicit', reason: 'DUB_TTS_ENGINE=chatterbox' });
  });

  it('voice conversion: none with the fetch command when OpenVoice is absent; explicit openvoice fails naming it', async () => {
    expect((await VOICE_CONVERSION_ENGINES.resolve('auto', 'es-ES', host)).record).toEqual({ id: 'none', label: 'no voice conversion', selected: 'auto', reason: 'auto: no voice conversion model here (npx dub models fetch openvoice-v2-tone-clone)' });
    expect((await VOICE_CONVERSION_ENGINES.resolve('none', 'es-ES', host)).record).toEqual({ id: 'none', label: 'no voice conversion', selected: 'explicit', reason: 'DUB_VOICE_CONVERSION=none' });
    await expect(VOICE_CONVERSION_ENGINES.resolve('openvoice', 'es-ES', host)).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch openvoice-v2-tone-clone/) });
  });
});
