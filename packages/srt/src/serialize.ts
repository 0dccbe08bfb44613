/**
 * SRT serialization: cues are renumbered from 1, timestamps are `HH:MM:SS,mmm` rounded once to
 * whole milliseconds, cues are separated by one blank line and the document ends with a line end.
 * Text lines lose trailing whitespace and blank text lines are dropped (a blank line would end the
 * cue), so serialize(parse(serialize(x))) === serialize(x).
 */
import { ValidationError } from '@dub/core';
import { isTimingLine } from './parse.js';
import { formatTimestampMs, toMs } from './timestamp.js';
import type { SrtCue } from './types.js';

export interface SerializeSrtOptions {
  /** Line end: "\n" (default) or "\r\n". */
  eol?: '\n' | '\r\n';
}

/** Cue text as it will be written: trailing spaces removed, blank lines dropped. */
export function normalizeCueText(text: string): string[] {
  return text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
}

/**
 * Serialize cues to an SRT document. Throws ValidationError for negative or non-finite times, an
 * end before the start, empty text, or a text line shaped like a timing line.
 */
export function serializeSrt(cues: readonly Pick<SrtCue, 'start' | 'end' | 'text'>[], opts: SerializeSrtOptions = {}): string {
  const eol = opts.eol ?? '\n';
  const parts: string[] = [];
  cues.forEach((cue, i) => {
    const n = i + 1;
    if (!Number.isFinite(cue.start) || !Number.isFinite(cue.end) || cue.start < 0) {
      throw new ValidationError(`cue ${n}: times must be finite and not negative`, { field: 'cues' });
    }
    const start = toMs(cue.start);
    const end = toMs(cue.end);
    if (end < start) throw new ValidationError(`cue ${n}: end is before start`, { field: 'cues' });
    const lines = normalizeCueText(cue.text);
    if (lines.length === 0) throw new ValidationError(`cue ${n}: empty text`, { field: 'cues' });
    if (lines.some((l) => isTimingLine(l.trim()))) {
      throw new ValidationError(`cue ${n}: a text line looks like a timing line and would not parse back`, { field: 'cues' });
    }
    parts.push(`${n}${eol}${formatTimestampMs(start)} --> ${formatTimestampMs(end)}${eol}${lines.join(eol)}${eol}`);
  });
  return parts.join(eol);
}
