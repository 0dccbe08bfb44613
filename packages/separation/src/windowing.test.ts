import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planWindows, transitionWeight } from './windowing.js';

describe('planWindows', () => {
  it('cuts like demucs apply_model: offsets every stride, centred short windows', () => {
    const p = planWindows(529200, 343980, 0.25);
    expect(p.stride).toBe(257985);
    expect(p.windows.map((w) => w.offset)).toEqual([0, 257985, 515970]);
    expect(p.windows.map((w) => w.length)).toEqual([343980, 529200 - 257985, 529200 - 515970]);
    const last = p.windows[2]!;
    expect(last.inputStart).toBe(515970 - Math.floor((343980 - last.length) / 2));
    expect(p.windows[0]!.inputStart).toBe(0);
  });

  it('a short input is one window centred in zeros', () => {
    const p = planWindows(1000, 4000, 0.25);
    expect(p.windows).toEqual([{ index: 0, offset: 0, length: 1000, inputStart: -1500 }]);
  });

  it('empty input has no windows', () => {
    expect(planWindows(0, 100, 0.25).windows).toEqual([]);
  });

  it('windows cover every sample and starts never go backwards', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 8, max: 600 }), fc.double({ min: 0, max: 0.9, noNaN: true }), (total, segment, overlap) => {
        const p = planWindows(total, segment, overlap);
        let covered = 0;
        let lastStart = -Infinity;
        for (const w of p.windows) {
          expect(w.offset).toBeLessThanOrEqual(covered);
          covered = Math.max(covered, w.offset + w.length);
          expect(w.inputStart).toBeGreaterThanOrEqual(lastStart);
          lastStart = w.inputStart;
          expect(w.offset - w.inputStart + w.length).toBeLessThanOrEqual(segment);
        }
        expect(covered).toBe(total);
      }),
    );
  });

  it('rejects bad arguments', () => {
    expect(() => planWindows(10, 4, 1)).toThrow(RangeError);
    expect(() => planWindows(-1, 4, 0.25)).toThrow(RangeError);
    expect(() => planWindows(10, 0, 0.25)).toThrow(RangeError);
  });
});

describe('transitionWeight', () => {
  it('is demucs weight: 1..S/2 then S-S/2..1, divided by the max', () => {
    expect(Array.from(transitionWeight(6))).toEqual([1 / 3, 2 / 3, 1, 1, 2 / 3, 1 / 3].map(Math.fround));
    expect(Array.from(transitionWeight(5))).toEqual([1 / 3, 2 / 3, 1, 2 / 3, 1 / 3].map(Math.fround));
  });
});
