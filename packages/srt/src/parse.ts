/**
 * Strict SRT parsing.
 *
 * Accepted: a UTF-8 BOM, LF or CRLF line ends, trailing spaces on any line, leading or trailing
 * blank lines, one or more blank lines between cues, a missing final newline, '.' instead of ','
 * before the milliseconds, cue indexes that are not consecutive or not in order, cues that are not
 * in time order or overlap each other, and zero-length cues (end equal to start).
 *
 * Rejected with SrtParseError (1-based line, and `details.reason` for code that branches on it):
 * an index line that is not a positive integer (`bad_index`), a repeated index
 * (`duplicate_index`), a missing timing line (`missing_timing`), a malformed timestamp or timing
 * line, anything after the end timestamp included (`bad_timing`), an arrow other than `-->`
 * (`bad_arrow`), an end before the start (`reversed_timing`), a cue without text
 * (`missing_text`), a timing line inside cue text, i.e. a missing blank line (`missing_blank_line`),
 * and, in validateSrt, a document with no cue at all (`empty`).
 */
import { SrtParseError } from '@dub/core';
import { parseTimestampMs } from './timestamp.js';
import type { SrtCue } from './types.js';

export type SrtParseErrorReason =
  | 'bad_index'
  | 'duplicate_index'
  | 'missing_timing'
  | 'bad_timing'
  | 'bad_arrow'
  | 'reversed_timing'
  | 'missing_text'
  | 'missing_blank_line'
  | 'empty';

const INDEX = /^\d+$/;

// The timing line is recognized by scanning, not by regular expressions: the former
// /^(.*?)\s*-->\s*(.*)$/ and /\d+:\d{2}:\d{2}[,.]\d{3}/ backtrack quadratically on a long run of
// spaces or digits (a 160 KB line took 37 s). Both scans below are linear in the line length and
// accept exactly what those expressions accepted (parse.test.ts checks them against each other).

/** Code units of JavaScript's `\s` (the set String.prototype.trim removes). */
function isSpace(c: number): boolean {
  return (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The first and last line terminator (\n, \r, U+2028, U+2029: what `.` does not match), or -1. */
function terminators(line: string): [number, number] {
  let first = -1;
  let last = -1;
  for (const t of ['\n', '\r', '\u2028', '\u2029']) {
    const f = line.indexOf(t);
    if (f < 0) continue;
    if (first < 0 || f < first) first = f;
    last = Math.max(last, line.lastIndexOf(t));
  }
  return [first, last];
}

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/**
 * What /^(.*?)\s*-->\s*(.*)$/ captures, without its backtracking: the text before and after an
 * arrow, without the spaces around it; undefined when there is none. The arrow is the first one
 * with no line terminator before its leading spaces nor after its trailing spaces (`.` does not
 * match a terminator, `\s` does).
 */
export function splitArrow(line: string): [string, string] | undefined {
  let at = line.indexOf('-->');
  if (at < 0) return undefined;
  const [firstT, lastT] = terminators(line);
  for (; at >= 0; at = line.indexOf('-->', at + 3)) {
    let a = at;
    while (a > 0 && isSpace(line.charCodeAt(a - 1))) a--;
    if (firstT >= 0 && firstT < a) return undefined; // every later arrow has a terminator before it too
    let b = at + 3;
    while (b < line.length && isSpace(line.charCodeAt(b))) b++;
    if (lastT < b) return [line.slice(0, a), line.slice(b)];
  }
  return undefined;
}

/** Somewhere in `s` there is `D+:DD:DD[,.]DDD` (D a digit). One pass over the colons. */
export function looksLikeTimestamp(s: string): boolean {
  for (let p = s.indexOf(':'); p >= 0; p = s.indexOf(':', p + 1)) {
    if (!isDigitAt(s, p - 1) || !isDigitAt(s, p + 1) || !isDigitAt(s, p + 2) || s.charCodeAt(p + 3) !== 58) continue;
    const sep = s.charCodeAt(p + 6);
    if (isDigitAt(s, p + 4) && isDigitAt(s, p + 5) && (sep === 44 || sep === 46) && isDigitAt(s, p + 7) && isDigitAt(s, p + 8) && isDigitAt(s, p + 9)) return true;
  }
  return false;
}

function fail(reason: SrtParseErrorReason, message: string, line: number): never {
  throw new SrtParseError(message, line, { field: 'srt', details: { reason } });
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

function quote(line: string): string {
  return JSON.stringify(clip(line));
}

/** True for a line shaped like `<timestamp> --> <timestamp>` (already trimmed). */
export function isTimingLine(line: string): boolean {
  const m = splitArrow(line);
  return m !== undefined && looksLikeTimestamp(m[0]) && looksLikeTimestamp(m[1]);
}

/** Parse the timing line of a cue into [startMs, endMs]; `lineNo` is 1-based. */
function parseTiming(line: string, lineNo: number, index: number): [number, number] {
  const m = splitArrow(line);
  if (!m) {
    if (looksLikeTimestamp(line)) {
      fail('bad_arrow', `cue ${index}: bad arrow in timing line ${quote(line)} (expected "-->" between the two timestamps)`, lineNo);
    }
    fail('bad_timing', `cue ${index}: expected a timing line "HH:MM:SS,mmm --> HH:MM:SS,mmm", found ${quote(line)}`, lineNo);
  }
  const [startText, endText] = m;
  if (/\s/.test(endText)) {
    fail('bad_timing', `cue ${index}: unexpected text after the end timestamp in ${quote(line)}`, lineNo);
  }
  const start = parseTimestampMs(startText);
  if (typeof start === 'string') fail('bad_timing', `cue ${index}: ${start} before the arrow`, lineNo);
  const end = parseTimestampMs(endText);
  if (typeof end === 'string') fail('bad_timing', `cue ${index}: ${end} after the arrow`, lineNo);
  if (end < start) {
    fail('reversed_timing', `cue ${index}: end time ${clip(endText)} is before start time ${clip(startText)}`, lineNo);
  }
  return [start, end];
}

/**
 * Parse an SRT document. Throws SrtParseError (from @dub/core) naming the 1-based line and the
 * problem. A document with no cues (empty, or only blank lines) parses to an empty array; use
 * validateSrt to reject it.
 */
export function parseSrt(text: string): SrtCue[] {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = src.split('\n');
  const n = lines.length;
  const cues: SrtCue[] = [];
  const seen = new Map<number, number>();
  let i = 0;
  while (i < n) {
    const raw = lines[i]!.trim();
    if (raw === '') {
      i++;
      continue;
    }
    const indexLine = i + 1;
    if (!INDEX.test(raw)) {
      if (isTimingLine(raw)) fail('bad_index', 'missing cue index before this timing line', indexLine);
      fail('bad_index', `expected a cue index (a positive integer), found ${quote(raw)}`, indexLine);
    }
    const index = Number(raw);
    if (index < 1 || !Number.isSafeInteger(index)) {
      fail('bad_index', `cue index must be a positive integer, found ${quote(raw)}`, indexLine);
    }
    const first = seen.get(index);
    if (first !== undefined) fail('duplicate_index', `duplicate cue index ${index} (first used on line ${first})`, indexLine);
    seen.set(index, indexLine);
    i++;
    const timing = i < n ? lines[i]!.trim() : '';
    if (timing === '') fail('missing_timing', `cue ${index}: missing timing line after the index`, i < n ? i + 1 : indexLine);
    const [startMs, endMs] = parseTiming(timing, i + 1, index);
    const timingLine = i + 1;
    i++;
    const textLines: string[] = [];
    while (i < n) {
      const l = lines[i]!.trimEnd();
      if (l === '' || l.trimStart() === '') break;
      if (isTimingLine(l.trimStart())) {
        fail('missing_blank_line', `cue ${index}: timing line inside cue text (missing blank line before the next cue?)`, i + 1);
      }
      textLines.push(l);
      i++;
    }
    if (textLines.length === 0) fail('missing_text', `cue ${index} has no text`, timingLine);
    cues.push({ index, start: startMs / 1000, end: endMs / 1000, text: textLines.join('\n') });
  }
  return cues;
}

export interface ValidateSrtOptions {
  /** Accept a document with no cues (default false: the API requires at least one cue). */
  allowEmpty?: boolean;
}

export type SrtValidation = { ok: true; cues: SrtCue[] } | { ok: false; error: SrtParseError };

/**
 * Validate an SRT document without throwing. Unlike parseSrt, a document with no cues is invalid
 * (reason `empty`, line 1) unless `allowEmpty` is set.
 */
export function validateSrt(text: string, opts: ValidateSrtOptions = {}): SrtValidation {
  let cues: SrtCue[];
  try {
    cues = parseSrt(text);
  } catch (e) {
    if (e instanceof SrtParseError) return { ok: false, error: e };
    throw e;
  }
  if (cues.length === 0 && opts.allowEmpty !== true) {
    return { ok: false, error: new SrtParseError('the SRT document has no cues', 1, { field: 'srt', details: { reason: 'empty' } }) };
  }
  return { ok: true, cues };
}
