/**
 * SRT timestamps: `HH:MM:SS,mmm` (hours have two or more digits). The parser also accepts '.'
 * as the millisecond separator; the serializer always writes ','.
 */

/** Digit value of the code unit at i, or -1. */
function digit(text: string, i: number): number {
  const c = text.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/**
 * Parse one timestamp into integer milliseconds, or return a reason string when it is malformed.
 * Scans character codes instead of running a regex: this is the parser's hot path.
 */
export function parseTimestampMs(text: string): number | string {
  // The reason quotes at most 40 characters: a megabyte of garbage is not echoed back.
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  if (text.startsWith('-')) return `negative timestamp "${shown}"`;
  const bad = `bad timestamp "${shown}" (expected HH:MM:SS,mmm)`;
  const n = text.length;
  // HH+ : MM : SS [,.] mmm  -> at least 12 characters, the last 10 fixed.
  if (n < 12) return bad;
  const h = n - 10; // index of the first ':' after the hours
  let hours = 0;
  for (let i = 0; i < h; i++) {
    const d = digit(text, i);
    if (d < 0) return bad;
    hours = hours * 10 + d;
  }
  const sep = text.charCodeAt(n - 4);
  if (text.charCodeAt(h) !== 58 || text.charCodeAt(h + 3) !== 58 || (sep !== 44 && sep !== 46)) return bad;
  const m1 = digit(text, h + 1);
  const m2 = digit(text, h + 2);
  const s1 = digit(text, h + 4);
  const s2 = digit(text, h + 5);
  const f1 = digit(text, n - 3);
  const f2 = digit(text, n - 2);
  const f3 = digit(text, n - 1);
  if ((m1 | m2 | s1 | s2 | f1 | f2 | f3) < 0) return bad;
  const min = m1 * 10 + m2;
  const s = s1 * 10 + s2;
  if (min > 59) return `bad timestamp "${shown}" (minutes must be 00-59)`;
  if (s > 59) return `bad timestamp "${shown}" (seconds must be 00-59)`;
  if (!Number.isSafeInteger(hours * 3_600_000)) return bad;
  return ((hours * 60 + min) * 60 + s) * 1000 + f1 * 100 + f2 * 10 + f3;
}

/** Round seconds to the nearest millisecond (the SRT resolution). */
export function toMs(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** Format integer milliseconds as `HH:MM:SS,mmm`. */
export function formatTimestampMs(totalMs: number): string {
  const ms = totalMs % 1000;
  const totalS = (totalMs - ms) / 1000;
  const s = totalS % 60;
  const totalMin = (totalS - s) / 60;
  const min = totalMin % 60;
  const h = (totalMin - min) / 60;
  return `${pad(h, 2)}:${pad(min, 2)}:${pad(s, 2)},${pad(ms, 3)}`;
}

/**
 * Format seconds as an SRT timestamp. The value is rounded once to whole milliseconds, so the
 * millisecond field is never 1000 (59.9996 s gives 00:01:00,000).
 */
export function formatSrtTimestamp(seconds: number): string {
  return formatTimestampMs(toMs(seconds));
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
