/**
 * SRT timestamps: `HH:MM:SS,mmm` (hours have two or more digits). The parser also accepts '.'
 * as the millisecond separator; the serializer always writes ','.
 */

const TIMESTAMP = /^(\d{2,}):(\d{2}):(\d{2})[,.](\d{3})$/;

/**
 * Parse one timestamp into integer milliseconds, or return a reason string when it is malformed.
 */
export function parseTimestampMs(text: string): number | string {
  if (text.startsWith('-')) return `negative timestamp "${text}"`;
  const m = TIMESTAMP.exec(text);
  if (!m) return `bad timestamp "${text}" (expected HH:MM:SS,mmm)`;
  const h = Number(m[1]);
  const min = Number(m[2]);
  const s = Number(m[3]);
  const ms = Number(m[4]);
  if (min > 59) return `bad timestamp "${text}" (minutes must be 00-59)`;
  if (s > 59) return `bad timestamp "${text}" (seconds must be 00-59)`;
  return ((h * 60 + min) * 60 + s) * 1000 + ms;
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
