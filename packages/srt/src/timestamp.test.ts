import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestampMs, parseTimestampMs } from './timestamp.js';

/** The rule as a regex: the reference the hand-written scanner must match. */
function reference(text: string): number | undefined {
  const m = /^(\d{2,}):([0-5]\d):([0-5]\d)[,.](\d{3})$/.exec(text);
  if (!m) return undefined;
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number(m[4]);
}

describe('parseTimestampMs', () => {
  it('reads HH:MM:SS,mmm and HH:MM:SS.mmm', () => {
    expect(parseTimestampMs('00:00:00,000')).toBe(0);
    expect(parseTimestampMs('01:02:03,004')).toBe(3_723_004);
    expect(parseTimestampMs('01:02:03.004')).toBe(3_723_004);
    expect(parseTimestampMs('100:00:00,001')).toBe(360_000_001);
    for (const bad of ['0:00:00,000', '00:00:00,00', '00:00:00:000', '00-00-00,000', '00:00:00,0000', ' 00:00:00,000', '']) {
      expect(typeof parseTimestampMs(bad)).toBe('string');
    }
  });

  it('agrees with the regex rule on random strings', () => {
    const chars = fc.constantFrom(...'0123456789:,.-a '.split(''));
    const shaped = fc
      .tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 999 }), fc.constantFrom(',', '.', ':', ';'))
      .map(([h, m, s, ms, sep]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${sep}${String(ms).padStart(3, '0')}`);
    fc.assert(
      fc.property(fc.oneof(shaped, fc.array(chars, { maxLength: 16 }).map((a) => a.join(''))), (text) => {
        const got = parseTimestampMs(text);
        const want = reference(text);
        if (want === undefined) expect(typeof got).toBe('string');
        else expect(got).toBe(want);
      }),
      { numRuns: 3000 },
    );
  });

  it('formats what it parses', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 360_000_000 }), (ms) => {
        expect(parseTimestampMs(formatTimestampMs(ms))).toBe(ms);
      }),
    );
  });
});
