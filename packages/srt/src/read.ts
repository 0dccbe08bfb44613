/**
 * The tolerant SRT reader for input (reference SRTs, source SRTs): it reads what ffmpeg's SubRip
 * demuxer (libavformat/srtdec.c, ffmpeg 5.1) reads and gives the same cues, refuses, naming the
 * line, the problem and the fix, where ffmpeg would silently garble the file, and records every
 * normalisation it made. The strict parser (parse.ts) stays for what this project writes.
 *
 * ffmpeg's reading, which this follows:
 * - a line ends at CR, LF or CRLF; empty lines are skipped everywhere (inside a cue's text too);
 * - a timing line is what `sscanf("%d:%d:%d%*1[,.]%d --> %d:%d:%d%*1[,.]%d")` reads: one or more
 *   digits per field, ',' or '.' before the fraction, the fraction read as an integer number of
 *   milliseconds (`,5` is 5 ms), spaces optional around the arrow, anything after the end time
 *   (`X1:...` coordinates) ignored;
 * - lines before the first timing line are ignored; after it, every line that is not a timing line
 *   is text of the current cue, except a line starting with a number (`strtol`), which is held
 *   back: it is dropped as the next cue's index when a timing line follows and the cue already has
 *   text, and is text otherwise (at the end of the file it is always text);
 * - a cue without text is dropped; cues are sorted by start time (stable) and an exact repeat of
 *   the previous cue (same times, same text) is dropped.
 * Where this reader differs, it refuses: a NUL character (ffmpeg stops reading there), a line
 * that looks like a timing line but is not one (ffmpeg would make it cue text), a negative time,
 * a fraction of more than 3 digits (`,1234` would be 1.234 s), an end before the start (ffmpeg
 * rewrites the duration), a field out of range, and a non-number line held back and then dropped
 * before a timing line (ffmpeg loses that text). Text lines lose their trailing white space and
 * lines of white space only are dropped (a cue left with no text is an empty cue). A line longer
 * than 4095 bytes stays one line (ffmpeg cuts it into pieces).
 */
import { SrtParseError } from '@dub/core';
import { decodeSrtBytes, type DecodeSrtOptions } from './decode.js';
import type { SrtCue } from './types.js';

export type SrtReadNoteKind =
  | 'decoded'
  | 'replacement_characters'
  | 'cr_line_ends'
  | 'text_before_first_cue'
  | 'empty_cues_dropped'
  | 'coordinates_ignored'
  | 'text_after_end_time_ignored'
  | 'short_fraction'
  | 'field_above_59'
  | 'blank_lines_in_text'
  | 'sorted'
  | 'duplicates_dropped';

/** One kind of normalisation, with how often it happened and where first. */
export interface SrtReadNote {
  kind: SrtReadNoteKind;
  count: number;
  /** 1-based line of the first occurrence (1 for the file as a whole). */
  line: number;
  /** E.g. "3 empty cues dropped (first at line 12)", "decoded as windows-1252 (detected, confidence 66 of 100)". */
  message: string;
}

export type SrtReadErrorReason =
  | 'encoding'
  | 'nul_character'
  | 'broken_timing'
  | 'bad_timing'
  | 'reversed_timing'
  | 'dropped_text'
  | 'no_cues';

export interface ReadSrtOptions extends DecodeSrtOptions {
  /** Accept a document without any cue (default false: reading refuses it with `no_cues`). */
  allowEmpty?: boolean;
}

/** A cue read from a file: `index` is its 1-based position after sorting, `line` its timing line. */
export interface ReadCue extends SrtCue {
  line: number;
}

export interface SrtReading {
  cues: ReadCue[];
  /** The document as text (decoded from bytes, without a BOM): what to pass on where a string is needed. */
  text: string;
  /** The encoding the bytes were read as ("utf-8" for text given as a string). */
  encoding: string;
  notes: SrtReadNote[];
}

function refuse(reason: SrtReadErrorReason, line: number, problem: string, fix: string): never {
  throw new SrtParseError(`${problem}; fix: ${fix}`, line, { field: 'srt', details: { reason, fix } });
}

function shown(s: string): string {
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
}

/** C's isspace in the C locale (what strtol and sscanf skip); CR and LF never occur inside a line. */
function isCSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * What `strtol(line, &end, 10)` does, as far as srtdec.c looks at it: whether any digit was read,
 * whether the value is negative (a '-' and a digit other than 0), and whether the whole line was
 * consumed.
 */
function strtol(s: string): { digits: boolean; negative: boolean; whole: boolean } {
  let i = 0;
  while (i < s.length && isCSpace(s.charCodeAt(i))) i++;
  let minus = false;
  if (s[i] === '+' || s[i] === '-') minus = s[i++] === '-';
  const from = i;
  let nonZero = false;
  while (i < s.length && isDigit(s.charCodeAt(i))) {
    if (s[i] !== '0') nonZero = true;
    i++;
  }
  if (i === from) return { digits: false, negative: false, whole: false };
  return { digits: true, negative: minus && nonZero, whole: i === s.length };
}

interface Field {
  value: number;
  digits: number;
  negative: boolean;
  /** Too many digits for ffmpeg's int. */
  overflow: boolean;
}

interface Timing {
  start: Field[];
  end: Field[];
  /** What follows the end time. */
  rest: string;
}

/** sscanf's %d: C white space, a sign, one or more digits. */
function scanInt(s: string, at: number): [Field, number] | undefined {
  let i = at;
  while (i < s.length && isCSpace(s.charCodeAt(i))) i++;
  let negative = false;
  if (s[i] === '+' || s[i] === '-') negative = s[i++] === '-';
  const from = i;
  let value = 0;
  let overflow = false;
  for (let c = s.charCodeAt(i); c >= 48 && c <= 57; c = s.charCodeAt(++i)) {
    if (!overflow) {
      value = value * 10 + (c - 48);
      if (value > 2147483647) overflow = true;
    }
  }
  if (i === from) return undefined;
  return [{ value: overflow ? 0 : value, digits: i - from, negative, overflow }, i];
}

/** `%d:%d:%d%*1[,.]%d` from `at`: four fields and where it stopped, or undefined. */
function scanTime(s: string, at: number): [Field[], number] | undefined {
  const fields: Field[] = [];
  let i = at;
  for (let k = 0; k < 4; k++) {
    if (k === 1 || k === 2) {
      if (s.charCodeAt(i) !== 58) return undefined;
      i++;
    } else if (k === 3) {
      const c = s.charCodeAt(i);
      if (c !== 44 && c !== 46) return undefined;
      i++;
    }
    const r = scanInt(s, i);
    if (!r) return undefined;
    fields.push(r[0]);
    i = r[1];
  }
  return [fields, i];
}

/** What ffmpeg's get_event_info accepts as a timing line (8 fields read), or undefined. Linear. */
export function scanTimingLine(line: string): Timing | undefined {
  const a = scanTime(line, 0);
  if (!a) return undefined;
  let i = a[1];
  while (i < line.length && isCSpace(line.charCodeAt(i))) i++;
  if (!line.startsWith('-->', i)) return undefined;
  i += 3;
  while (i < line.length && isCSpace(line.charCodeAt(i))) i++;
  const b = scanTime(line, i);
  if (!b) return undefined;
  return { start: a[0], end: b[0], rest: line.slice(b[1]) };
}

/** An arrow-like token: '>' right after '-', '–', '—' or '=' (spaces between allowed), as in "-->", "->", "-- >", "=>". */
function hasArrow(line: string): boolean {
  for (let p = line.indexOf('>'); p >= 0; p = line.indexOf('>', p + 1)) {
    let q = p - 1;
    while (q >= 0 && line.charCodeAt(q) === 32) q--;
    const c = line[q];
    if (c === '-' || c === '–' || c === '—' || c === '=') return true;
  }
  return false;
}

/** Two or more `digit:digit` places (a line that carries times). */
function timeShaped(line: string): boolean {
  let n = 0;
  for (let p = line.indexOf(':'); p >= 0; p = line.indexOf(':', p + 1)) {
    if (isDigit(line.charCodeAt(p - 1)) && isDigit(line.charCodeAt(p + 1)) && ++n >= 2) return true;
  }
  return false;
}

/** Why a time-shaped line with an arrow is not a timing line, as precisely as one look can tell. */
function brokenTimingProblem(line: string): string {
  const t = line.trim();
  const arrow = t.indexOf('-->');
  if (arrow < 0) return `${shown(t)} looks like a timing line but its arrow is not "-->"`;
  for (const side of [t.slice(0, arrow).trim(), t.slice(arrow + 3).trim()]) {
    const space = side.search(/\s/);
    const first = space < 0 ? side : side.slice(0, space);
    if (/^\d+:\d+:\d+$/.test(first)) return `${shown(t)} looks like a timing line but ${shown(first)} has no milliseconds`;
    if (/^\d+:\d+:\d+:\d+$/.test(first)) return `${shown(t)} looks like a timing line but uses ':' before the milliseconds`;
    if (/^\d+:\d+[,.]\d+$/.test(first)) return `${shown(t)} looks like a timing line but ${shown(first)} has no hours field`;
  }
  return `${shown(t)} looks like a timing line but is not one`;
}

/** A number with white space around it: an index line, even with trailing spaces. */
const NUMBER_AND_SPACES = /^[ \t\v\f]*[+-]?\d+[ \t\v\f]*$/;

const TIMING_FIX = 'write it as HH:MM:SS,mmm --> HH:MM:SS,mmm (e.g. 00:01:02,500 --> 00:01:04,000), or remove the line if it is not one';

class Notes {
  private readonly byKind = new Map<SrtReadNoteKind, { count: number; line: number; example?: string }>();
  add(kind: SrtReadNoteKind, line: number, example?: string, count = 1): void {
    const n = this.byKind.get(kind);
    if (n) n.count += count;
    else this.byKind.set(kind, { count, line, ...(example !== undefined ? { example } : {}) });
  }
  list(encoding: { label: string; message?: string }): SrtReadNote[] {
    const out: SrtReadNote[] = [];
    if (encoding.message) out.push({ kind: 'decoded', count: 1, line: 1, message: encoding.message });
    const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    const first = (line: number, n: number) => (n === 1 ? `line ${line}` : `first at line ${line}`);
    for (const [kind, { count, line, example }] of this.byKind) {
      const at = first(line, count);
      const message = {
        decoded: '',
        replacement_characters: `${plural(count, 'U+FFFD replacement character', 'U+FFFD replacement characters')} in the text (${at}): characters were lost before the text reached this reader`,
        cr_line_ends: 'lines end with CR only (old Mac style): read as line ends',
        text_before_first_cue: `${plural(count, 'line', 'lines')} before the first timing line ignored (${at}${example !== undefined ? `: ${shown(example)}` : ''})`,
        empty_cues_dropped: `${plural(count, 'empty cue', 'empty cues')} dropped (${at})`,
        coordinates_ignored: `coordinates (X1: X2: Y1: Y2:) ignored on ${plural(count, 'timing line', 'timing lines')} (${at})`,
        text_after_end_time_ignored: `text after the end time ignored on ${plural(count, 'timing line', 'timing lines')} (${at}${example !== undefined ? `: ${shown(example)}` : ''})`,
        short_fraction: `${plural(count, 'time has', 'times have')} fewer than 3 digits after the separator, read as milliseconds as ffmpeg does (${at}: ${example ?? ''}); if they meant tenths or hundredths of a second, write 3 digits`,
        field_above_59: `${plural(count, 'time has', 'times have')} minutes or seconds above 59, carried into the next unit (${at}: ${example ?? ''})`,
        blank_lines_in_text: `${plural(count, 'blank line', 'blank lines')} inside cue text removed (${at})`,
        sorted: `${plural(count, 'cue was', 'cues were')} out of time order: sorted by start time (${at})`,
        duplicates_dropped: `${plural(count, 'repeated cue', 'repeated cues')} (same times and text as the one before) dropped (${at})`,
      }[kind];
      out.push({ kind, count, line, message });
    }
    return out;
  }
}

function checkTime(fields: Field[], line: number, side: string, raw: string, notes: Notes): number {
  const [h, m, s, f] = fields as [Field, Field, Field, Field];
  if (fields.some((x) => x.negative)) {
    refuse('bad_timing', line, `the ${side} time in ${shown(raw.trim())} is negative`, 'times start at 00:00:00,000; shift the cues so that none is negative');
  }
  if (fields.some((x) => x.overflow)) refuse('bad_timing', line, `a field of the ${side} time in ${shown(raw.trim())} is out of range`, TIMING_FIX);
  if (f.digits > 3) {
    refuse('bad_timing', line, `the ${side} time in ${shown(raw.trim())} has ${f.digits} digits after the separator (ffmpeg would read them as ${f.value} ms)`, 'write the milliseconds with exactly 3 digits');
  }
  if (f.digits < 3) notes.add('short_fraction', line, raw.trim());
  if (m.value > 59 || s.value > 59) notes.add('field_above_59', line, raw.trim());
  return (h.value * 3600 + m.value * 60 + s.value) * 1000 + f.value;
}

interface RawCue {
  start: number;
  end: number;
  line: number;
  lines: string[];
  /** Whether a blank line separated two of its text lines. */
  gap: boolean;
}

/**
 * Read an SRT document: bytes (decoded as decode.ts says) or text. Returns the cues as ffmpeg
 * reads them, the encoding and the normalisation notes; throws SrtParseError (`line`,
 * `details.reason`, `details.fix`) where it refuses.
 */
export function readSrt(input: string | Uint8Array, opts: ReadSrtOptions = {}): SrtReading {
  let text: string;
  let encoding: { label: string; message?: string };
  if (typeof input === 'string') {
    text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
    encoding = { label: 'utf-8' };
  } else {
    const d = decodeSrtBytes(input, opts);
    text = d.text.charCodeAt(0) === 0xfeff ? d.text.slice(1) : d.text;
    const message =
      d.how === 'detected'
        ? d.detected!.byLettersOf
          ? `decoded as ${d.encoding} (chosen by the letters of ${d.detected!.byLettersOf}: the only reading that writes it with its own letters, where detection alone could not tell)`
          : `decoded as ${d.encoding} (detected: ${d.detected!.name}, confidence ${d.detected!.confidence} of 100)`
        : d.how === 'given'
          ? `decoded as ${d.encoding} (as named)`
          : d.encoding !== 'utf-8'
            ? `decoded as ${d.encoding} (byte order mark)`
            : undefined;
    encoding = { label: d.encoding, ...(message ? { message } : {}) };
  }
  const notes = new Notes();
  const lines = text.includes('\r') ? text.split(/\r\n|\r|\n/) : text.split('\n');
  if (text.includes('\r') && !text.includes('\n')) notes.add('cr_line_ends', 1);

  const raw: RawCue[] = [];
  let cur: RawCue | undefined;
  let cache: { text: string; line: number; afterBlank: boolean } | undefined;
  let blankSince = false;

  const close = (appendCache: boolean, nextLine: number): void => {
    if (!cur) return;
    if (cache) {
      if (appendCache) push(cache.text, cache.afterBlank);
      else if (!strtol(cache.text).whole && !NUMBER_AND_SPACES.test(cache.text)) {
        refuse(
          'dropped_text',
          cache.line,
          `${shown(cache.text)} starts with a number and comes right before the timing line on line ${nextLine}, so ffmpeg takes it for the next cue's index and drops it`,
          'put the cue index on its own line before the timing line, with a blank line before it',
        );
      }
    }
    cache = undefined;
    raw.push(cur);
  };
  const push = (l: string, afterBlank: boolean): void => {
    if (afterBlank && cur!.lines.length > 0 && l.trim() !== '') cur!.gap = true;
    cur!.lines.push(l);
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const no = i + 1;
    if (line === '') {
      blankSince = true;
      continue;
    }
    if (line.includes('\0')) {
      refuse('nul_character', no, 'the line holds a NUL character (ffmpeg stops reading there)', 'the file is probably binary or UTF-16 without a byte order mark: save it as UTF-8');
    }
    if (line.includes('\uFFFD')) notes.add('replacement_characters', no);
    const t = scanTimingLine(line);
    if (!t) {
      if (hasArrow(line) && timeShaped(line)) refuse('broken_timing', no, brokenTimingProblem(line), TIMING_FIX);
      if (!cur) {
        if (!NUMBER_AND_SPACES.test(line) && line.trim() !== '') notes.add('text_before_first_cue', no, line.trim());
        continue;
      }
      if (cache) {
        push(cache.text, cache.afterBlank);
        cache = undefined;
      }
      const n = strtol(line);
      if (!n.digits || n.negative) push(line, blankSince);
      else cache = { text: line, line: no, afterBlank: blankSince };
      blankSince = false;
      continue;
    }
    // A timing line.
    const start = checkTime(t.start, no, 'start', line, notes);
    const end = checkTime(t.end, no, 'end', line, notes);
    if (end < start) refuse('reversed_timing', no, `the end time is before the start time in ${shown(line.trim())}`, 'correct the times (the end comes after the start)');
    if (/^ +X1:/.test(t.rest)) notes.add('coordinates_ignored', no);
    else if (t.rest.trim() !== '') notes.add('text_after_end_time_ignored', no, t.rest.trim());
    if (cur) {
      const standalone = cache === undefined || (strtol(cache.text).whole && !strtol(cache.text).negative);
      close(cur.lines.length === 0 && !standalone, no);
    }
    cur = { start, end, line: no, lines: [], gap: false };
    cache = undefined;
    blankSince = false;
  }
  close(true, lines.length);

  // ffmpeg's queue: cues with text, stably sorted by start, exact repeats of the previous one dropped.
  const withText = raw.filter((c) => c.lines.length > 0);
  const emptyRaw = raw.filter((c) => c.lines.length === 0);
  let unsorted = 0;
  let firstUnsorted = 0;
  for (let k = 1; k < withText.length; k++) {
    if (withText[k]!.start < withText[k - 1]!.start) {
      if (unsorted++ === 0) firstUnsorted = withText[k]!.line;
    }
  }
  const sorted = unsorted > 0 ? withText.map((c, k) => [c, k] as const).sort((a, b) => a[0].start - b[0].start || a[1] - b[1]).map(([c]) => c) : withText;
  if (unsorted > 0) notes.add('sorted', firstUnsorted, undefined, unsorted);
  const kept: RawCue[] = [];
  for (const c of sorted) {
    const last = kept[kept.length - 1];
    if (last && last.start === c.start && last.end === c.end && last.lines.join('\n') === c.lines.join('\n')) notes.add('duplicates_dropped', c.line);
    else kept.push(c);
  }
  const empties: number[] = emptyRaw.map((c) => c.line);
  const cues: ReadCue[] = [];
  for (const c of kept) {
    const textLines = c.lines.map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
    if (textLines.length === 0) {
      empties.push(c.line);
      continue;
    }
    if (c.gap) notes.add('blank_lines_in_text', c.line);
    cues.push({ index: cues.length + 1, start: c.start / 1000, end: c.end / 1000, text: textLines.join('\n'), line: c.line });
  }
  if (empties.length > 0) notes.add('empty_cues_dropped', empties.reduce((a, b) => Math.min(a, b)), undefined, empties.length);
  if (cues.length === 0 && opts.allowEmpty !== true) {
    const hint = raw.length > 0 ? `its ${raw.length === 1 ? 'only cue has' : `${raw.length} cues have`} no text` : 'no timing line was found';
    refuse('no_cues', 1, `the SRT document has no cue: ${hint}`, 'give a file with at least one cue: an index line, a timing line "HH:MM:SS,mmm --> HH:MM:SS,mmm", then the text');
  }
  return { cues, text, encoding: encoding.label, notes: notes.list(encoding) };
}

export type SrtReadCheck = { ok: true; reading: SrtReading } | { ok: false; error: SrtParseError };

/** readSrt without throwing (for validation). */
export function checkSrt(input: string | Uint8Array, opts: ReadSrtOptions = {}): SrtReadCheck {
  try {
    return { ok: true, reading: readSrt(input, opts) };
  } catch (e) {
    if (e instanceof SrtParseError) return { ok: false, error: e };
    throw e;
  }
}

/** The notes as one line each (for transcripts, scripts and summaries). */
export function srtNoteMessages(reading: Pick<SrtReading, 'notes'>): string[] {
  return reading.notes.map((n) => n.message);
}

/** Whether a source text is WebVTT (it starts with its header, after an optional BOM and white space). */
export function looksLikeWebVtt(text: string): boolean {
  return /^\uFEFF?\s*WEBVTT(?:[ \t\r\n]|$)/.test(text.slice(0, 4096));
}

/**
 * The normalisation notes of a source text (a source_srt) read as SRT: [] for WebVTT, for text
 * without any timing line (read as plain text elsewhere) and for text readSrt refuses (the
 * refusal is the caller's to report).
 */
export function sourceSrtNotes(text: string): string[] {
  if (looksLikeWebVtt(text)) return [];
  const c = checkSrt(text);
  return c.ok ? srtNoteMessages(c.reading) : [];
}
