import { ValidationError } from '@dub/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSrt } from './parse.js';
import { serializeSrt } from './serialize.js';
import { formatSrtTimestamp } from './timestamp.js';

describe('formatSrtTimestamp', () => {
  it('writes HH:MM:SS,mmm rounded once to whole milliseconds', () => {
    expect(formatSrtTimestamp(0)).toBe('00:00:00,000');
    expect(formatSrtTimestamp(1.5)).toBe('00:00:01,500');
    expect(formatSrtTimestamp(3661.001)).toBe('01:01:01,001');
    expect(formatSrtTimestamp(0.0004)).toBe('00:00:00,000');
    expect(formatSrtTimestamp(0.0006)).toBe('00:00:00,001');
    expect(formatSrtTimestamp(1.2345)).toMatch(/^00:00:01,23[45]$/);
    expect(formatSrtTimestamp(123 * 3600)).toBe('123:00:00,000');
  });

  it('never writes 1000 milliseconds: carries into the seconds, minutes and hours', () => {
    expect(formatSrtTimestamp(59.9996)).toBe('00:01:00,000');
    expect(formatSrtTimestamp(3599.9999)).toBe('01:00:00,000');
    fc.assert(
      fc.property(fc.double({ min: 0, max: 400_000, noNaN: true }), (t) => {
        const m = /^(\d{2,}):([0-5]\d):([0-5]\d),(\d{3})$/.exec(formatSrtTimestamp(t));
        expect(m).not.toBeNull();
        const ms = ((Number(m![1]) * 60 + Number(m![2])) * 60 + Number(m![3])) * 1000 + Number(m![4]);
        expect(ms).toBe(Math.round(t * 1000));
      }),
    );
  });
});

describe('serializeSrt', () => {
  const cues = [
    { index: 7, start: 1, end: 2.5, text: 'Hello\nworld' },
    { index: 3, start: 3, end: 4, text: 'Bye' },
  ];

  it('renumbers from 1 and uses LF by default', () => {
    expect(serializeSrt(cues)).toBe('1\n00:00:01,000 --> 00:00:02,500\nHello\nworld\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n');
  });

  it('writes CRLF when asked', () => {
    expect(serializeSrt(cues, { eol: '\r\n' })).toBe('1\r\n00:00:01,000 --> 00:00:02,500\r\nHello\r\nworld\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nBye\r\n');
  });

  it('writes an empty document for no cues', () => {
    expect(serializeSrt([])).toBe('');
  });

  it('drops blank text lines and trailing spaces so the cue does not end early', () => {
    expect(serializeSrt([{ start: 0, end: 1, text: 'a  \n\n  \nb\r\n' }])).toBe('1\n00:00:00,000 --> 00:00:01,000\na\nb\n');
  });

  it('rejects negative or non-finite times, an end before the start and empty text', () => {
    expect(() => serializeSrt([{ start: -1, end: 1, text: 'x' }])).toThrow(ValidationError);
    expect(() => serializeSrt([{ start: Number.NaN, end: 1, text: 'x' }])).toThrow(ValidationError);
    expect(() => serializeSrt([{ start: 2, end: 1, text: 'x' }])).toThrow(ValidationError);
    expect(() => serializeSrt([{ start: 0, end: 1, text: ' \n ' }])).toThrow(/cue 1: empty text/);
    expect(() => serializeSrt([{ start: 0, end: 1, text: '00:00:01,000 --> 00:00:02,000' }])).toThrow(/timing line/);
  });

  it('round-trips RTL and mixed-script text', () => {
    const c = [{ index: 1, start: 0.5, end: 2, text: 'مرحبا بالعالم\nשלום 你好 hello 🇫🇷' }];
    expect(parseSrt(serializeSrt(c))).toEqual(c);
  });

  const lineArb = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
    .map((s) => s.replace(/[\r\n]/g, ' '))
    .filter((s) => s.trim() !== '' && !s.includes('-->'));
  const cueArb = fc
    .record({
      start: fc.double({ min: 0, max: 100_000, noNaN: true }),
      dur: fc.double({ min: 0, max: 60, noNaN: true }),
      lines: fc.array(lineArb, { minLength: 1, maxLength: 3 }),
    })
    .map(({ start, dur, lines }) => ({ index: 1, start, end: start + dur, text: lines.join('\n') }));

  it('is stable: serialize(parse(serialize(x))) === serialize(x), with LF and CRLF', () => {
    fc.assert(
      fc.property(fc.array(cueArb, { maxLength: 12 }), fc.constantFrom('\n' as const, '\r\n' as const), (cs, eol) => {
        const once = serializeSrt(cs, { eol });
        const parsed = parseSrt(once);
        expect(parsed).toHaveLength(cs.length);
        expect(serializeSrt(parsed, { eol })).toBe(once);
        parsed.forEach((p, i) => {
          expect(p.index).toBe(i + 1);
          expect(Math.round(p.start * 1000)).toBe(Math.round(cs[i]!.start * 1000));
        });
      }),
      { numRuns: 300 },
    );
  });
});
