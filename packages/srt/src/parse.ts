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

const ARROW_LINE = /^(.*?)\s*-->\s*(.*)$/;
const LOOKS_LIKE_TIMESTAMP = /\d+:\d{2}:\d{2}[,.]\d{3}/;
const INDEX = /^\d+$/;

function fail(reason: SrtParseErrorReason, message: string, line: number): never {
  throw new SrtParseError(message, line, { field: 'srt', details: { reason } });
}

function quote(line: string): string {
  const s = line.length > 40 ? `${line.slice(0, 40)}…` : line;
  return JSON.stringify(s);
}

/** True for a line shaped like `<timestamp> --> <timestamp>` (already trimmed). */
export function isTimingLine(line: string): boolean {
  if (!line.includes('-->')) return false;
  const m = ARROW_LINE.exec(line);
  return m !== null && LOOKS_LIKE_TIMESTAMP.test(m[1]!) && LOOKS_LIKE_TIMESTAMP.test(m[2]!);
}

/** Parse the timing line of a cue into [startMs, endMs]; `lineNo` is 1-based. */
function parseTiming(line: string, lineNo: number, index: number): [number, number] {
  const m = ARROW_LINE.exec(line);
  if (!m) {
    if (LOOKS_LIKE_TIMESTAMP.test(line)) {
      fail('bad_arrow', `cue ${index}: bad arrow in timing line ${quote(line)} (expected "-->" between the two timestamps)`, lineNo);
    }
    fail('bad_timing', `cue ${index}: expected a timing line "HH:MM:SS,mmm --> HH:MM:SS,mmm", found ${quote(line)}`, lineNo);
  }
  const startText = m[1]!;
  const endText = m[2]!;
  if (/\s/.test(endText)) {
    fail('bad_timing', `cue ${index}: unexpected text after the end timestamp in ${quote(line)}`, lineNo);
  }
  const start = parseTimestampMs(startText);
  if (typeof start === 'string') fail('bad_timing', `cue ${index}: ${start} before the arrow`, lineNo);
  const end = parseTimestampMs(endText);
  if (typeof end === 'string') fail('bad_timing', `cue ${index}: ${end} after the arrow`, lineNo);
  if (end < start) {
    fail('reversed_timing', `cue ${index}: end time ${endText} is before start time ${startText}`, lineNo);
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
