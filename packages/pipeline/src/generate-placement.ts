/**
 * Where each dubbed line plays and how long it lasts, decided from every line's natural length
 * (its synthesis at speed 1) before any line is fitted. In time order, a line that does not fit
 * its slot at the speed cap:
 *
 *   1. takes the silence after its slot (up to the next line's start, or the end of the video);
 *   2. in voice-over, also starts earlier, by at most the voice-over delay (the mix delays the
 *      speech by that much, so it still starts no earlier than the original line);
 *   3. asks for a shorter translation, when the translation engine writes to a length budget;
 *   4. is sped past the cap, up to the speed limit, to end where its room ends;
 *   5. still longer: plays over the next line only where the source speakers overlapped there;
 *      otherwise the next line starts later (`delayed_next`, and `delayed_ms` on that line); the
 *      last line is cut at the end of the video (`truncated`).
 *
 * So two dubbed lines never play at once unless their source lines overlapped.
 */
import { PLACEMENT_DEFAULTS, type PlacementResolution } from '@dub/core';

export interface PlacementLine {
  id: string;
  /** The source segment's span (seconds). */
  start: number;
  end: number;
  /** Seconds of speech at speed 1 (silence trimmed). */
  natural: number;
}

export interface PlacementOptions {
  /** Lines end by this time (the video's duration, less the voice-over delay). */
  limit: number;
  speedCap?: number;
  speedLimit?: number;
  /** Voice-over: how much earlier than its slot a line may start (the voice-over delay); 0 for replace. */
  earlyStart?: number;
  /**
   * Ask for a shorter line for `line` that would last about `seconds` at the speed cap. Returns
   * the new natural length (and the caller keeps the text), or `undefined` when it cannot.
   */
  shorten?: (line: PlacementLine, seconds: number) => Promise<number | undefined>;
}

export interface Placement {
  id: string;
  slotStart: number;
  slotEnd: number;
  /** Where the line plays (seconds) and how long: `seconds` = end - start. */
  start: number;
  end: number;
  seconds: number;
  /** The natural length the placement was made for (after shortening). */
  natural: number;
  /** natural / seconds when the line fills its time (a line shorter than its slot is slowed, then padded). */
  speed: number;
  resolution: PlacementResolution;
  shortened: boolean;
  gapAfterUsed: number;
  gapBeforeUsed: number;
  /** Seconds after the slot start the line had to wait for the previous one. */
  delayed: number;
  /** Seconds cut at the end of the video. */
  truncated: number;
  /** The next line's source span starts before this one's ends. */
  sourceOverlapNext: boolean;
}

const EPS = 1e-6;

/** Plan every line, in time order (lines must be sorted by start). */
export async function placeLines(lines: readonly PlacementLine[], o: PlacementOptions): Promise<Placement[]> {
  const cap = o.speedCap ?? PLACEMENT_DEFAULTS.speedCap;
  const max = Math.max(cap, o.speedLimit ?? PLACEMENT_DEFAULTS.speedLimit);
  const early = Math.max(0, o.earlyStart ?? 0);
  const out: Placement[] = [];
  let prevEnd = 0; // where the previous lines' dubbed speech ends
  let prevSourceEnd = -Infinity; // where the previous lines' source speech ends
  for (const [i, line] of lines.entries()) {
    const slotEnd = Math.min(line.end, o.limit);
    const next = lines[i + 1];
    const sourceOverlapPrev = line.start < prevSourceEnd - EPS;
    const sourceOverlapNext = next !== undefined && next.start < line.end - EPS;
    // Wait for the previous line unless the source speakers overlapped here.
    let start = sourceOverlapPrev ? line.start : Math.max(line.start, prevEnd);
    const delayed = Math.max(0, start - line.start);
    const roomEnd = Math.min(o.limit, next ? next.start : o.limit);
    const slot = Math.max(0, slotEnd - start);
    const after = Math.max(0, roomEnd - Math.max(slotEnd, start));
    const before = delayed > 0 ? 0 : Math.max(0, start - Math.max(prevEnd, line.start - early, 0));
    let natural = line.natural;
    let shortened = false;
    let resolution: PlacementResolution;
    let seconds: number;
    let truncated = 0;

    if (natural <= cap * slot + EPS && slot > 0) {
      seconds = slot;
      resolution = 'fits';
    } else if (natural <= cap * (slot + after) + EPS) {
      seconds = natural / cap;
      resolution = 'used_gap_after';
    } else if (before > 0 && natural <= cap * (slot + after + before) + EPS) {
      seconds = natural / cap;
      resolution = 'used_gap_before';
    } else {
      const room = slot + after + before;
      const shorter = o.shorten && room > 0 ? await o.shorten(line, room) : undefined;
      if (shorter !== undefined && shorter < natural) {
        natural = shorter;
        shortened = true;
      }
      if (shortened && natural <= cap * room + EPS) {
        seconds = Math.max(Math.min(slot, room), natural / cap);
        resolution = 'shortened';
      } else if (natural <= max * room + EPS) {
        seconds = room;
        resolution = 'sped_past_cap';
      } else {
        seconds = natural / max;
        resolution = next === undefined ? 'truncated' : sourceOverlapNext ? 'overlaps_next' : 'delayed_next';
      }
    }
    // Room taken after the slot first, then before it (voice-over).
    const beyondSlot = Math.max(0, seconds - slot);
    const gapAfterUsed = Math.min(after, beyondSlot);
    const gapBeforeUsed = Math.min(before, Math.max(0, beyondSlot - after));
    start -= gapBeforeUsed;
    // Nothing plays past the end of the video: what would is cut (and said).
    if (start + seconds > o.limit + EPS) {
      truncated = start + seconds - Math.max(start, o.limit);
      seconds -= truncated;
      resolution = 'truncated';
    }
    const end = start + seconds;
    out.push({
      id: line.id,
      slotStart: line.start,
      slotEnd,
      start,
      end,
      seconds,
      natural,
      speed: seconds > 0 ? natural / seconds : 0,
      resolution,
      shortened,
      gapAfterUsed,
      gapBeforeUsed,
      delayed,
      truncated,
      sourceOverlapNext,
    });
    prevEnd = Math.max(prevEnd, end);
    prevSourceEnd = Math.max(prevSourceEnd, line.end);
  }
  return out;
}
