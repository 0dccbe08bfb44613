/**
 * Speaker windows laid over speech time: the speech regions are put end to end (pauses removed)
 * and cut into `length`-second windows every `hop` seconds, the last one aligned to the end of the
 * speech. A window is a list of pieces of real time, so a window may span a pause but never reads
 * it. Speech shorter than `minLength` in total gives no window.
 */
import type { SpeechRegion } from '../vad/types.js';

export interface SpeakerWindow {
  /** Pieces of real time (seconds), in order. */
  pieces: Array<{ start: number; end: number }>;
  /** Real time of the middle of the window's speech. */
  center: number;
}

export function speakerWindows(regions: readonly SpeechRegion[], length: number, hop: number, minLength: number): SpeakerWindow[] {
  const spans = regions.filter((r) => r.end > r.start).map((r) => [r.start, r.end] as const);
  const total = spans.reduce((s, [a, b]) => s + (b - a), 0);
  if (total < minLength) return [];
  const toReal = (p: number): number => {
    let acc = 0;
    for (const [a, b] of spans) {
      if (p <= acc + (b - a)) return a + (p - acc);
      acc += b - a;
    }
    return spans[spans.length - 1]![1];
  };
  const piecesOf = (p0: number, p1: number): Array<{ start: number; end: number }> => {
    const out: Array<{ start: number; end: number }> = [];
    let acc = 0;
    for (const [a, b] of spans) {
      const s = Math.max(p0, acc);
      const e = Math.min(p1, acc + (b - a));
      if (e - s > 1e-6) out.push({ start: a + (s - acc), end: a + (e - acc) });
      acc += b - a;
    }
    return out;
  };
  const len = Math.min(length, total);
  const starts: number[] = [];
  for (let s = 0; s + len <= total + 1e-9; s += hop) starts.push(s);
  if (total - (starts[starts.length - 1]! + len) > hop / 2) starts.push(total - len);
  return starts.map((s) => ({ pieces: piecesOf(s, s + len), center: toReal(s + len / 2) }));
}

export function covers(w: SpeakerWindow, t: number): boolean {
  return w.pieces.some((p) => t >= p.start && t <= p.end);
}
