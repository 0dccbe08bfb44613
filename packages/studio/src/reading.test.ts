import { LOCALES } from '@dub/core';
import { SRT_PROFILE_LIMITS, SRT_PROFILE_NAMES } from '@dub/srt';
import { describe, expect, it } from 'vitest';
import { countChars, dirOf, isRtlLocale, READING_LIMITS, readingStats } from './reading.js';

describe('the copies of @dub/srt and @dub/core the page needs', () => {
  it('reading limits are the SRT profiles\'', () => {
    for (const p of SRT_PROFILE_NAMES) {
      const l = SRT_PROFILE_LIMITS[p];
      expect(READING_LIMITS[p]).toEqual({ maxCharsPerSecond: l.maxCharsPerSecond, maxBlockChars: l.maxBlockChars, maxLineChars: l.maxLineChars });
    }
    expect(Object.keys(READING_LIMITS).sort()).toEqual([...SRT_PROFILE_NAMES].sort());
  });
  it('right-to-left locales are the locale table\'s', () => {
    for (const l of LOCALES) expect(isRtlLocale(l.code), l.code).toBe(l.rtl);
    expect(dirOf('ar-AE')).toBe('rtl');
    expect(dirOf('he-IL')).toBe('rtl');
    expect(dirOf('es-ES')).toBe('ltr');
  });
});

describe('reading speed', () => {
  it('counts grapheme clusters with spaces, runs of white space as one', () => {
    expect(countChars('Hola,  mundo ')).toBe(11);
    expect(countChars('e\u0301te\u0301')).toBe(3);
    expect(countChars('مرحبا بالعالم')).toBe(13);
    expect(countChars('👍🏽 ok')).toBe(4);
  });
  it('characters per second against the chosen profile', () => {
    const text = 'x'.repeat(42);
    expect(readingStats(text, 0, 2, 'regular')).toEqual({ chars: 42, cps: 21, limit: 21, tooFast: false, blocks: 1 });
    expect(readingStats(text, 0, 2, 'mobile')).toMatchObject({ cps: 21, limit: 17, tooFast: true });
    expect(readingStats('x'.repeat(100), 0, 10, 'mobile').blocks).toBe(3);
    expect(readingStats('', 1, 1, 'regular')).toEqual({ chars: 0, cps: 0, limit: 21, tooFast: false, blocks: 0 });
    expect(readingStats('hola', 1, 1, 'regular')).toMatchObject({ cps: Infinity, tooFast: true });
  });
});
