/**
 * A locale is spoken only by an engine that speaks it (issue 23 item 4): espeak-ng has no Filipino
 * voice (its table entry was the en-us voice); it garbles zh-CN and ja-JP, so auto passes over it
 * there and an explicit choice says why; Chatterbox calls Norwegian Bokmål "no".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '@dub/core';
import { chatterboxLanguage, prepareChatterboxText } from './engines/chatterbox-text.js';
import { espeakPoorNote, TTS_ENGINES } from './registry.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-locale-speakers-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const host = { models: { modelsDir: dir } };
const espeak = TTS_ENGINES.get('espeak-ng');

describe('espeak-ng speaks a locale only with a voice of its language', () => {
  it('fil-PH: refused (no Filipino voice; en-us would read it as English), explicitly too; auto has no voice for it', async () => {
    const s = await espeak.supports('fil-PH', host);
    expect(s).toMatchObject({ ok: false, reason: 'espeak-ng has no Filipino voice (its en-us voice would read Filipino with English rules)' });
    await expect(TTS_ENGINES.resolve('espeak-ng', 'fil-PH', host)).rejects.toBeInstanceOf(ValidationError);
    const e = await TTS_ENGINES.resolve('auto', 'fil-PH', host).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'engine_unavailable' });
    expect((e as Error).message).toMatch(/^tts: no engine here runs fil-PH \(.*espeak-ng: espeak-ng has no Filipino voice/);
  });

  it('zh-CN and ja-JP: auto passes over it, saying why; an explicit choice runs it', async () => {
    for (const locale of ['zh-CN', 'ja-JP']) {
      const s = await espeak.supports(locale, host);
      expect(s).toMatchObject({ ok: true, auto: false, note: espeakPoorNote(locale) });
      expect((await TTS_ENGINES.resolve('espeak-ng', locale, host)).id).toBe('espeak-ng');
      const auto = await TTS_ENGINES.resolve('auto', locale, host).catch((x: unknown) => x as Error);
      // no other engine speaks it here (Kokoro refuses ja and zh; no Piper voice is listed): the refusal names espeak-ng's reason
      if (auto instanceof Error) expect(auto.message).toContain(`espeak-ng speaks ${locale} poorly`);
      else expect(auto.id).not.toBe('espeak-ng');
    }
    expect(espeakPoorNote('zh-CN')).toMatch(/tone numbers out in English/);
    expect(espeakPoorNote('ja-JP')).toMatch(/every kanji is spoken as "Chinese letter"/);
  });

  it('speaks the other target locales with their own voice (yue-CN included)', async () => {
    for (const locale of ['es-ES', 'es-MX', 'nb-NO', 'yue-CN', 'pt-BR']) expect((await espeak.supports(locale, host)).ok, locale).toBe(true);
    expect(espeakPoorNote('es-ES')).toBeUndefined();
  });
});

describe('Chatterbox calls Norwegian Bokmål "no"', () => {
  it('nb-NO is its language "no": offered when installed, tokenized with [no]', async () => {
    expect(chatterboxLanguage('nb-NO')).toBe('no');
    expect(chatterboxLanguage('en-US')).toBe('en');
    expect(chatterboxLanguage('fil-PH')).toBeUndefined();
    const chatterbox = TTS_ENGINES.get('chatterbox');
    // not installed here: missing, not "does not speak"
    expect((await chatterbox.supports('nb-NO', host)).ok).toBe(false);
    expect(await chatterbox.supports('nb-NO', host)).toMatchObject({ reason: expect.stringMatching(/no Chatterbox export here/) });
    const models = fs.mkdtempSync(path.join(dir, 'chatterbox-'));
    fs.mkdirSync(path.join(models, 'chatterbox-multilingual'));
    for (const f of ['language_model.onnx', 'speech_encoder.onnx', 'embed_tokens.onnx', 'conditional_decoder.onnx', 'tokenizer.json']) fs.writeFileSync(path.join(models, 'chatterbox-multilingual', f), f);
    expect(await chatterbox.supports('nb-NO', { models: { modelsDir: models }, device: 'cuda' } as never)).toMatchObject({ ok: true });
    expect(prepareChatterboxText('Hei, hvordan går det?', 'no').text.startsWith('[no]')).toBe(true);
  });
});
