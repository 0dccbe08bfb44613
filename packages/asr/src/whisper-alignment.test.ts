/**
 * Word times from Whisper's cross-attention (whisper/alignment.ts), against openai/whisper's
 * timing.py: median_filter and dtw_cpu/backtrace give the same arrays as openai's code run with
 * numpy here (the figures in the comments), and the start frames follow the attention.
 */
import { describe, expect, it } from 'vitest';
import { alignmentHeadsOf, alignmentStartFrames, dtw, medianFilterRows, shortenLongWords, WHISPER_ALIGNMENT_HEADS } from './whisper/alignment.js';

describe("openai's timing.py steps", () => {
  it('median filter along each row, reflect padding (openai median_filter; numpy: np.pad(x, ((0,0),(w//2,w//2)), "reflect"), sorted windows)', () => {
    const x = Float32Array.from([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]);
    expect([...medianFilterRows(x, 2, 8, 3)]).toEqual([1, 3, 1, 4, 5, 5, 6, 2, 3, 5, 5, 8, 8, 9, 7, 9]);
    expect([...medianFilterRows(x, 2, 8, 7)]).toEqual([1, 3, 3, 3, 4, 4, 5, 5, 5, 5, 5, 7, 7, 8, 8, 9]);
    // rows no longer than half the width stay as they are (openai: x.shape[-1] <= pad_width)
    expect([...medianFilterRows(Float32Array.from([2, 1, 3]), 1, 3, 7)]).toEqual([2, 1, 3]);
  });

  it('dynamic time warping and its backtrace (openai dtw_cpu), ties resolved as openai does', () => {
    const cost = Float32Array.from([0, 1, 2, 3, 4, 3, 0, 1, 2, 3, 4, 3, 0, 0, 2, 5, 4, 3, 2, 0]);
    expect(dtw(cost, 4, 5)).toEqual([
      [0, 1, 2, 2, 3],
      [0, 1, 2, 3, 4],
    ]);
    expect(dtw(Float32Array.from([1, 1, 1, 1, 1, 1]), 2, 3)).toEqual([
      [0, 1, 1],
      [0, 1, 2],
    ]);
  });

  it("each row's start frame follows where the heads attend; openai's heads for base and small", () => {
    // three tokens and the end over 12 frames: token 0 hears frames 0-2, token 1 frames 3-7, token 2 frames 8-10, the end 11
    const rows = (spans: [number, number][]) =>
      spans.map(([a, b]) => {
        const r = new Float32Array(12).fill(0.01);
        for (let f = a; f <= b; f++) r[f] = 1;
        return r;
      });
    const head = rows([
      [0, 2],
      [3, 7],
      [8, 10],
      [11, 11],
    ]);
    expect(alignmentStartFrames([head, head], 12, 1)).toEqual([0, 3, 8, 11]);
    expect(alignmentHeadsOf('whisper-base-q8')).toBe(WHISPER_ALIGNMENT_HEADS.base);
    expect(alignmentHeadsOf('whisper-small')).toEqual([[5, 3], [5, 9], [8, 0], [8, 4], [8, 7], [8, 8], [9, 0], [9, 7], [9, 9], [10, 5]]);
    expect(alignmentHeadsOf('whisper-tiny-test')).toBeUndefined();
  });

  it('a word stretched over a pause is cut to twice the median word duration: from its start, or after a sentence end from its end', () => {
    // "ask" after JFK's pause: DTW starts it at 2.5 s, in the silence, though it is said from about 3.5 s
    const words = [
      { text: 'fellow', start: 1.6, end: 1.96, aligned: true },
      { text: 'Americans', start: 1.96, end: 2.5, aligned: true },
      { text: 'ask', start: 2.5, end: 4.12, aligned: true },
      { text: 'not', start: 4.12, end: 4.62, aligned: true },
      { text: 'what', start: 4.62, end: 4.9 },
    ];
    // aligned durations 0.36, 0.54, 1.62, 0.5: median 0.52, so at most 1.04 s
    expect(shortenLongWords(words)).toBe(1);
    expect(words[2]).toEqual({ text: 'ask', start: 3.08, end: 4.12, aligned: true });
    expect(words.map((w) => w.start)).toEqual([1.6, 1.96, 3.08, 4.12, 4.62]);
    // the median is capped at 0.7 s
    const slow = [0.9, 1.0, 1.1].map((d, i) => ({ text: 'x', start: i * 2, end: i * 2 + d, aligned: true }));
    slow.push({ text: 'y', start: 6, end: 7.6, aligned: true });
    expect(shortenLongWords(slow)).toBe(1);
    expect(slow[3]!.start).toBe(6.2);
    // a sentence's last word keeps its start: it ran on into what follows
    const end = [
      { text: 'à', start: 0, end: 0.3, aligned: true },
      { text: 'vous.', start: 0.3, end: 1.5, aligned: true },
      { text: 'Le', start: 1.5, end: 1.7, aligned: true },
    ];
    expect(shortenLongWords(end)).toBe(1);
    expect(end[1]).toEqual({ text: 'vous.', start: 0.3, end: 0.9, aligned: true });
  });
});
