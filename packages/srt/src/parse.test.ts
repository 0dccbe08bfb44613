import { SrtParseError } from '@dub/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTimingLine, looksLikeTimestamp, parseSrt, splitArrow, validateSrt } from './parse.js';

const SAMPLE = '1\n00:00:01,000 --> 00:00:02,500\nHello\nworld\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n';

function errorOf(text: string): SrtParseError {
  try {
    parseSrt(text);
  } catch (e) {
    expect(e).toBeInstanceOf(SrtParseError);
    return e as SrtParseError;
  }
  throw new Error('expected parseSrt to throw');
}

describe('parseSrt: accepted input', () => {
  it('parses cues with times in seconds and lines joined by \\n', () => {
    expect(parseSrt(SAMPLE)).toEqual([
      { index: 1, start: 1, end: 2.5, text: 'Hello\nworld' },
      { index: 2, start: 3, end: 4, text: 'Bye' },
    ]);
  });

  it('accepts a BOM, CRLF, trailing spaces, several blank lines and no final newline', () => {
    const text = '\uFEFF1  \r\n00:00:01,000 --> 00:00:02,500 \r\nHello \r\nworld\t\r\n\r\n\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nBye';
    expect(parseSrt(text)).toEqual(parseSrt(SAMPLE));
  });

  it('accepts leading and trailing blank lines', () => {
    expect(parseSrt(`\n\n${SAMPLE}\n\n\n`)).toEqual(parseSrt(SAMPLE));
  });

  it("accepts '.' as the millisecond separator and hours above 99", () => {
    const cues = parseSrt('1\n00:00:01.250 --> 123:00:00.001\nx\n');
    expect(cues[0]!.start).toBe(1.25);
    expect(cues[0]!.end).toBe(123 * 3600 + 0.001);
  });

  it('accepts non-consecutive and unordered indexes, overlapping cues and zero-length cues', () => {
    const cues = parseSrt('5\n00:00:05,000 --> 00:00:06,000\na\n\n2\n00:00:01,000 --> 00:00:01,000\nb\n\n9\n00:00:00,500 --> 00:00:07,000\nc\n');
    expect(cues.map((c) => c.index)).toEqual([5, 2, 9]);
    expect(cues[1]).toEqual({ index: 2, start: 1, end: 1, text: 'b' });
  });

  it('keeps RTL and mixed-script text as written', () => {
    const text = '1\n00:00:01,000 --> 00:00:02,000\nمرحبا بالعالم\nשלום 你好 hello\n';
    expect(parseSrt(text)[0]!.text).toBe('مرحبا بالعالم\nשלום 你好 hello');
  });

  it('parses an empty document (or only a BOM and blank lines) to no cues', () => {
    expect(parseSrt('')).toEqual([]);
    expect(parseSrt('\uFEFF\r\n\n  \n')).toEqual([]);
  });
});

describe('parseSrt: rejected input names the line and the problem', () => {
  const cases: [string, string, number, string, RegExp][] = [
    ['garbage first line', 'hello there\n', 1, 'bad_index', /expected a cue index/],
    ['garbage after a valid cue', `${SAMPLE}\nnot a cue\n`, 10, 'bad_index', /expected a cue index/],
    ['index 0', '0\n00:00:01,000 --> 00:00:02,000\nx\n', 1, 'bad_index', /positive integer/],
    ['negative index', '-3\n00:00:01,000 --> 00:00:02,000\nx\n', 1, 'bad_index', /expected a cue index/],
    ['fractional index', '1.5\n00:00:01,000 --> 00:00:02,000\nx\n', 1, 'bad_index', /expected a cue index/],
    ['missing index', '00:00:01,000 --> 00:00:02,000\nx\n', 1, 'bad_index', /missing cue index/],
    ['duplicate index', '1\n00:00:01,000 --> 00:00:02,000\nx\n\n1\n00:00:03,000 --> 00:00:04,000\ny\n', 5, 'duplicate_index', /duplicate cue index 1 \(first used on line 1\)/],
    ['missing timing line', '1\n\nx\n', 2, 'missing_timing', /missing timing line/],
    ['index at end of file', `${SAMPLE}\n3`, 10, 'missing_timing', /missing timing line/],
    ['bad timestamp', '1\n00:00:1,000 --> 00:00:02,000\nx\n', 2, 'bad_timing', /bad timestamp "00:00:1,000"/],
    ['minutes out of range', '1\n00:60:01,000 --> 01:00:02,000\nx\n', 2, 'bad_timing', /minutes must be 00-59/],
    ['seconds out of range', '1\n00:00:01,000 --> 00:00:60,000\nx\n', 2, 'bad_timing', /seconds must be 00-59/],
    ['two-digit milliseconds', '1\n00:00:01,00 --> 00:00:02,000\nx\n', 2, 'bad_timing', /bad timestamp/],
    ['negative timestamp', '1\n-00:00:01,000 --> 00:00:02,000\nx\n', 2, 'bad_timing', /negative timestamp/],
    ['text after the end timestamp', '1\n00:00:01,000 --> 00:00:02,000 X1:10 X2:20\nx\n', 2, 'bad_timing', /unexpected text after the end timestamp/],
    ['timing line that is text', '1\nhello\nx\n', 2, 'bad_timing', /expected a timing line/],
    ['bad arrow', '1\n00:00:01,000 -> 00:00:02,000\nx\n', 2, 'bad_arrow', /bad arrow/],
    ['long dash arrow', '1\n00:00:01,000 —> 00:00:02,000\nx\n', 2, 'bad_arrow', /bad arrow/],
    ['reversed timing', '1\n00:00:05,000 --> 00:00:02,000\nx\n', 2, 'reversed_timing', /end time 00:00:02,000 is before start time 00:00:05,000/],
    ['cue without text', '1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\ny\n', 2, 'missing_text', /cue 1 has no text/],
    ['last cue without text', `${SAMPLE}\n3\n00:00:05,000 --> 00:00:06,000\n`, 11, 'missing_text', /cue 3 has no text/],
    ['missing blank line between cues', '1\n00:00:01,000 --> 00:00:02,000\nx\n2\n00:00:03,000 --> 00:00:04,000\ny\n', 5, 'missing_blank_line', /missing blank line/],
    ['CRLF garbage keeps line numbers', '1\r\n00:00:01,000 --> 00:00:02,000\r\nx\r\n\r\n\r\n@@@\r\n', 6, 'bad_index', /expected a cue index \(a positive integer\), found "@@@"/],
  ];
  for (const [name, text, line, reason, message] of cases) {
    it(name, () => {
      const e = errorOf(text);
      expect(e.line).toBe(line);
      expect(e.details?.reason).toBe(reason);
      expect(e.message).toMatch(new RegExp(`^line ${line}: `));
      expect(e.message).toMatch(message);
      expect(e.status).toBe(400);
      expect(e.code).toBe('validation_error');
    });
  }
});

describe('validateSrt', () => {
  it('returns the cues of a valid document', () => {
    expect(validateSrt(SAMPLE)).toEqual({ ok: true, cues: parseSrt(SAMPLE) });
  });

  it('returns the parse error of an invalid document instead of throwing', () => {
    const r = validateSrt('1\n00:00:05,000 --> 00:00:02,000\nx\n');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBeInstanceOf(SrtParseError);
      expect(r.error.line).toBe(2);
      expect(r.error.details?.reason).toBe('reversed_timing');
    }
  });

  it('rejects a document with no cues unless allowEmpty is set', () => {
    for (const text of ['', '\uFEFF', '\n\r\n  \n']) {
      const r = validateSrt(text);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.details?.reason).toBe('empty');
        expect(r.error.line).toBe(1);
        expect(r.error.message).toBe('line 1: the SRT document has no cues');
      }
      expect(validateSrt(text, { allowEmpty: true })).toEqual({ ok: true, cues: [] });
    }
  });
});

describe('timing line recognition (linear scans)', () => {
  // The regular expressions the scans replaced (quadratic on long runs of digits or spaces): the
  // scans must accept exactly what they accepted.
  const ARROW_LINE = /^(.*?)\s*-->\s*(.*)$/;
  const LOOKS_LIKE_TIMESTAMP = /\d+:\d{2}:\d{2}[,.]\d{3}/;
  const alphabet = '0123456789:,.->  \t\r\u2028\u00a0ax'.split('');
  const tokens = ['-->', '-->', ' ', '\t', '\r', '\n', '\u2028', '\u2029', '\u00a0', 'a', '-', '>', '00:00:01,000', '1:22:33.444'];
  const text = fc.oneof(
    fc.array(fc.constantFrom(...tokens), { maxLength: 12 }).map((a) => a.join('')),
    fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((a) => a.join('')),
    fc.tuple(fc.array(fc.constantFrom(...alphabet), { maxLength: 8 }), fc.constantFrom('00:00:01,000', '1:22:33.444', '12:3:45,678'), fc.array(fc.constantFrom(...alphabet), { maxLength: 8 }), fc.constantFrom(' --> ', '-->', ' \t-->\u00a0', ' -> ', '\r-->'), fc.constantFrom('00:00:02,000', '99:59:59.999', 'x'), fc.array(fc.constantFrom(...alphabet), { maxLength: 8 })).map(
      ([a, t1, b, arrow, t2, c]) => `${a.join('')}${t1}${b.join('')}${arrow}${t2}${c.join('')}`,
    ),
  );

  it('splitArrow agrees with /^(.*?)\\s*-->\\s*(.*)$/', () => {
    fc.assert(
      fc.property(text, (line) => {
        const m = ARROW_LINE.exec(line);
        expect(splitArrow(line)).toEqual(m ? [m[1], m[2]] : undefined);
      }),
      { numRuns: Number(process.env.DUB_PROPERTY_RUNS ?? 5000) },
    );
  });

  it('looksLikeTimestamp agrees with /\\d+:\\d{2}:\\d{2}[,.]\\d{3}/ and isTimingLine with both', () => {
    fc.assert(
      fc.property(text, (line) => {
        expect(looksLikeTimestamp(line)).toBe(LOOKS_LIKE_TIMESTAMP.test(line));
        const m = ARROW_LINE.exec(line);
        expect(isTimingLine(line)).toBe(line.includes('-->') && m !== null && LOOKS_LIKE_TIMESTAMP.test(m[1]!) && LOOKS_LIKE_TIMESTAMP.test(m[2]!));
      }),
      { numRuns: Number(process.env.DUB_PROPERTY_RUNS ?? 5000) },
    );
  });

  it('takes a later arrow when a line terminator follows the first one (as the expression did)', () => {
    const line = '-->00:00:01,000\r-->00:00:02,000';
    expect(splitArrow(line)).toEqual(['-->00:00:01,000', '00:00:02,000']);
    expect(ARROW_LINE.exec(line)?.slice(1)).toEqual(['-->00:00:01,000', '00:00:02,000']);
    expect(splitArrow('a\rb --> c')).toBeUndefined();
  });

  it('quotes at most 40 characters of a bad line or timestamp', () => {
    const long = `1\n${'9'.repeat(10_000)} --> 00:00:01,000\nx\n`;
    const e = errorOf(long);
    expect(e.details?.reason).toBe('bad_timing');
    expect(e.message.length).toBeLessThan(200);
  });
});
