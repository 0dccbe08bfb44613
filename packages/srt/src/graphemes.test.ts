import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countGraphemes, countGraphemesSlow, splitGraphemes } from './graphemes.js';

describe('countGraphemes', () => {
  it('counts clusters, spaces included', () => {
    expect(countGraphemes('hello world')).toBe(11);
    expect(countGraphemes('e\u0301te\u0301')).toBe(3);
    expect(countGraphemes('👍🏽 🇫🇷 👨‍👩‍👧')).toBe(5);
    expect(countGraphemes('กินข้าว')).toBe(5);
    expect(countGraphemes('नमस्ते')).toBeLessThan('नमस्ते'.length);
    expect(countGraphemes('你好，世界')).toBe(5);
    expect(countGraphemes('مرحبا')).toBe(5);
    expect(countGraphemes('😀😀')).toBe(2);
    expect(countGraphemes('')).toBe(0);
  });

  it('fast path agrees with Intl.Segmenter on any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme-composite' })), (s) => {
        expect(countGraphemes(s)).toBe(countGraphemesSlow(s));
        expect(splitGraphemes(s).join('')).toBe(s);
        expect(splitGraphemes(s)).toHaveLength(countGraphemesSlow(s));
      }),
      { numRuns: 400 },
    );
  });

  it('fast path agrees with Intl.Segmenter on every code point of planes 0, 1 and 14 between two letters', () => {
    const bad: string[] = [];
    const ranges: [number, number][] = [[0, 0x1ffff], [0xe0000, 0xe0fff]];
    for (const [lo, hi] of ranges) {
      for (let c = lo; c <= hi; c++) {
        if (c >= 0xd800 && c <= 0xdfff) continue;
        const ch = String.fromCodePoint(c);
        if (/\p{Cn}/u.test(ch)) continue;
        // Joins the letter before it (extend, spacing mark) or the one after it (prepend).
        const s = `a${ch}a`;
        if (countGraphemes(s) !== countGraphemesSlow(s)) bad.push(`U+${c.toString(16)}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
