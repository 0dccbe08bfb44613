/**
 * Whisper's repetition loops (whisper/repetition.ts) and what decoding does with them
 * (decodeWithFallback, bestOfFailed): a loop in a short window, whose gzip compression ratio stays
 * under openai's 2.4, fails the decoding all the same; when every temperature fails, the most likely
 * decoding that does not loop is kept, not the last one. No model runs here (a scripted decoder over
 * the tiny test tokenizer).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bestOfFailed, compressionRatio, decodeWithFallback, resolveFallbackOptions, type DecodeResult, type WindowDecoder } from './whisper/decode.js';
import { hasRepetitionLoop, loopWords, markRepetitionLoops, repetitionLoops } from './whisper/repetition.js';
import { WhisperTokenizer } from './whisper/tokenizer.js';

// Back-transcribed by Whisper base q8 at temperature 0.6 from espeak-ng's Portuguese (a window of
// three dubbed lines, bench/pairs.mjs en-US -> pt-PT): the last phrase four times over.
const LOOPED = 'a gente morre do que o meu samedi, no samedo, o spam de não que for, o país morre do palco, o país morre do palco, o país morre do palco, o país morre do palco,';

describe('compression ratio (openai: UTF-8 bytes over zlib.compress bytes)', () => {
  it("equals Python's zlib figures", () => {
    // python3 -c "import zlib,sys; b=sys.argv[1].encode(); print(len(b), len(zlib.compress(b)), len(b)/len(zlib.compress(b)))" "$TEXT"
    // (zlib 1.2.13 there; pako 2.1.0 here, zlib's deflate byte for byte. node:zlib, Chromium's fork,
    // compresses the second text to 37 bytes, not 36)
    expect(compressionRatio(LOOPED)).toBe(165 / 82); // 2.0121951219512195: under 2.4, although it loops
    expect(compressionRatio(Array(12).fill('o país morre do palco,').join(' '))).toBe(287 / 36); // 7.972222222222222
    expect(compressionRatio('E de modo que meus americanos amigos pedem não que vosso')).toBe(57 / 56); // 1.0178571428571428
  });
});

describe('repetition loops', () => {
  it('finds a phrase repeated in a row, with its word span, period and copies', () => {
    const words = loopWords(LOOPED);
    expect(words.slice(14, 21)).toEqual(['que', 'for', 'o', 'país', 'morre', 'do', 'palco']);
    expect(repetitionLoops(words)).toEqual([{ start: 16, end: 36, period: 5, copies: 4 }]);
    expect(hasRepetitionLoop(LOOPED)).toBe(true);
    // one word six times; a partial last copy belongs to the loop
    expect(repetitionLoops(loopWords('ha ha ha ha ha ha'))).toEqual([{ start: 0, end: 6, period: 1, copies: 6 }]);
    expect(repetitionLoops(loopWords('sim x y x y x y x não'))).toEqual([{ start: 1, end: 8, period: 2, copies: 3 }]);
  });

  it('leaves speech that repeats a little alone', () => {
    for (const text of ['Não, não, não.', 'o que me usa, de fane, para fane, para fane, a fane', 'ask not what your country can do for you, ask what you can do for your country', 'E de modo que meus americanos amigos pedem não que vosso']) {
      expect(repetitionLoops(loopWords(text)), text).toEqual([]);
    }
  });

  it('takes a phrase of six words or more said twice in a row as a loop (longPeriod), unless told not to', () => {
    const twice = 'ask what you can do for your country, ask what you can do for your country.';
    expect(repetitionLoops(loopWords(twice))).toEqual([{ start: 0, end: 16, period: 8, copies: 2 }]);
    expect(repetitionLoops(loopWords(twice), { longPeriod: null })).toEqual([]);
    // five words twice: not a loop
    expect(hasRepetitionLoop('o país morre do palco, o país morre do palco')).toBe(false);
  });

  it('marks the loop on the words of a whole window, across segments, punctuation-only words skipped', () => {
    const seg1 = ['Pedir', 'que', 'o', 'país'].map((text) => ({ text }));
    const seg2 = ['—', 'morre', 'do', 'palco,', 'o', 'país', 'morre', 'do', 'palco,', 'o', 'país', 'morre', 'do', 'palco.'].map((text) => ({ text }));
    const words: { text: string; loop?: boolean }[] = [...seg1, ...seg2];
    expect(markRepetitionLoops(words)).toEqual([{ start: 2, end: 18, period: 5, copies: 3 }]);
    expect(words.filter((w) => w.loop).map((w) => w.text)).toEqual(['o', 'país', 'morre', 'do', 'palco,', 'o', 'país', 'morre', 'do', 'palco,', 'o', 'país', 'morre', 'do', 'palco.']);
    expect(seg2[0]).toEqual({ text: '—' });
    expect(seg1[1]).toEqual({ text: 'que' });
  });
});

// ---------------------------------------------------------------- decoding with a loop
const TINY = fileURLToPath(new URL('../fixtures/whisper-tiny-test/tokenizer.json', import.meta.url));
const tok = WhisperTokenizer.fromFile(TINY);
const V = tok.vocabSize;
const fakeEncoded = {} as Parameters<WindowDecoder['startDecoding']>[0];

/**
 * A decoder that reads out one text per decoding (the k-th startDecoding reads texts[k], the last one
 * again after that): each step's logits put `peak` on the next token of the text (then the end
 * token), 0 elsewhere. Without timestamps the 267 tokens up to <|endoftext|> can be sampled: a peak
 * of 10 is a likely text (log probability -0.012 a token), 4.8 an unlikely one (-1.16).
 */
function reader(texts: readonly { text: string; peak: number }[]): WindowDecoder {
  let call = 0;
  return {
    startDecoding() {
      const t = texts[Math.min(call++, texts.length - 1)]!;
      const ids = [...tok.encode(t.text), tok.eot];
      let prompt = true;
      let n = 0;
      return {
        pastLength: 0,
        async step(step: readonly number[]) {
          if (prompt) prompt = false;
          else n += step.length;
          this.pastLength += step.length;
          const row = new Float32Array(V);
          row[ids[Math.min(n, ids.length - 1)]!] = t.peak;
          return row;
        },
        positionLogits: () => new Float32Array(V),
      };
    },
  };
}
const opts = { language: 'de', timestamps: false, maxNewTokens: 224, temperatures: [0, 0.4, 0.8], bestOf: 1 } as const;

describe('decoding a window that loops', () => {
  it('a likely loop under 2.4 fails all the same; every temperature failing, the first one that does not loop is kept', async () => {
    const texts = [
      { text: LOOPED, peak: 10 }, // greedy: the loop, likely
      { text: 'e o país pode fazer para ti', peak: 4.8 }, // 0.4: unlikely (avg log probability < -1)
      { text: 'e o país pode fazer para ti', peak: 4.8 }, // 0.8: sampled nearly at random from the same logits
    ];
    const r = await decodeWithFallback(reader(texts), tok, fakeEncoded, opts);
    expect(r.tried).toEqual([0, 0.4, 0.8]);
    expect(r.allFailed).toBe(true);
    expect(r.text).toBe('e o país pode fazer para ti');
    expect(r.temperature).toBe(0.4);
    expect(r.repetitionLoop).toBe(false);
    expect(r.avgLogprob).toBeLessThan(-1);
    // without the loop check (openai's checks alone) the greedy loop passes: ratio 2.01, likely
    const openai = await decodeWithFallback(reader(texts), tok, fakeEncoded, { ...opts, repetitionCheck: false });
    expect(openai.tried).toEqual([0]);
    expect(openai.text).toBe(LOOPED);
    expect(openai.compressionRatio).toBe(165 / 82);
    expect(openai.avgLogprob).toBeGreaterThan(-0.1);
  });

  it('a window whose every decoding loops keeps the most likely loop, and says every temperature failed', async () => {
    const r = await decodeWithFallback(reader([{ text: LOOPED, peak: 10 }]), tok, fakeEncoded, opts);
    expect(r.allFailed).toBe(true);
    // each decoding stopped once its complete words held the loop: three copies and the word after
    expect(r.text).toBe(LOOPED.slice(0, LOOPED.indexOf('palco, o país morre do palco, o país morre do palco,') + 'palco, o país morre do palco, o país morre do palco, o'.length));
    expect(r.stoppedOnLoop).toBe(true);
    expect(r.repetitionLoop).toBe(true);
    expect(r.temperature).toBe(0);
    expect(r.tokens.length).toBeLessThan(tok.encode(LOOPED).length);
  });

  it('stops a decoding at a loop only with the loop check on; the decoding to the end loops too', async () => {
    const full = await decodeWithFallback(reader([{ text: LOOPED, peak: 10 }]), tok, fakeEncoded, { ...opts, repetitionCheck: false });
    expect(full.stoppedOnLoop).toBe(false);
    expect(full.text).toBe(LOOPED);
    expect(hasRepetitionLoop(full.text)).toBe(true);
    // speech that repeats a little runs to its end token
    const speech = 'no, no, no, I said the red one, not the blue one';
    const r = await decodeWithFallback(reader([{ text: speech, peak: 10 }]), tok, fakeEncoded, opts);
    expect(r).toMatchObject({ text: speech, stoppedOnLoop: false, repetitionLoop: false, allFailed: false, tried: [0] });
  });

  it('among the samples of a temperature, one that does not loop ranks above a likelier loop', async () => {
    const texts = [
      { text: LOOPED, peak: 10 }, // greedy: the loop
      { text: LOOPED, peak: 10 }, // 0.4, first sample: the loop again, log probability -0.01 a token
      { text: 'e o país pode fazer para ti', peak: 6 }, // 0.4, second sample: -0.5 a token, passes
    ];
    const r = await decodeWithFallback(reader(texts), tok, fakeEncoded, { ...opts, bestOf: 2 });
    expect(r).toMatchObject({ text: 'e o país pode fazer para ti', temperature: 0.4, allFailed: false, tried: [0, 0.4], repetitionLoop: false });
    expect(r.avgLogprob).toBeGreaterThan(-1);
  });

  it('bestOfFailed: the lowest temperature that is not repetitive (ratio or loop), else the highest average log probability', () => {
    const f = resolveFallbackOptions();
    const d = (temperature: number, avgLogprob: number, compressionRatio: number, repetitionLoop: boolean) => ({ temperature, avgLogprob, compressionRatio, repetitionLoop }) as DecodeResult;
    // the greedy text kept over a likelier sample, and over a likelier loop
    expect(bestOfFailed([d(0, -1.35, 1.5, false), d(0.4, -1.15, 1.8, false), d(0.8, -3.0, 1.0, false)], f).temperature).toBe(0);
    expect(bestOfFailed([d(0, -1.3, 1.5, false), d(0.4, -1.1, 2.0, true), d(0.8, -3.8, 0.5, false)], f).temperature).toBe(0);
    // a greedy loop (ratio 2.6) passed over
    expect(bestOfFailed([d(0, -0.2, 2.6, false), d(0.4, -1.6, 1.2, false), d(0.8, -1.2, 1.1, false)], f).temperature).toBe(0.4);
    // all repetitive: the most likely, the earliest on a tie
    expect(bestOfFailed([d(0, -0.9, 2.6, false), d(0.4, -0.5, 2.0, true), d(0.8, -0.7, 3.1, false)], f).temperature).toBe(0.4);
    expect(bestOfFailed([d(0, -0.5, 2.6, false), d(0.4, -0.5, 2.9, false)], f).temperature).toBe(0);
    // with the loop check off, a loop under 2.4 is not repetitive
    expect(bestOfFailed([d(0, -1.1, 2.0, true), d(0.4, -1.3, 1.5, false)], f).temperature).toBe(0.4);
    expect(bestOfFailed([d(0, -1.1, 2.0, true), d(0.4, -1.3, 1.5, false)], { ...f, repetitionCheck: false }).temperature).toBe(0);
  });
});
