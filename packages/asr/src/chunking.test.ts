import { describe, expect, it } from 'vitest';
import { MIN_TAIL_SECONDS, splitLongRegions } from './asr/chunking.js';

const r = (start: number, end: number) => ({ start, end, probability: 0.9 });
const spans = (x: { start: number; end: number }[]) => x.map((p) => [Math.round(p.start * 1000) / 1000, Math.round(p.end * 1000) / 1000]);

describe('splitLongRegions', () => {
  it('leaves a region of at most max seconds as it is', () => {
    expect(spans(splitLongRegions([r(1, 31)], 30))).toEqual([[1, 31]]);
  });

  it('cuts from the start in pieces of max seconds: where the first minute is cut does not depend on what follows', () => {
    expect(spans(splitLongRegions([r(0, 75)], 30))).toEqual([[0, 30], [30, 60], [60, 75]]);
    const alone = splitLongRegions([r(5, 65)], 30);
    const inLonger = splitLongRegions([r(5, 125)], 30);
    expect(spans(alone)).toEqual([[5, 35], [35, 65]]);
    expect(spans(inLonger.slice(0, 2))).toEqual(spans(alone));
  });

  it(`balances only the tail: a last piece under ${MIN_TAIL_SECONDS} s shares the remainder with the one before`, () => {
    expect(spans(splitLongRegions([r(0, 62)], 30))).toEqual([[0, 30], [30, 46], [46, 62]]);
    expect(spans(splitLongRegions([r(0, 33)], 30))).toEqual([[0, 16.5], [16.5, 33]]);
    // every piece at most max, none under the tail minimum, together the whole region
    for (const len of [30.5, 37, 59.9, 61, 90, 91, 200]) {
      const p = splitLongRegions([r(0, len)], 30);
      expect(p[0]!.start).toBe(0);
      expect(p.at(-1)!.end).toBe(len);
      for (let i = 1; i < p.length; i++) expect(p[i]!.start).toBe(p[i - 1]!.end);
      for (const q of p) expect(q.end - q.start, `${len}`).toBeLessThanOrEqual(30 + 1e-9);
      for (const q of p) expect(q.end - q.start, `${len}`).toBeGreaterThanOrEqual(Math.min(MIN_TAIL_SECONDS, len / 2) - 1e-9);
    }
  });
});
