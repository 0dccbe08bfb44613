import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { createEngineEnv } from './engine-env.js';
import { openSpeechAudio } from './speech-audio.js';
import { detectSpeech } from './vad/detect-speech.js';
import { pocketsphinxProvider, resolvePocketsphinxOptions } from './asr/pocketsphinx.js';
import { cleanPocketsphinxWord, parseContinuousTimes, parseCtm } from './asr/pocketsphinx-output.js';
import { transcribe } from './asr/transcribe.js';
import { wordErrorRate } from './asr/wer.js';
import { asrConformance } from './testing/asr-conformance.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const jfk = media('jfk.wav');
/** Reference transcript from ../shared/media/README.md. */
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

describe('pocketsphinx output parsing', () => {
  it('maps fillers out and strips pronunciation variants', () => {
    expect(['<s>', '</s>', '<sil>', '[NOISE]', '[SPEECH]', '++BREATH++', '<unk>'].map(cleanPocketsphinxWord)).toEqual(Array(7).fill(undefined));
    expect(cleanPocketsphinxWord('read(2)')).toBe('read');
    expect(cleanPocketsphinxWord("don't")).toBe("don't");
  });
  it('parses -time yes output into utterances', () => {
    const out = 'and not\n<s> 3.170 3.280 1.000300\nand(2) 3.290 3.730 0.985603\n<sil> 3.740 3.980 0.828680\nnot 3.990 4.300 0.817730\n</s> 4.310 4.760 1.000000\nhi\n<s> 5.0 5.1 1\nhi 5.1 5.4 0.5\n</s> 5.4 5.5 1\n';
    const u = parseContinuousTimes(out);
    expect(u.map((w) => w.map((x) => x.text))).toEqual([['and', 'not'], ['hi']]);
    expect(u[0]![0]).toEqual({ text: 'and', start: 3.29, end: 3.73, confidence: 0.985603 });
    expect(u[0]![0]!.confidence).toBeLessThanOrEqual(1);
  });
  it('parses CTM per utterance', () => {
    const m = parseCtm('u0 1 0.18 0.39 and 0.889\nu0 1 0.58 0.06 <sil> 0.8\nu1 1 0.08 0.49 not(2) 0.984\n');
    expect(m.get('u0')!.map((w) => [w.text, w.start, w.end])).toEqual([['and', 0.18, 0.57]]);
    expect(m.get('u1')![0]!.text).toBe('not');
  });
});

describeWithMedia(['jfk.wav'], 'pocketsphinx on jfk.wav', () => {
  it('transcribes by VAD regions with word times inside the file and a WER below 0.6 (measured 0.36)', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', engine: 'pocketsphinx' });
    expect(r.engine).toBe('pocketsphinx');
    const words = r.segments.flatMap((s) => s.words);
    expect(words.length).toBeGreaterThan(12);
    for (const w of words) {
      expect(w.start).toBeGreaterThanOrEqual(0);
      expect(w.end).toBeLessThanOrEqual(11);
    }
    const wer = wordErrorRate(JFK_TEXT, r.segments.map((s) => s.text).join(' ')).wer;
    expect(wer).toBeLessThan(0.6);
    // "country" is recognised near the end of the speech (reference: ~10 s).
    const country = words.filter((w) => w.text === 'country').at(-1);
    expect(country?.start).toBeGreaterThan(9);
  });

  it('transcribes the whole file with pocketsphinx_continuous -time yes (measured WER 0.55)', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', engine: 'pocketsphinx', pocketsphinx: { mode: 'file' } });
    const wer = wordErrorRate(JFK_TEXT, r.segments.map((s) => s.text).join(' ')).wer;
    expect(wer).toBeLessThan(0.75);
    expect(r.segments.length).toBeGreaterThan(1);
  });

});

describe('pocketsphinx availability', () => {
  it('supports English only, and only when installed', async () => {
    const { env } = createEngineEnv({}, resolveContext().logger);
    const o = resolvePocketsphinxOptions();
    expect(await pocketsphinxProvider.supports('en-US', o, env)).toBe(true);
    expect(await pocketsphinxProvider.supports('de-DE', o, env)).toBe(false);
    expect(await pocketsphinxProvider.supports('en-US', resolvePocketsphinxOptions({ batchBinary: 'pocketsphinx-absent' }), env)).toBe(false);
    expect(await pocketsphinxProvider.supports('en-US', resolvePocketsphinxOptions({ modelDir: '/nonexistent' }), env)).toBe(false);
  });
});

const { env } = createEngineEnv({}, resolveContext().logger);
describeWithMedia(['jfk.wav'], 'pocketsphinx conformance on jfk.wav', () => {
  asrConformance('pocketsphinx', () => pocketsphinxProvider.create(resolvePocketsphinxOptions(), env), {
    audio: () => openSpeechAudio(jfk),
    regions: async () => (await detectSpeech(jfk)).regions,
    locale: 'en-US',
    language: 'en',
    minWords: 10,
  });
});
