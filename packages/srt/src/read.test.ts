import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SrtParseError } from '@dub/core';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ffmpegCues, ffprobeMissing, normaliseCueText } from './ffmpeg-cues.test-util.js';
import { decodeStrict } from './decode.js';
import { checkSrt, looksLikeWebVtt, readSrt, scanTimingLine, sourceSrtNotes, type SrtReadErrorReason, type SrtReading } from './read.js';

const missing = ffprobeMissing();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-srt-read-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

/** ffmpeg's cues for these bytes (decoded as `encoding`), normalised as readSrt normalises text; undefined without ffprobe. */
function ffmpegOf(bytes: Uint8Array | string, encoding = 'utf-8'): { start: number; end: number; text: string }[] | undefined {
  if (missing) return undefined;
  const file = path.join(tmp, `${n++}.srt`);
  fs.writeFileSync(file, bytes);
  // ffmpeg turns UTF-16 into UTF-8 and passes other encodings through as bytes.
  const label = /^utf-(16|32)/.test(encoding) ? 'utf-8' : encoding;
  return ffmpegCues(file)
    .map((c) => ({ start: c.start, end: c.end, text: normaliseCueText(decodeStrict(label, c.data)!) }))
    .filter((c) => c.text !== '');
}

function cuesOf(r: SrtReading) {
  return r.cues.map(({ start, end, text }) => ({ start, end, text }));
}

/** readSrt's cues, checked against ffmpeg's reading of the same bytes where ffprobe is installed. */
function read(input: string | Uint8Array): SrtReading {
  const r = readSrt(input);
  const theirs = ffmpegOf(input, r.encoding);
  if (theirs) expect(cuesOf(r), 'same cues as ffmpeg').toEqual(theirs);
  return r;
}

function refusal(input: string | Uint8Array): SrtParseError {
  const c = checkSrt(input);
  if (c.ok) throw new Error(`expected a refusal, got ${JSON.stringify(c.reading.cues)}`);
  expect(c.error.message).toMatch(/^line \d+: .+; fix: .+/);
  expect(c.error.details?.fix).toBeTypeOf('string');
  return c.error;
}

const kinds = (r: SrtReading) => r.notes.map((x) => x.kind);
const note = (r: SrtReading, kind: string) => r.notes.find((x) => x.kind === kind)?.message;
const bytes = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
const twoCues = (a: Buffer, b: Buffer) => bytes('1\n00:00:01,000 --> 00:00:02,000\n', a, '\n\n2\n00:00:03,000 --> 00:00:04,000\n', b, '\n');

describe(`readSrt: what ffmpeg accepts, with the same cues${missing ? ` (ffmpeg comparison skipped: ${missing})` : ' (each case also compared with ffprobe)'}`, () => {
  it('an index of 0, any non-negative integer, or none', () => {
    const r = read('0\n00:00:01,000 --> 00:00:02,000\nzero\n\n7\n00:00:03,000 --> 00:00:04,000\nseven\n\n00:00:05,000 --> 00:00:06,000\nnone\n');
    expect(cuesOf(r)).toEqual([
      { start: 1, end: 2, text: 'zero' },
      { start: 3, end: 4, text: 'seven' },
      { start: 5, end: 6, text: 'none' },
    ]);
    expect(r.cues.map((c) => c.index)).toEqual([1, 2, 3]);
    expect(r.notes).toEqual([]);
  });

  it('an index above 2^53', () => {
    const r = read('9007199254740993\n00:00:01,000 --> 00:00:02,000\nbig\n\n123456789012345678901234567890\n00:00:03,000 --> 00:00:04,000\nbigger\n');
    expect(cuesOf(r).map((c) => c.text)).toEqual(['big', 'bigger']);
  });

  it('coordinates after the times, and other text there, ignored with a note', () => {
    const r = read('1\n00:00:01,000 --> 00:00:02,000 X1:100 X2:600 Y1:20 Y2:50\nA\n\n2\n00:00:03,000 --> 00:00:04,000  align:start\nB\n');
    expect(cuesOf(r)).toEqual([
      { start: 1, end: 2, text: 'A' },
      { start: 3, end: 4, text: 'B' },
    ]);
    expect(note(r, 'coordinates_ignored')).toBe('coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 2)');
    expect(note(r, 'text_after_end_time_ignored')).toContain('"align:start"');
  });

  it("one- or two-digit fields, '.' or ',' before a fraction of 1-3 digits (read as milliseconds, as ffmpeg does)", () => {
    const r = read('1\n0:0:7,560 --> 0:0:9.1\nA\n\n2\n00:00:00.05 --> 1:02:03,004\nB\n\n3\n 00:01:02,5-->00:01:03,25\nC\n');
    expect(cuesOf(r)).toEqual([
      { start: 0.005, end: 3723.004, text: 'B' },
      { start: 7.56, end: 9.001, text: 'A' },
      { start: 62.005, end: 63.025, text: 'C' },
    ]);
    expect(note(r, 'short_fraction')).toMatch(/^4 times have fewer than 3 digits after the separator, read as milliseconds as ffmpeg does \(first at line 2: /);
    expect(kinds(r)).toContain('sorted');
  });

  it('minutes or seconds above 59 carry over, with a note', () => {
    const r = read('1\n00:00:75,000 --> 00:99:00,000\nA\n');
    expect(cuesOf(r)).toEqual([{ start: 75, end: 5940, text: 'A' }]);
    expect(kinds(r)).toEqual(['field_above_59']);
  });

  it('CR, LF or CRLF line ends, mixed too', () => {
    const lf = '1\n00:00:01,000 --> 00:00:02,000\nA\nB\n\n2\n00:00:03,000 --> 00:00:04,000\nC\n';
    const expected = cuesOf(read(lf));
    expect(cuesOf(read(lf.replace(/\n/g, '\r\n')))).toEqual(expected);
    const cr = read(lf.replace(/\n/g, '\r'));
    expect(cuesOf(cr)).toEqual(expected);
    expect(kinds(cr)).toEqual(['cr_line_ends']);
    expect(cuesOf(read('1\r\n00:00:01,000 --> 00:00:02,000\rA\nB\r\n\r2\n00:00:03,000 --> 00:00:04,000\r\nC'))).toEqual(expected);
  });

  it('empty cues dropped, counted in a note', () => {
    const r = read('1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\n   \n\n3\n00:00:05,000 --> 00:00:06,000\n\n4\n00:00:07,000 --> 00:00:08,000\nkept\n\n5\n00:00:09,000 --> 00:00:10,000\n');
    expect(cuesOf(r)).toEqual([{ start: 7, end: 8, text: 'kept' }]);
    expect(note(r, 'empty_cues_dropped')).toBe('4 empty cues dropped (first at line 2)');
  });

  it('BOMs: UTF-8, UTF-16 LE/BE and UTF-32 LE/BE', () => {
    const text = '1\n00:00:01,000 --> 00:00:02,000\nAh, ça va ? 你好 👋\n';
    const utf16be = Buffer.from(text, 'utf16le').swap16();
    const utf32 = (le: boolean) => {
      const cps = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)];
      const b = Buffer.alloc(cps.length * 4);
      cps.forEach((cp, i) => (le ? b.writeUInt32LE(cp, i * 4) : b.writeUInt32BE(cp, i * 4)));
      return b;
    };
    const want = [{ start: 1, end: 2, text: 'Ah, ça va ? 你好 👋' }];
    for (const [input, encoding] of [
      [bytes('\uFEFF', text), 'utf-8'],
      [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), 'utf-16le'],
      [Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]), 'utf-16be'],
    ] as const) {
      const r = read(input);
      expect(cuesOf(r), encoding).toEqual(want);
      expect(r.encoding).toBe(encoding);
      if (encoding !== 'utf-8') expect(note(r, 'decoded')).toBe(`decoded as ${encoding} (byte order mark)`);
    }
    // ffmpeg does not read UTF-32; the cues are the text's.
    for (const le of [true, false]) {
      const r = readSrt(utf32(le));
      expect(cuesOf(r)).toEqual(want);
      expect(r.encoding).toBe(le ? 'utf-32le' : 'utf-32be');
    }
    expect(cuesOf(readSrt(`\uFEFF${text}`))).toEqual(want);
  });

  it('a UTF-16 line that starts with a non-ASCII character: read whole (ffmpeg 5.1 loses its continuation bytes)', () => {
    const text = '1\n00:00:01,000 --> 00:00:02,000\nÇa va ?\n你好\n';
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(cuesOf(readSrt(utf16))).toEqual(cuesOf(read(text)));
    expect(readSrt(utf16).cues[0]!.text).toBe('Ça va ?\n你好');
    if (!missing) {
      // ff_text_peek_r8 keeps one byte of the UTF-8 it made from the UTF-16 unit: "Ç" becomes a lone 0xC3.
      const file = path.join(tmp, 'utf16-peek.srt');
      fs.writeFileSync(file, utf16);
      expect(ffmpegCues(file)[0]!.data.subarray(0, 2)).toEqual(Buffer.from([0xc3, 0x61]));
    }
  });

  it('blank lines inside cue text, and lines before the first cue: as ffmpeg, with notes', () => {
    const r = read('My subtitles\nby someone\n1\n00:00:01,000 --> 00:00:02,000\nHello\n\nworld\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n');
    expect(cuesOf(r)).toEqual([
      { start: 1, end: 2, text: 'Hello\nworld' },
      { start: 3, end: 4, text: 'Bye' },
    ]);
    expect(note(r, 'text_before_first_cue')).toBe('2 lines before the first timing line ignored (first at line 1: "My subtitles")');
    expect(note(r, 'blank_lines_in_text')).toBe('1 blank line inside cue text removed (line 4)');
  });

  it('number lines: an index when a timing line follows a cue with text, text otherwise (a trailing number too)', () => {
    const r = read('1\n00:00:01,000 --> 00:00:02,000\n1984\n2001\n\n2\n00:00:03,000 --> 00:00:04,000\nA\n-5\n3\n00:00:05,000 --> 00:00:06,000\nB\n42\n');
    expect(cuesOf(r).map((c) => c.text)).toEqual(['1984\n2001', 'A\n-5', 'B\n42']);
  });

  it('cues out of order are sorted (stable) and exact repeats dropped, with notes', () => {
    const r = read('1\n00:00:05,000 --> 00:00:06,000\nC\n\n2\n00:00:01,000 --> 00:00:02,000\nA\n\n3\n00:00:01,000 --> 00:00:02,000\nA\n\n4\n00:00:01,000 --> 00:00:03,000\nB\n');
    expect(cuesOf(r).map((c) => c.text)).toEqual(['A', 'B', 'C']);
    expect(note(r, 'sorted')).toMatch(/^1 cue was out of time order/);
    expect(note(r, 'duplicates_dropped')).toMatch(/^1 repeated cue/);
  });

  it('keeps leading spaces and markup; drops trailing white space', () => {
    const r = read('1\n00:00:01,000 --> 00:00:02,000\n  <i>indented</i>  \n{\\an8}top\t\n');
    expect(r.cues[0]!.text).toBe('  <i>indented</i>\n{\\an8}top');
  });

  it('a text given as a string that already lost characters is said so', () => {
    const r = readSrt('1\n00:00:01,000 --> 00:00:02,000\nCa va tr\uFFFDs bien\n');
    expect(note(r, 'replacement_characters')).toMatch(/^1 U\+FFFD replacement character in the text \(line 3\)/);
  });
});

describe('sourceSrtNotes: the notes of a source_srt read as SRT', () => {
  it('notes for SRT; none for WebVTT, plain text or a text readSrt refuses', () => {
    expect(sourceSrtNotes('0\r00:00:01,000 --> 00:00:02,000\rHello\r')).toEqual(['lines end with CR only (old Mac style): read as line ends']);
    expect(sourceSrtNotes('1\n00:00:01,000 --> 00:00:02,000\nHello\n')).toEqual([]);
    expect(looksLikeWebVtt('\uFEFF\n WEBVTT - title\n\n00:01.000 --> 00:02.000\nhi\n')).toBe(true);
    expect(looksLikeWebVtt('WEBVTTX\n')).toBe(false);
    expect(sourceSrtNotes('WEBVTT\n\n00:00:01.000 --> 00:00:02.000 align:start\nhi\n')).toEqual([]);
    expect(sourceSrtNotes('just words\nmore words\n')).toEqual([]);
    expect(sourceSrtNotes('1\n00:00:01 --> 00:00:02\nhi\n')).toEqual([]);
  });
});

describe('readSrt: legacy encodings by detection, never a replaced character', () => {
  const cases: [string, string, string, string][] = [
    ['shift_jis', '82b182ea82cd93fa967b8cea82cc8e9a968b82c582b78142', '82b182f182c982bf82cd814190a28a458149', 'これは日本語の字幕です。\nこんにちは、世界！'],
    ['big5', 'b36fac4fc163c5e9a4a4a4e5a672b9f5a143', 'a741a66ea141a540acc9a149', '這是繁體中文字幕。\n你好，世界！'],
    ['gb18030', 'd5e2cac7bcf2cce5d6d0cec4d7d6c4bba1a3', 'c4e3bac3a3accac0bde7a3a1', '这是简体中文字幕。\n你好，世界！'],
    ['windows-1252', '536368f66e65204772fcdf6520617573204dfc6e6368656e2096208453747261df6593', '4772f6df65', 'Schöne Grüße aus München – „Straße“\nGröße'],
  ];
  for (const [encoding, a, b, text] of cases) {
    it(encoding, () => {
      const r = read(twoCues(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')));
      expect(r.encoding).toBe(encoding);
      expect(r.cues.map((c) => c.text).join('\n')).toBe(text);
      expect(note(r, 'decoded')).toMatch(new RegExp(`^decoded as ${encoding} \\(detected: [^,]+, confidence \\d+ of 100\\)$`));
    });
  }

  it('a short Latin-2 file (Latin-1 and Latin-2 read it differently) is refused, naming the encodings tried', () => {
    const e = refusal(twoCues(Buffer.from('446f6272fd2064656e2c206a616b207365206de174653f', 'hex'), Buffer.from('44ec6b756a692c20646f62f8652e', 'hex')));
    expect(e.details?.reason).toBe('encoding');
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/are not UTF-8 and the encoding cannot be told: .+ read it differently \(tried utf-8, windows-1252, iso-8859-2/);
    expect(e.message).toMatch(/fix: save the file as UTF-8/);
    // Named, it is read.
    expect(readSrt(twoCues(Buffer.from('446f6272fd', 'hex'), Buffer.from('44ec6b756a69', 'hex')), { encoding: 'iso-8859-2' }).cues.map((c) => c.text)).toEqual(['Dobrý', 'Děkuji']);
  });

  it('a file that mixes UTF-8 with another encoding is refused naming both lines', () => {
    const e = refusal(twoCues(Buffer.from('Café'), Buffer.from([0x43, 0x61, 0x66, 0xe9])));
    expect(e.details?.reason).toBe('encoding');
    expect(e.message).toBe('line 7: the bytes 0xE9 0x0A are not UTF-8, but line 3 holds UTF-8 (0xC3 0xA9): the file mixes two encodings; fix: save every part of the file as UTF-8');
  });

  it('bytes no encoding reads cleanly are refused; UTF-16 without a BOM is named', () => {
    const e = refusal(twoCues(Buffer.from([0x81, 0x81, 0x81, 0x00, 0x01]), Buffer.from('ok')));
    expect(e.details?.reason).toBe('encoding');
    expect(e.message).toMatch(/tried utf-8/);
    const nobom = refusal(Buffer.from('1\n00:00:01,000 --> 00:00:02,000\nHello world, again and again\n', 'utf16le'));
    expect(nobom.message).toMatch(/^line 1: the file looks like UTF-16LE without a byte order mark/);
    const broken = refusal(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('1\n00:00:01,000 --> 00:00:02,000\n', 'utf16le'), Buffer.from([0x00, 0xd8, 0x41, 0x00])]));
    expect(broken.line).toBe(3);
    expect(broken.message).toMatch(/UTF-16LE \(by its byte order mark\) but the bytes 0x00 0xD8/);
    const badUtf8 = refusal(bytes('\uFEFF1\n00:00:01,000 --> 00:00:02,000\n', Buffer.from([0xc3, 0x28]), '\n'));
    expect(badUtf8.line).toBe(3);
  });
});

describe('readSrt: refusals name the line, the problem and the fix', () => {
  const cases: [string, string, SrtReadErrorReason, number, RegExp][] = [
    ['no milliseconds (ffmpeg skips the cue)', '1\n00:00:01 --> 00:00:02\nA\n', 'broken_timing', 2, /"00:00:01" has no milliseconds/],
    ['a short arrow (ffmpeg makes it text of the cue before)', '1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:03,000 -> 00:00:04,000\nB\n', 'broken_timing', 6, /its arrow is not "-->"/],
    ["':' before the milliseconds", '1\n00:00:01:000 --> 00:00:02:000\nA\n', 'broken_timing', 2, /uses ':' before the milliseconds/],
    ['a NUL character (ffmpeg stops reading)', '1\n00:00:01,000 --> 00:00:02,000\nA\0B\n', 'nul_character', 3, /NUL character/],
    ['a negative time', '1\n-00:00:01,000 --> 00:00:02,000\nA\n', 'bad_timing', 2, /start time .* is negative/],
    ['a fraction of 4 digits (ffmpeg: 1.234 s)', '1\n00:00:01,000 --> 00:00:02,1234\nA\n', 'bad_timing', 2, /4 digits after the separator \(ffmpeg would read them as 1234 ms\)/],
    ['a field out of range', '1\n99999999999:00:01,000 --> 99999999999:00:02,000\nA\n', 'bad_timing', 2, /out of range/],
    ['end before start', '1\n00:00:02,000 --> 00:00:01,000\nA\n', 'reversed_timing', 2, /end time is before the start time/],
    ['a numbered text line ffmpeg would drop', '1\n00:00:01,000 --> 00:00:02,000\nA\n5 apples\n00:00:03,000 --> 00:00:04,000\nB\n', 'dropped_text', 4, /"5 apples" starts with a number .* ffmpeg takes it for the next cue's index/],
    ['no timing line at all', 'just some text\n', 'no_cues', 1, /no timing line was found/],
    ['only empty cues', '1\n00:00:01,000 --> 00:00:02,000\n\n', 'no_cues', 1, /its only cue has no text/],
  ];
  for (const [what, text, reason, line, message] of cases) {
    it(what, () => {
      const e = refusal(text);
      expect(e.details?.reason).toBe(reason);
      expect(e.line).toBe(line);
      expect(e.message).toMatch(message);
    });
  }

  it('allowEmpty accepts a document without cues', () => {
    expect(readSrt('', { allowEmpty: true }).cues).toEqual([]);
  });

  it('quotes at most 60 characters of a bad line', () => {
    const e = refusal(`1\n${'9'.repeat(100_000)}:00 --> 00:00:02\nx\n`);
    expect(e.message.length).toBeLessThan(400);
  });
});

describe('readSrt: linear time on any input', () => {
  // 4 MB of each: linear reading takes well under a second on a quiet machine (a few seconds under
  // heavy load, 23 s once at nice 5 with the load at 14); anything quadratic in a line or in the
  // document would take hours at this size, so the bound is a minute.
  const time = (f: () => unknown) => {
    const t = performance.now();
    f();
    return performance.now() - t;
  };
  const M = 4_000_000;
  const LINEAR_BOUND_MS = 60_000;
  const hostile: [string, string][] = [
    ['digits', `1\n00:00:01,000 --> 00:00:02,000\n${'1'.repeat(M)}\n`],
    ['spaces and arrows', `1\n00:00:01,000 --> 00:00:02,000\n${' - >'.repeat(M / 4)}1:2:3\n`],
    ['colons', `1\n00:00:01,000 --> 00:00:02,000\n${'1:'.repeat(M / 2)}-->\n`],
    ['timing-shaped lines', '1\n00:00:01,000 --> 00:00:02,000\nx\n'.repeat(M / 33)],
    ['number lines', `1\n00:00:01,000 --> 00:00:02,000\n${'5\n'.repeat(M / 2)}`],
    ['a long timing line', `${'0'.repeat(M / 2)}1:00:01,000 --> 00:00:02,000 ${'X1:'.repeat(M / 6)}\nx\n`],
    ['blank lines', `1\n00:00:01,000 --> 00:00:02,000\nx${'\r\n'.repeat(M / 2)}y\n`],
    ['white space', `1\n00:00:01,000 --> 00:00:02,000\n${' \t'.repeat(M / 2)}x\n`],
  ];
  for (const [what, text] of hostile) {
    it(what, () => {
      expect(time(() => checkSrt(text))).toBeLessThan(LINEAR_BOUND_MS);
    });
  }

  it('4 MB that is not UTF-8 is detected and decoded in linear time too', () => {
    const line = Buffer.from('536368f66e65204772fcdf6520617573204dfc6e6368656e0a', 'hex');
    const big = Buffer.concat([Buffer.from('1\n00:00:01,000 --> 00:00:02,000\n'), ...Array.from({ length: M / line.length }, () => line)]);
    expect(time(() => checkSrt(big))).toBeLessThan(LINEAR_BOUND_MS);
  });
});

describe(`readSrt against ffmpeg on random SRT-like files${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const lines = fc.constantFrom(
    '1', '0', '42', ' 7', '-3', '+2', '12 ', '5 apples', '', '', ' ', 'Hello', '  indented', '<i>it</i>', 'X',
    '00:00:01,000 --> 00:00:02,000', '00:00:03.5 --> 00:00:04.25', '0:0:5,000-->0:0:6,000', '00:00:07,000 --> 00:00:08,000 X1:1 X2:2 Y1:3 Y2:4',
    '00:00:01,000 --> 00:00:02,000', '00:00:09,000 --> 00:00:09,000', '\t00:00:10,000 --> 00:00:11,000 tail', '00:01:00,000 --> 00:00:59,000',
    '00:00:01 --> 00:00:02', '1 --> 2', 'a --> b',
  );
  const ends = fc.constantFrom('\n', '\r\n', '\r');
  it.skipIf(missing !== undefined)('accepts with the same cues, or refuses with a line, a problem and a fix', () => {
    let compared = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(lines, ends), { maxLength: 16 }), (ls) => {
        const text = ls.map(([l, e]) => l + e).join('');
        const c = checkSrt(text);
        const theirs = ffmpegOf(text)!;
        if (c.ok) {
          compared++;
          expect(cuesOf(c.reading)).toEqual(theirs);
        } else {
          expect(c.error.message).toMatch(/^line \d+: .+; fix: .+/);
        }
      }),
      { numRuns: Number(process.env.SRT_FFMPEG_RUNS ?? 60), seed: Number(process.env.SRT_FFMPEG_SEED ?? 24) },
    );
    expect(compared).toBeGreaterThan(10);
  });

  it('scanTimingLine reads what sscanf reads', () => {
    expect(scanTimingLine('1:2:3.4-->5:6:7,8 junk')?.rest).toBe(' junk');
    expect(scanTimingLine('00:00:01 ,000 --> 00:00:02,000')).toBeUndefined(); // %[,.] skips no space
    expect(scanTimingLine('00:00:01, 500 --> 00:00:02,000')?.start[3]!.value).toBe(500); // %d does
    expect(scanTimingLine('00:00:01,000 -- > 00:00:02,000')).toBeUndefined();
  });
});
