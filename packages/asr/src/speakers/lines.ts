/**
 * Lines a dub and a subtitle can use: a segment longer than `maxSeconds` (default 7) is cut from
 * its start onward, each time at the deepest pause of the next `maxSeconds`: the instant whose VAD
 * probability (mean over 5 frames, about 0.16 s) is lowest, at least `minSeconds` (default 1)
 * after the line's start and before the segment's end. The words go to the side of the cut their
 * start falls on (the word boundary nearest the pause), so the text follows the audio.
 *
 * Every rule is local and looks ahead at most `maxSeconds`: a cut depends only on the segment's
 * start, its words and the probabilities of the next 7 s, never on the rest of the file (cutting
 * at the deepest pause of the whole segment would move every cut when the segment grows), so the
 * same stretch of speech is cut the same way alone or inside a longer clip.
 *
 * Without per-frame probabilities (e.g. regions only), the pause is the longest gap between two
 * speech regions in that window, else between two words, else the window's last word boundary.
 *
 * Spans (fitLineSpans): an ASR segment runs until the next one starts (Whisper's `<|t|>` pairs
 * are contiguous, text after the last timestamp runs to the window's end) and a cut leaves both
 * pieces touching at the pause, so the silence between lines would read as speech. Each line is
 * therefore fitted to the speech the VAD found inside it: it starts where the first speech region
 * overlapping it starts (or at its own start, if later) and ends where the last one ends (or at
 * its own end, if earlier). Its words are mapped linearly from the old span onto the new one, so
 * they keep their order and shares and the line still covers all its words. A line with no speech
 * region inside keeps its span. The rule only shrinks spans, so lines never overlap that did not.
 */
import { round3 } from '../asr/text-words.js';
import type { AsrSegment, AsrWord } from '../asr/types.js';
import type { SpeechDetection } from '../vad/types.js';

export interface LineOptions {
  /** Longest line (seconds, default 7). */
  maxSeconds: number;
  /** Shortest piece a cut may leave on either side (seconds, default 1). */
  minSeconds: number;
  /**
   * Fit each line's span to the speech inside it (fitLineSpans; default true). false keeps the
   * segments' own times: an authored transcript (a source SRT) whose cues are the user's timing.
   */
  fitSpans?: boolean;
}

export const DEFAULT_LINE_OPTIONS: Readonly<LineOptions> = { maxSeconds: 7, minSeconds: 1 };

/** Frames each side of a candidate pause averaged into its depth (2: 5 frames, ~0.16 s with Silero). */
const DEPTH_HALF_WIDTH = 2;

type Speech = Pick<SpeechDetection, 'probabilities' | 'frameSeconds' | 'regions'>;

/** Cut `segments` into lines of at most `maxSeconds` at their deepest pauses (see the module comment). */
export function cutLines(segments: readonly AsrSegment[], speech: Speech, options: Partial<LineOptions> = {}, joiner = ' '): AsrSegment[] {
  const o = { ...DEFAULT_LINE_OPTIONS, ...options };
  if (!(o.maxSeconds > 2 * o.minSeconds && o.minSeconds > 0)) throw new RangeError('lines need maxSeconds > 2 * minSeconds > 0');
  const out: AsrSegment[] = [];
  const cut = (s: AsrSegment): void => {
    if (s.end - s.start <= o.maxSeconds || s.words.length < 2) {
      out.push(s);
      return;
    }
    const at = deepestPause({ start: s.start, end: Math.min(s.end, s.start + o.maxSeconds + o.minSeconds), words: s.words }, speech, o.minSeconds);
    // The word boundary nearest the pause: the first word of the second line.
    let j = 1;
    for (let i = 2; i < s.words.length; i++) if (Math.abs(s.words[i]!.start - at) < Math.abs(s.words[j]!.start - at)) j = i;
    const left = s.words.slice(0, j);
    const right = s.words.slice(j);
    const t = Math.min(Math.max(at, left[left.length - 1]!.start), right[0]!.end);
    cut(piece(s, left, s.start, t, joiner));
    cut(piece(s, right, t, s.end, joiner));
  };
  for (const s of segments) cut(s);
  return out;
}

/**
 * Each line fitted to the VAD speech inside its span (see the module comment): real gaps between
 * lines where the VAD heard a pause, none invented where it did not.
 */
export function fitLineSpans(segments: readonly AsrSegment[], regions: readonly { start: number; end: number }[]): AsrSegment[] {
  return segments.map((s) => {
    let a = Infinity;
    let b = -Infinity;
    for (const r of regions) {
      if (r.end <= s.start || r.start >= s.end) continue;
      a = Math.min(a, r.start);
      b = Math.max(b, r.end);
    }
    if (!(b > a)) return { ...s, words: s.words.map((w) => ({ ...w })) };
    const start = round3(Math.max(s.start, a));
    const end = round3(Math.min(s.end, b));
    if (!(end > start) || (start === s.start && end === s.end)) return { ...s, words: s.words.map((w) => ({ ...w })) };
    const scale = s.end > s.start ? (end - start) / (s.end - s.start) : 0;
    const map = (t: number) => round3(Math.min(end, Math.max(start, start + (t - s.start) * scale)));
    return { ...s, start, end, words: s.words.map((w) => ({ ...w, start: map(w.start), end: map(w.end) })) };
  });
}

function piece(s: AsrSegment, words: AsrWord[], start: number, end: number, joiner: string): AsrSegment {
  const clamp = (x: number) => round3(Math.min(end, Math.max(start, x)));
  return {
    start: round3(start),
    end: round3(end),
    text: words.map((w) => w.text).join(joiner),
    words: words.map((w) => ({ ...w, start: clamp(w.start), end: clamp(w.end) })),
    ...(s.speaker !== undefined ? { speaker: s.speaker } : {}),
  };
}

/** Time of the deepest pause in `s` (a span with its words) with at least `minSide` seconds on each side. */
export function deepestPause(s: { start: number; end: number; words: readonly AsrWord[] }, speech: Speech, minSide: number): number {
  const lo = s.start + minSide;
  const hi = s.end - minSide;
  const p = speech.probabilities;
  const fs = speech.frameSeconds;
  if (p.length && fs > 0) {
    const a = Math.max(0, Math.ceil(lo / fs - 0.5));
    const b = Math.min(p.length - 1, Math.floor(hi / fs - 0.5));
    let best = -1;
    let bestDepth = Infinity;
    // The first of the deepest frames (strictly lower wins, so a flat run keeps its first frame).
    for (let i = a; i <= b; i++) {
      const depth = meanAround(p, i);
      if (depth < bestDepth - 1e-6) {
        bestDepth = depth;
        best = i;
      }
    }
    if (best >= 0) {
      // The middle of the flat run of equally deep frames starting at `best`.
      let e = best;
      while (e + 1 <= b && Math.abs(meanAround(p, e + 1) - bestDepth) <= 1e-6) e++;
      return ((best + e) / 2 + 0.5) * fs;
    }
  }
  // No probabilities: the longest gap between regions, else between words, inside [lo, hi].
  let gap: { at: number; len: number } | undefined;
  const rs = speech.regions;
  for (let i = 1; i < rs.length; i++) {
    const g0 = rs[i - 1]!.end;
    const g1 = rs[i]!.start;
    const mid = (g0 + g1) / 2;
    if (mid >= lo && mid <= hi && g1 - g0 > (gap?.len ?? 0)) gap = { at: mid, len: g1 - g0 };
  }
  if (gap) return gap.at;
  const w = s.words;
  for (let i = 1; i < w.length; i++) {
    const mid = (w[i - 1]!.end + w[i]!.start) / 2;
    if (mid >= lo && mid <= hi && w[i]!.start - w[i - 1]!.end > (gap?.len ?? 0)) gap = { at: mid, len: w[i]!.start - w[i - 1]!.end };
  }
  if (gap) return gap.at;
  return hi;
}

function meanAround(p: Float32Array, i: number): number {
  let sum = 0;
  let n = 0;
  for (let k = Math.max(0, i - DEPTH_HALF_WIDTH); k <= Math.min(p.length - 1, i + DEPTH_HALF_WIDTH); k++) {
    sum += p[k]!;
    n++;
  }
  return sum / n;
}
