/**
 * Cutting speech regions into decoder-sized pieces: long regions are split into pieces of `max`
 * seconds from their start (splitLongRegions), and (for Whisper) neighbouring regions are grouped
 * into chunks of at most `max` seconds so every other chunk boundary falls in a pause.
 */
import type { SpeechRegion } from '../vad/types.js';

/** A last piece shorter than this is not made: the last two pieces share the tail equally instead. */
export const MIN_TAIL_SECONDS = 8;

/**
 * Regions longer than `max` seconds cut into pieces of `max` seconds from their start, so where a
 * stretch of speech is cut does not depend on how long it goes on (the first minute of a long
 * stretch is cut the same alone or inside a longer clip). Only the tail is balanced: when the last
 * piece would be shorter than MIN_TAIL_SECONDS (little context for the recognizer), the last two
 * pieces share the remainder equally.
 */
export function splitLongRegions(regions: readonly SpeechRegion[], max: number): SpeechRegion[] {
  const out: SpeechRegion[] = [];
  const tail = Math.min(MIN_TAIL_SECONDS, max / 2);
  for (const r of regions) {
    const len = r.end - r.start;
    if (len <= max + 1e-9) {
      out.push({ ...r });
      continue;
    }
    const cuts: number[] = [];
    let at = r.start + max;
    while (r.end - at > 1e-9) {
      cuts.push(at);
      at += max;
    }
    // the last piece (from the last cut to the end) too short: move that cut back to halve the last two pieces
    const lastLen = r.end - cuts[cuts.length - 1]!;
    if (lastLen < tail) {
      const prev = cuts.length > 1 ? cuts[cuts.length - 2]! : r.start;
      cuts[cuts.length - 1] = prev + (r.end - prev) / 2;
    }
    let from = r.start;
    for (const c of [...cuts, r.end]) {
      out.push({ start: from, end: c, probability: r.probability });
      from = c;
    }
  }
  return out;
}

export interface AudioChunk {
  /** Seconds: the audio decoded for this chunk. */
  start: number;
  end: number;
  regions: SpeechRegion[];
}

/** Group regions into chunks spanning at most `max` seconds (from the first region's start to the last one's end). */
export function groupRegions(regions: readonly SpeechRegion[], max: number): AudioChunk[] {
  const chunks: AudioChunk[] = [];
  for (const r of splitLongRegions(regions, max)) {
    const cur = chunks[chunks.length - 1];
    if (cur && r.end - cur.start <= max) {
      cur.end = r.end;
      cur.regions.push(r);
    } else chunks.push({ start: r.start, end: r.end, regions: [r] });
  }
  return chunks;
}

/** A speech region in a packed window: timeline seconds [start, end] heard from `at` seconds into the window. */
export interface PackedPiece {
  start: number;
  end: number;
  at: number;
}

/** A window made of speech regions only, `gap` seconds of silence between them (`length`: seconds of the window). */
export interface PackedChunk {
  pieces: PackedPiece[];
  length: number;
}

/**
 * Regions packed into windows of at most `max` seconds of audio: each region's samples one after
 * the other, the pause between two kept up to `gap` seconds (a longer one is cut to `gap`), so a
 * window holds up to `max` seconds of speech however far apart the regions lie on the timeline (a
 * region longer than `max` is split first, as splitLongRegions does). The regions stay in order; a window
 * closes when the next region does not fit.
 */
export function packRegions(regions: readonly SpeechRegion[], max: number, gap: number): PackedChunk[] {
  const chunks: PackedChunk[] = [];
  let prevEnd = Number.NaN;
  for (const r of splitLongRegions(regions, max)) {
    const len = r.end - r.start;
    const cur = chunks[chunks.length - 1];
    const at = cur ? cur.length + Math.min(gap, Math.max(0, r.start - prevEnd)) : 0;
    prevEnd = r.end;
    if (cur && at + len <= max + 1e-9) {
      cur.pieces.push({ start: r.start, end: r.end, at });
      cur.length = at + len;
    } else chunks.push({ pieces: [{ start: r.start, end: r.end, at: 0 }], length: len });
  }
  return chunks;
}

/**
 * The timeline time of `t` seconds into a packed window: inside a piece, its place there; in the
 * silence before a piece (or between two), the next piece's start when `side` is 'start' (what
 * starts in a silence is heard from the next piece on), the previous piece's end when 'end'; after
 * the last piece, its end.
 */
export function unpackTime(chunk: PackedChunk, t: number, side: 'start' | 'end' = 'start'): number {
  const p = chunk.pieces;
  for (let i = 0; i < p.length; i++) {
    const a = p[i]!;
    if (t < a.at) return side === 'end' && i > 0 ? p[i - 1]!.end : a.start;
    if (t <= a.at + (a.end - a.start)) return a.start + (t - a.at);
  }
  return p[p.length - 1]!.end;
}

/**
 * Words of a segment decoded in a packed window ([start, end] seconds into it), timed on the
 * timeline: by character share over the speech the segment covers, the silences between the
 * pieces left out (Whisper times a segment by its timestamp tokens and nothing finer), each word
 * kept inside the piece its middle falls in.
 */
export function unpackWords<W extends { text: string; start: number; end: number }>(chunk: PackedChunk, start: number, end: number, words: readonly W[]): W[] {
  const parts = chunk.pieces
    .map((p) => [Math.max(p.at, start), Math.min(p.at + (p.end - p.start), end), p] as const)
    .filter(([a, b]) => b > a);
  const total = parts.reduce((acc, [a, b]) => acc + b - a, 0);
  if (!(total > 0)) {
    const t = unpackTime(chunk, start, 'start');
    return words.map((w) => ({ ...w, start: t, end: t }));
  }
  const at = (offset: number): [number, PackedPiece] => {
    let left = offset;
    for (const [a, b, p] of parts) {
      if (left <= b - a + 1e-12) return [a + left, p];
      left -= b - a;
    }
    const [, b, p] = parts[parts.length - 1]!;
    return [b, p];
  };
  const chars = words.map((w) => Math.max(1, [...w.text].length));
  const sum = chars.reduce((x, y) => x + y, 0);
  let acc = 0;
  return words.map((w, i) => {
    const from = (acc / sum) * total;
    acc += chars[i]!;
    const to = (acc / sum) * total;
    const [, piece] = at((from + to) / 2);
    const lo = piece.at;
    const hi = piece.at + (piece.end - piece.start);
    const [a] = at(from);
    const [b] = at(to);
    const map = (t: number) => piece.start + (Math.min(hi, Math.max(lo, t)) - lo);
    return { ...w, start: map(a), end: map(b) };
  });
}
