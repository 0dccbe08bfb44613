/**
 * Segment times as people read and type them: `m:ss.mmm` (`h:mm:ss.mmm` from one hour), parsed
 * back from `ss`, `ss.mmm`, `m:ss.mmm`, `h:mm:ss.mmm` or the SRT form `hh:mm:ss,mmm`.
 */

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Seconds -> `m:ss.mmm`, or `h:mm:ss.mmm` from one hour on (rounded to the millisecond). */
export function formatTime(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--.---';
  const neg = seconds < 0;
  const ms = Math.round(Math.abs(seconds) * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const f = ms % 1000;
  const body = h > 0 ? `${h}:${pad(m, 2)}:${pad(s, 2)}.${pad(f, 3)}` : `${m}:${pad(s, 2)}.${pad(f, 3)}`;
  return neg ? `-${body}` : body;
}

export type ParsedTime = { ok: true; seconds: number } | { ok: false; error: string };

const FORMAT_HINT = 'use m:ss.mmm, for example 1:04.250';

/** Parse what a person typed into seconds (rounded to the millisecond). */
export function parseTime(text: string): ParsedTime {
  const t = text.trim();
  if (t === '') return { ok: false, error: `a time is required (${FORMAT_HINT})` };
  if (t.startsWith('-')) return { ok: false, error: 'a time cannot be negative' };
  const parts = t.split(':');
  if (parts.length > 3) return { ok: false, error: `"${t}" is not a time (${FORMAT_HINT})` };
  const last = parts[parts.length - 1]!;
  const sec = /^(\d+)(?:[.,](\d+))?$/.exec(last);
  if (!sec || parts.slice(0, -1).some((p) => !/^\d+$/.test(p))) return { ok: false, error: `"${t}" is not a time (${FORMAT_HINT})` };
  const whole = Number(sec[1]);
  const frac = sec[2] ? Number(`0.${sec[2]}`) : 0;
  const units = parts.slice(0, -1).map(Number);
  if (units.length >= 1 && whole >= 60) return { ok: false, error: `"${t}": seconds must be below 60` };
  if (units.length === 2 && units[1]! >= 60) return { ok: false, error: `"${t}": minutes must be below 60` };
  let seconds = whole + frac;
  let scale = 60;
  for (let i = units.length - 1; i >= 0; i--, scale *= 60) seconds += units[i]! * scale;
  return { ok: true, seconds: Math.round(seconds * 1000) / 1000 };
}
