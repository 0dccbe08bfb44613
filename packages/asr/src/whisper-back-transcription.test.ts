/**
 * Whisper as the quality report's back-transcription runs it (the options of @dub/pipeline's
 * BACK_TRANSCRIPTION_WHISPER), with the real Whisper base q8 from npm on a few seconds of real
 * speech each: the decoding is bounded by the audio's length, the target language is forced (no
 * detection), lines far apart on a timeline are packed into one window and their words come back
 * on the timeline inside the right line, and the compression-ratio fallback triggers on a
 * repetitive output at the cheap temperatures only.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readWav } from '@dub/media';
import { SessionCache } from '@dub/onnx';
import { groupRegions, packRegions, unpackTime, unpackWords } from './asr/chunking.js';
import { transcribe } from './asr/transcribe.js';
import { normalizeForWer, wordErrorRate } from './asr/wer.js';
import { decodeWithFallback, suppressTokenIds } from './whisper/decode.js';
import { loadWhisper } from './whisper/engine.js';
import { maxNewTokensFor, resolveWhisperOptions, type WhisperOptions } from './whisper/options.js';
import { silentLogger } from '@dub/core';
import { describeWithMedia, media } from '../../../test/support/media.js';

/** BACK_TRANSCRIPTION_WHISPER of @dub/pipeline (which depends on this package, not the other way round). */
const BACK: WhisperOptions = { detectLanguage: false, restrictScript: true, maxTokensPerSecond: 15, packGapSeconds: 1, temperatures: [0, 0.4, 0.8], bestOf: 1, wordTimestamps: true };
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());
const RATE = 16000;

async function mono16k(file: string, from: number, to: number): Promise<Float32Array> {
  const a = await readWav(file);
  const x = a.channels[0]!;
  // the recordings used here are 16 kHz (jfk) or 8 kHz (spanish-prompt): repeat samples up to 16 kHz
  const k = RATE / a.sampleRate;
  const out = new Float32Array(Math.round((to - from) * RATE));
  for (let i = 0; i < out.length; i++) out[i] = x[Math.min(x.length - 1, Math.floor(from * a.sampleRate + i / k))]!;
  return out;
}

/** A silent timeline of `seconds` with `pieces` of speech placed on it. */
function timeline(seconds: number, pieces: { at: number; x: Float32Array }[]): Float32Array {
  const t = new Float32Array(seconds * RATE);
  for (const p of pieces) t.set(p.x, Math.round(p.at * RATE));
  return t;
}

describe('packed windows (packRegions, unpackTime)', () => {
  it('packs regions in order, pauses cut to 1 s, up to 30 s of speech per window; times map back, a silence to the piece after or before it', () => {
    // a pause under the gap stays as it is
    expect(packRegions([{ start: 2, end: 5, probability: 1 }, { start: 5.3, end: 6, probability: 1 }, { start: 6, end: 7, probability: 1 }], 30, 1)[0]!.pieces.map((p) => Math.round(p.at * 1e6) / 1e6)).toEqual([0, 3.3, 4]);
    const regions = [
      { start: 2, end: 5, probability: 1 },
      { start: 17, end: 21, probability: 1 },
      { start: 33, end: 36, probability: 1 },
      { start: 50, end: 75, probability: 1 },
    ];
    // the timeline's chunks: three windows; packed: two
    expect(groupRegions(regions, 30)).toHaveLength(3);
    const packed = packRegions(regions, 30, 1);
    expect(packed.map((c) => c.pieces.map((p) => [p.start, Math.round(p.at * 1e6) / 1e6]))).toEqual([
      [
        [2, 0],
        [17, 4],
        [33, 9],
      ],
      [[50, 0]],
    ]);
    const c = packed[0]!;
    expect(unpackTime(c, 1)).toBeCloseTo(3, 9);
    expect(unpackTime(c, 4.6)).toBeCloseTo(17.6, 9);
    // in the silence after the first piece (3 .. 4): a start is heard from the next piece, an end up to the one before
    expect(unpackTime(c, 3.5, 'start')).toBe(17);
    expect(unpackTime(c, 3.5, 'end')).toBe(5);
    expect(unpackTime(c, 29)).toBe(36);
    // a segment over the first two pieces: its words over their speech only, each inside one piece
    const words = unpackWords(c, 0, 8, [
      { text: 'aaa', start: 0, end: 0 },
      { text: 'bbbb', start: 0, end: 0 },
      { text: 'ccc', start: 0, end: 0 },
    ]);
    expect(words.map((w) => [w.start, w.end].map((t) => Math.round(t * 1000) / 1000))).toEqual([
      [2, 4.1],
      [17, 18.9],
      [18.9, 21],
    ]);
  });
});

describeWithMedia(['jfk.wav', 'spanish-prompt.wav'], 'back-transcription with the real Whisper base q8', () => {
  it('is bounded: a line of N seconds never yields more tokens than the bound', async () => {
    const o = resolveWhisperOptions({ ...BACK, maxTokensPerSecond: 1 });
    const w = await loadWhisper(o, { sessions, device: 'cpu', threads: 0, models: {}, logger: silentLogger });
    // 10.7 s: the whole of jfk.wav (28 tokens with timestamps when nothing bounds them)
    const seconds = 10.7;
    const x = await mono16k(media('jfk.wav'), 0.1, 0.1 + seconds);
    const encoded = await w.sessions.encode(w.features.extract(x));
    const bound = maxNewTokensFor(o, seconds);
    expect(bound).toBe(19);
    const common = { language: 'en', timestamps: true, suppress: suppressTokenIds(w.tokenizer), ...o.fallback };
    const free = await decodeWithFallback(w.sessions, w.tokenizer, encoded, { ...common, maxNewTokens: 224 });
    const bounded = await decodeWithFallback(w.sessions, w.tokenizer, encoded, { ...common, maxNewTokens: bound });
    // the bound bites: the free decode needs more, the bounded one stops at it
    expect(free.tokens.length).toBeGreaterThan(bound);
    expect(bounded.tokens.length).toBeLessThanOrEqual(bound);
    expect(bounded.cacheLengths.length - 1).toBeLessThanOrEqual(bound);
  }, 60_000);

  it('forces the target language: a Spanish line with target es-ES comes back in Spanish, with no language detection', async () => {
    // "al igual que una PBX normal." (3.1 s)
    const x = await mono16k(media('spanish-prompt.wav'), 18.6, 21.9);
    const t = await transcribe({ samples: x, sampleRate: RATE }, { locale: 'es-ES', engine: 'whisper', sessions, whisper: BACK, speech: placement([{ start: 0, end: x.length / RATE }]) });
    const text = t.segments.map((s) => s.text).join(' ');
    expect(t.detectedLanguage).toBeUndefined();
    expect(normalizeForWer(text).join(' ')).toContain('igual que');
    expect(wordErrorRate('al igual que una PBX normal', text).wer).toBeLessThanOrEqual(0.34);
  }, 60_000);

  it('packs three lines 15 s apart into one window and gives every word back on the timeline, inside its own line', async () => {
    const lines = [
      { text: 'and so my fellow americans', from: 0.1, to: 3.2, at: 2 },
      { text: 'ask not what your country can do for you', from: 3.2, to: 7.8, at: 17 },
      { text: 'ask what you can do for your country', from: 8.0, to: 10.8, at: 33 },
    ];
    const pieces = await Promise.all(lines.map(async (l) => ({ at: l.at, x: await mono16k(media('jfk.wav'), l.from, l.to) })));
    const spans = lines.map((l) => ({ start: l.at, end: l.at + (l.to - l.from) }));
    // the timeline read as it is would take two windows (2 .. 21.6 and 33 .. 35.8); packed, one of 12.5 s
    expect(groupRegions(spans.map((s) => ({ ...s, probability: 1 })), 30)).toHaveLength(2);
    expect(packRegions(spans.map((s) => ({ ...s, probability: 1 })), 30, 1)).toHaveLength(1);
    const t = await transcribe({ samples: timeline(40, pieces), sampleRate: RATE }, { locale: 'en-US', engine: 'whisper', sessions, whisper: BACK, speech: placement(spans) });
    const words = t.segments.flatMap((s) => s.words);
    const heard = spans.map(() => [] as string[]);
    for (const w of words) {
      const mid = (w.start + w.end) / 2;
      const i = spans.findIndex((s) => mid >= s.start - 0.05 && mid <= s.end + 0.05);
      // every word is on the timeline inside a line, none in the 12 s pauses between them
      expect(i, `${w.text} at ${w.start}-${w.end}`).toBeGreaterThanOrEqual(0);
      heard[i]!.push(w.text);
    }
    for (const [i, l] of lines.entries()) expect(wordErrorRate(l.text, heard[i]!.join(' ')).wer, `line ${i + 1}: ${heard[i]!.join(' ')}`).toBeLessThanOrEqual(0.25);
  }, 60_000);

  it('times each word by the cross-attention: three lines with no pause between them, every word inside its own line', async () => {
    // jfk.wav cut into three lines and laid end to end (JFK's pause after "Americans" inside the first)
    const lines = [
      { text: 'and so my fellow americans', from: 0.1, to: 3.2 },
      { text: 'ask not what your country can do for you', from: 3.2, to: 7.8 },
      { text: 'ask what you can do for your country', from: 8.0, to: 10.8 },
    ];
    let at = 0.5;
    const spans: { start: number; end: number }[] = [];
    const pieces: { at: number; x: Float32Array }[] = [];
    for (const l of lines) {
      pieces.push({ at, x: await mono16k(media('jfk.wav'), l.from, l.to) });
      spans.push({ start: at, end: at + (l.to - l.from) });
      at += l.to - l.from;
    }
    const t = await transcribe({ samples: timeline(12, pieces), sampleRate: RATE }, { locale: 'en-US', engine: 'whisper', sessions, whisper: BACK, speech: placement(spans) });
    const words = t.segments.flatMap((s) => s.words);
    expect(words.length).toBeGreaterThan(20);
    expect(words.every((w) => w.aligned === true && w.end >= w.start)).toBe(true);
    const heard = spans.map(() => [] as string[]);
    for (const w of words) {
      // the line its middle falls in (the lines touch: each ends where the next starts)
      const i = spans.findIndex((s) => (w.start + w.end) / 2 <= s.end);
      heard[i < 0 ? spans.length - 1 : i]!.push(w.text);
    }
    for (const [i, l] of lines.entries()) expect(wordErrorRate(l.text, heard[i]!.join(' ')).wer, `line ${i + 1}: ${heard[i]!.join(' ')}`).toBeLessThanOrEqual(0.15);
  }, 60_000);

  it('decodes a repetitive output again at 0.4 and 0.8 (a repetition loop), one sample each, each within the bound and stopped at the loop', async () => {
    // 4 tokens per second here, so the three decodes stay short
    const o = resolveWhisperOptions({ ...BACK, maxTokensPerSecond: 4 });
    const w = await loadWhisper(o, { sessions, device: 'cpu', threads: 0, models: {}, logger: silentLogger });
    // "and so my fellow" four times over (6.8 s): Whisper repeats itself, at every temperature tried
    const once = await mono16k(media('jfk.wav'), 0.2, 1.9);
    const x = new Float32Array(once.length * 4);
    for (let i = 0; i < 4; i++) x.set(once, i * once.length);
    const encoded = await w.sessions.encode(w.features.extract(x));
    const bound = maxNewTokensFor(o, x.length / RATE);
    expect(bound).toBe(36);
    const r = await decodeWithFallback(w.sessions, w.tokenizer, encoded, { language: 'en', timestamps: true, maxNewTokens: bound, suppress: suppressTokenIds(w.tokenizer), ...o.fallback });
    // every decoding loops, and stops once its complete words hold the loop (its ratio, measured
    // on that shorter text, stays under 2.4; run to the bound it was above)
    expect(r.repetitionLoop).toBe(true);
    expect(r.stoppedOnLoop).toBe(true);
    expect(r.allFailed).toBe(true);
    // openai's five samples at each of 0.2 .. 1.0 would be 26 decodes; the cheap fallback is three
    expect(r.tried).toEqual([0, 0.4, 0.8]);
    expect(r.tokens.length).toBeLessThanOrEqual(bound);
  }, 60_000);
});

function placement(spans: { start: number; end: number }[]) {
  return { engine: 'placement', duration: Math.max(...spans.map((s) => s.end)), frameSeconds: 0.032, probabilities: new Float32Array(0), regions: spans.map((s) => ({ ...s, probability: 1 })) };
}
