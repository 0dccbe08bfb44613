/**
 * Structural edits of a script's segments: split one at a time, merge one with the next. Both
 * return a new segment array (the input is not changed) or the reason they cannot apply, so the
 * page can say it. Times stay on the millisecond.
 */
import type { ScriptSegment, Word } from '@dub/core';
import { snapEdge, type Span } from './waveform.js';

/** Each part of a split lasts at least this long (seconds). */
export const MIN_SPLIT_PART = 0.1;

export type OpResult = { ok: true; segments: ScriptSegment[]; index: number } | { ok: false; reason: string };

const ms = (t: number) => Math.round(t * 1000) / 1000;

/** An id not used by any of `taken`: `${base}.2`, `${base}.3`, ... (a part of a part: `a.2` gives `a.3`). */
export function freshId(base: string, taken: ReadonlySet<string>): string {
  const root = base.replace(/\.\d+$/, '');
  for (let k = 2; ; k++) {
    const id = `${root}.${k}`;
    if (!taken.has(id)) return id;
  }
}

const CLOSE_UP = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/**
 * Cut `text` near `fraction` of its length: at the word boundary closest to that point, or, in
 * text written without spaces (Chinese, Japanese, Thai), at the character closest to it.
 */
export function splitText(text: string, fraction: number): [string, string] {
  const t = text.trim();
  if (!t) return ['', ''];
  const chars = Array.from(t);
  const want = Math.round(Math.min(1, Math.max(0, fraction)) * chars.length);
  const spaces: number[] = [];
  chars.forEach((c, i) => {
    if (/\s/.test(c)) spaces.push(i);
  });
  let cut = want;
  if (!CLOSE_UP.test(t)) {
    // between words only: a word is never cut (a single word goes whole to the nearer side)
    const bounds = spaces.length ? spaces : [0, chars.length];
    cut = bounds.reduce((best, i) => (Math.abs(i - want) < Math.abs(best - want) ? i : best), bounds[0]!);
  }
  return [chars.slice(0, cut).join('').trim(), chars.slice(cut).join('').trim()];
}

function splitWords(words: readonly Word[] | undefined, t: number): [Word[], Word[]] | undefined {
  if (!words) return undefined;
  const mid = (w: Word) => (w.start + w.end) / 2;
  return [words.filter((w) => mid(w) < t), words.filter((w) => mid(w) >= t)];
}

/**
 * Split segment `index` at time `t`: the first part keeps the id, the second gets `newId`. Texts
 * are cut where the timed words say when the segment has them (source_words, target_words),
 * otherwise at the word boundary nearest to the same fraction of the text as `t` is of the span.
 */
export function splitSegment(segments: readonly ScriptSegment[], index: number, t: number, newId: string): OpResult {
  const s = segments[index];
  if (!s) return { ok: false, reason: 'no segment is selected' };
  const at = ms(t);
  if (!(at - s.start >= MIN_SPLIT_PART - 1e-9 && s.end - at >= MIN_SPLIT_PART - 1e-9)) {
    return { ok: false, reason: `the playhead must be inside segment ${index + 1}, at least ${MIN_SPLIT_PART} s from its start and end` };
  }
  const fraction = (at - s.start) / (s.end - s.start);
  const srcWords = splitWords(s.source_words, at);
  const tgtWords = splitWords(s.target_words, at);
  const joinWords = (ws: readonly Word[]) => ws.reduce((acc, w) => joinText(acc, w.text), '');
  const [src1, src2] = srcWords && s.source_words!.length ? [joinWords(srcWords[0]), joinWords(srcWords[1])] : splitText(s.source_text, fraction);
  const [tgt1, tgt2] = splitText(s.target_text, fraction);
  const first: ScriptSegment = { ...s, end: at, source_text: src1, target_text: tgt1 };
  const second: ScriptSegment = { ...s, id: newId, start: at, source_text: src2, target_text: tgt2 };
  if (srcWords) {
    first.source_words = srcWords[0];
    second.source_words = srcWords[1];
  }
  if (tgtWords) {
    first.target_words = tgtWords[0];
    second.target_words = tgtWords[1];
  }
  const out = segments.slice();
  out.splice(index, 1, first, second);
  return { ok: true, segments: out, index };
}

function joinText(a: string, b: string): string {
  const x = a.trim();
  const y = b.trim();
  if (!x || !y) return x || y;
  return CLOSE_UP.test(x.slice(-1)) || CLOSE_UP.test(y[0]!) ? `${x}${y}` : `${x} ${y}`;
}

/** Merge segment `index` with the one after it (same speaker only): one segment from the first's start to the later end, texts joined. */
export function mergeWithNext(segments: readonly ScriptSegment[], index: number): OpResult {
  const a = segments[index];
  const b = segments[index + 1];
  if (!a) return { ok: false, reason: 'no segment is selected' };
  if (!b) return { ok: false, reason: `segment ${index + 1} is the last one: there is no next segment to merge with` };
  if (a.speaker !== b.speaker) return { ok: false, reason: `segments ${index + 1} and ${index + 2} have different speakers (${a.speaker}, ${b.speaker}): only one speaker's lines can be merged` };
  const merged: ScriptSegment = {
    ...a,
    start: Math.min(a.start, b.start),
    end: Math.max(a.end, b.end),
    source_text: joinText(a.source_text, b.source_text),
    target_text: joinText(a.target_text, b.target_text),
  };
  if (a.source_words || b.source_words) merged.source_words = [...(a.source_words ?? []), ...(b.source_words ?? [])];
  else delete merged.source_words;
  if (a.target_words || b.target_words) merged.target_words = [...(a.target_words ?? []), ...(b.target_words ?? [])];
  else delete merged.target_words;
  const out = segments.slice();
  out.splice(index, 2, merged);
  return { ok: true, segments: out, index };
}

/** The shortest a segment can be dragged to (seconds). */
export const MIN_SEGMENT = 0.05;
const EPS = 1e-6;

/**
 * How far an edge of segment `index` may move: not past the other edge (keeping MIN_SEGMENT),
 * not before 0 or after the video, and not into the neighbour in script order when the two do
 * not overlap already (a dragged edge never creates an overlap).
 */
export function edgeLimits(segments: readonly ScriptSegment[], index: number, edge: 'start' | 'end', duration: number | null): [number, number] {
  const s = segments[index]!;
  if (edge === 'start') {
    const prev = segments[index - 1];
    const lo = prev && prev.end <= s.start + EPS ? prev.end : 0;
    return [Math.max(0, lo), Math.max(0, s.end - MIN_SEGMENT)];
  }
  const next = segments[index + 1];
  let hi = duration ?? Infinity;
  if (next && next.start >= s.end - EPS) hi = Math.min(hi, next.start);
  return [s.start + MIN_SEGMENT, Math.max(s.start + MIN_SEGMENT, hi)];
}

export interface PlaceEdgeOptions {
  duration: number | null;
  /** Pauses to snap to, and how close (seconds) an edge must come to snap. */
  silences?: readonly Span[];
  snapRadius?: number;
}

/** Where an edge dragged to `t` lands: snapped to a pause boundary when one is near, kept within edgeLimits, on the millisecond. */
export function placeEdge(segments: readonly ScriptSegment[], index: number, edge: 'start' | 'end', t: number, o: PlaceEdgeOptions): number {
  const [lo, hi] = edgeLimits(segments, index, edge, o.duration);
  let x = t;
  if (o.silences && o.snapRadius) {
    const snapped = snapEdge(t, edge, o.silences, o.snapRadius);
    if (snapped !== undefined && snapped >= lo && snapped <= hi) x = snapped;
  }
  let v = ms(Math.min(hi, Math.max(lo, x)));
  // rounding to the millisecond must not cross a limit (a neighbour's edge off the millisecond)
  if (v > hi + EPS) v = Math.floor(hi * 1000) / 1000;
  if (v < lo - EPS) v = Math.ceil(lo * 1000) / 1000;
  return v;
}
