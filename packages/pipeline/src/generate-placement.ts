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
 *
 * With speakers (the pipeline's lines), lines are placed by turns (TURN_DEFAULTS; `placeTurn`):
 * a speaker's lines less than `pause` apart share the turn's time, from where the speaker starts to
 * where the next speaker's line starts (or the end of the video). Inside a turn a long line borrows
 * from a short neighbour: the turn's lines get the least speed at which every one of them fits
 * (never below the speaker's pace, speed 1), each line starting and ending within `shift` of its
 * own words (the last line's end may take all the silence after the turn) and keeping as much of
 * its own slot as that allows. A turn that needs more than the cap asks for shorter lines first,
 * then goes past the cap, up to the limit; one that does not fit even there is placed line by line
 * as above.
 */
import { PLACEMENT_DEFAULTS, TURN_DEFAULTS, type PlacementResolution } from '@dub/core';

export interface PlacementLine {
  id: string;
  /** The source segment's span (seconds). */
  start: number;
  end: number;
  /** Seconds of speech at speed 1 (silence trimmed). */
  natural: number;
  /** The source speaker: with speakers (and `turns` not off) lines are placed by turns. */
  speaker?: string;
  /**
   * Seconds of the line at its speaker's articulation rate, when the engine's rate range could not
   * reach that rate (its pace held at the range's end): speeds are counted from this length.
   */
  atSpeakerRate?: number;
}

/** A shorter line's lengths: its natural length, and its length at the speaker's rate when that differs. */
export type ShorterLength = number | { natural: number; atSpeakerRate?: number };

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
  shorten?: (line: PlacementLine, seconds: number) => Promise<ShorterLength | undefined>;
  /** Turns (TURN_DEFAULTS by default; false: every line on its own, as without speakers). */
  turns?: { pause: number; shift: number } | false;
}

/** The turn a line was placed in. */
export interface PlacedTurn {
  /** 1-based, in time order. */
  id: number;
  index: number;
  lines: number;
  /** The turn's source span and where its room ends (the next other line's start, or `limit`). */
  start: number;
  end: number;
  roomEnd: number;
  /** Placed seconds minus slot seconds: positive when the line took time, negative when it gave. */
  borrowed: number;
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
  /** The length speeds were counted from (`atSpeakerRate` when given, else `natural`). */
  demand: number;
  /** Its turn, when lines were placed by turns. */
  turn?: PlacedTurn;
}

const EPS = 1e-6;
/** The tolerance of a turn's bounds (the bisection's resolution is finer than EPS). */
const TOL = 1e-12;

/** Plan every line, in time order (lines must be sorted by start). */
export async function placeLines(lines: readonly PlacementLine[], o: PlacementOptions): Promise<Placement[]> {
  const st: PlaceState = {
    cap: o.speedCap ?? PLACEMENT_DEFAULTS.speedCap,
    max: Math.max(o.speedCap ?? PLACEMENT_DEFAULTS.speedCap, o.speedLimit ?? PLACEMENT_DEFAULTS.speedLimit),
    early: Math.max(0, o.earlyStart ?? 0),
    limit: o.limit,
    prevEnd: 0,
    prevSourceEnd: -Infinity,
    ...(o.shorten ? { shorten: o.shorten } : {}),
  };
  const turnOpts = o.turns === false ? undefined : (o.turns ?? TURN_DEFAULTS);
  const out: Placement[] = [];
  if (!turnOpts || !lines.every((l) => l.speaker !== undefined)) {
    for (const [i, line] of lines.entries()) out.push(await placeOne(lines, i, st, true));
    return out;
  }
  let turnId = 0;
  for (const turn of turnsOf(lines, turnOpts.pause)) {
    turnId++;
    const placed = await placeTurn(lines, turn, st, turnOpts.shift);
    const first = lines[turn[0]!]!;
    const last = lines[turn.at(-1)!]!;
    const next = lines[turn.at(-1)! + 1];
    const roomEnd = Math.min(o.limit, Math.max(last.end, next ? next.start : o.limit));
    for (const [k, p] of placed.entries()) {
      const slot = Math.max(0, p.slotEnd - p.slotStart);
      out.push({ ...p, turn: { id: turnId, index: k, lines: turn.length, start: first.start, end: Math.min(last.end, o.limit), roomEnd, borrowed: p.seconds - slot } });
    }
  }
  return out;
}

interface PlaceState {
  cap: number;
  max: number;
  early: number;
  limit: number;
  /** Where the previous lines' dubbed speech ends, and their source speech. */
  prevEnd: number;
  prevSourceEnd: number;
  shorten?: PlacementOptions['shorten'];
}

const demandOf = (l: PlacementLine): number => l.atSpeakerRate ?? l.natural;

/** A shorter line's lengths, its length at the speaker's rate scaled like its natural length when not given. */
function shorterLine(line: PlacementLine, r: ShorterLength): PlacementLine {
  const natural = typeof r === 'number' ? r : r.natural;
  const at = typeof r === 'number' ? undefined : r.atSpeakerRate;
  const { atSpeakerRate: _drop, ...rest } = line;
  if (at !== undefined) return { ...rest, natural, atSpeakerRate: at };
  return line.atSpeakerRate !== undefined && line.natural > 0 ? { ...rest, natural, atSpeakerRate: (line.atSpeakerRate * natural) / line.natural } : { ...rest, natural };
}

/** Turns: indices of consecutive lines of one speaker less than `pause` apart. */
export function turnsOf(lines: readonly PlacementLine[], pause: number): number[][] {
  const out: number[][] = [];
  for (const [i, l] of lines.entries()) {
    const prev = lines[i - 1];
    if (prev && l.speaker !== undefined && l.speaker === prev.speaker && l.start - prev.end < pause - EPS) out.at(-1)!.push(i);
    else out.push([i]);
  }
  return out;
}

/** One line on its own (the remedies in the module's comment), after the lines before it. */
async function placeOne(lines: readonly PlacementLine[], i: number, st: PlaceState, mayShorten: boolean): Promise<Placement> {
  const { cap, max, early, limit } = st;
  const line = lines[i]!;
  const slotEnd = Math.min(line.end, limit);
  const next = lines[i + 1];
  const sourceOverlapPrev = line.start < st.prevSourceEnd - EPS;
  const sourceOverlapNext = next !== undefined && next.start < line.end - EPS;
  // Wait for the previous line unless the source speakers overlapped here.
  let start = sourceOverlapPrev ? line.start : Math.max(line.start, st.prevEnd);
  const delayed = Math.max(0, start - line.start);
  const roomEnd = Math.min(limit, next ? next.start : limit);
  const slot = Math.max(0, slotEnd - start);
  const after = Math.max(0, roomEnd - Math.max(slotEnd, start));
  const before = delayed > 0 ? 0 : Math.max(0, start - Math.max(st.prevEnd, line.start - early, 0));
  let placedLine = line;
  let natural = demandOf(line);
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
    const shorter = mayShorten && st.shorten && room > 0 ? await st.shorten(line, room) : undefined;
    if (shorter !== undefined) {
      const l = shorterLine(line, shorter);
      if (demandOf(l) < natural) {
        placedLine = l;
        natural = demandOf(l);
        shortened = true;
      }
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
  if (start + seconds > limit + EPS) {
    truncated = start + seconds - Math.max(start, limit);
    seconds -= truncated;
    resolution = 'truncated';
  }
  const end = start + seconds;
  st.prevEnd = Math.max(st.prevEnd, end);
  st.prevSourceEnd = Math.max(st.prevSourceEnd, line.end);
  return {
    id: line.id,
    slotStart: line.start,
    slotEnd,
    start,
    end,
    seconds,
    natural: placedLine.natural,
    speed: seconds > 0 ? natural / seconds : 0,
    resolution,
    shortened,
    gapAfterUsed,
    gapBeforeUsed,
    delayed,
    truncated,
    sourceOverlapNext,
    demand: natural,
  };
}

/** Spans of a turn's lines at one speed, or null when none exists (`solveTurn`). */
interface TurnSolution {
  starts: number[];
  ends: number[];
}

/**
 * The lines of a turn at speed `v` (each line at least demand / v long): line k starts within
 * `shift` of its slot's start (the first at `w0`, or up to `early` before it in voice-over) and no
 * earlier than the previous line's end, and ends within `shift` of its slot's end (the last by
 * `w1`); each keeps as much of its own slot as that allows. null when no such placement exists.
 */
function solveTurn(ls: readonly PlacementLine[], v: number, w0: number, w1: number, early: number, shift: number): TurnSolution | null {
  const n = ls.length;
  const need = ls.map((l) => demandOf(l) / v);
  const lastEnd = (k: number): number => (k === n - 1 ? w1 : Math.min(w1, Math.min(ls[k]!.end, w1) + shift));
  const latestStart = (k: number): number => (k === 0 ? w0 : ls[k]!.start + shift);
  const earliestStart = (k: number): number => (k === 0 ? w0 - early : ls[k]!.start - shift);
  // Backward: the latest each line may end and start so that every later line still fits.
  const lb = new Array<number>(n);
  const la = new Array<number>(n);
  for (let k = n - 1; k >= 0; k--) {
    lb[k] = k === n - 1 ? lastEnd(k) : Math.min(lastEnd(k), la[k + 1]!);
    la[k] = Math.min(latestStart(k), lb[k]! - need[k]!);
    if (la[k]! < earliestStart(k) - TOL) return null;
  }
  // Forward: as close to the slots as the bounds allow.
  const starts: number[] = [];
  const ends: number[] = [];
  let prev = -Infinity;
  for (let k = 0; k < n; k++) {
    const lo = Math.max(earliestStart(k), prev);
    if (lo > la[k]! + TOL) return null;
    const want = k === 0 ? w0 : ls[k]!.start;
    const a = Math.max(lo, Math.min(la[k]!, want));
    const b = Math.min(lb[k]!, Math.max(Math.min(ls[k]!.end, w1), a + need[k]!));
    starts.push(a);
    ends.push(b);
    prev = b;
  }
  return { starts, ends };
}

/** The least speed in [lo, hi] at which the turn has a placement (bisection; feasibility grows with speed), or null. */
function leastSpeed(ls: readonly PlacementLine[], lo: number, hi: number, w0: number, w1: number, early: number, shift: number): { v: number; sol: TurnSolution } | null {
  const atHi = solveTurn(ls, hi, w0, w1, early, shift);
  if (!atHi) return null;
  const atLo = solveTurn(ls, lo, w0, w1, early, shift);
  if (atLo) return { v: lo, sol: atLo };
  let a = lo;
  let b = hi;
  let best = { v: hi, sol: atHi };
  for (let it = 0; it < 64 && b - a > 1e-12; it++) {
    const m = (a + b) / 2;
    const sol = solveTurn(ls, m, w0, w1, early, shift);
    if (sol) {
      best = { v: m, sol };
      b = m;
    } else a = m;
  }
  return best;
}

/** The lines `turn` (indices into `lines`) placed together (see the module's comment). */
async function placeTurn(lines: readonly PlacementLine[], turn: readonly number[], st: PlaceState, shift: number): Promise<Placement[]> {
  const { cap, max, limit } = st;
  const first = lines[turn[0]!]!;
  const lastIdx = turn.at(-1)!;
  const next = lines[lastIdx + 1];
  const sourceOverlapPrev = first.start < st.prevSourceEnd - EPS;
  const w0 = sourceOverlapPrev ? first.start : Math.max(first.start, st.prevEnd);
  const delayed0 = Math.max(0, w0 - first.start);
  const early = delayed0 > 0 ? 0 : Math.max(0, w0 - Math.max(st.prevEnd, first.start - st.early, 0));
  const w1 = Math.min(limit, Math.max(Math.min(lines[lastIdx]!.end, limit), next ? next.start : limit));
  let ls = turn.map((i) => lines[i]!);
  const shortened = new Set<number>();
  let triedShorter = false;
  if (w1 - w0 <= EPS) return fallback();
  let found = leastSpeed(ls, 1, max, w0, w1, early, shift);
  if ((!found || found.v > cap + EPS) && st.shorten) {
    // Shorter lines for those the turn cannot give enough time at the cap.
    triedShorter = true;
    const asked: PlacementLine[] = [];
    for (const [k, l] of ls.entries()) asked.push(await shorterFor(l, k));
    ls = asked;
    found = leastSpeed(ls, 1, max, w0, w1, early, shift);
  }
  async function shorterFor(l: PlacementLine, k: number): Promise<PlacementLine> {
    {
      const room = found ? found.sol.ends[k]! - found.sol.starts[k]! : Math.max(0, (k === ls.length - 1 ? w1 : Math.min(w1, ls[k + 1]!.start)) - (k === 0 ? w0 : l.start));
      if (!(room > 0) || demandOf(l) <= cap * room + EPS) return l;
      const r = await st.shorten!(l, room);
      if (r === undefined) return l;
      const s = shorterLine(l, r);
      if (demandOf(s) < demandOf(l)) {
        shortened.add(k);
        return s;
      }
      return l;
    }
  }
  if (!found) return fallback();
  const { starts, ends } = found.sol;
  const out: Placement[] = ls.map((l, k) => {
    const slotEnd = Math.min(l.end, limit);
    const start = starts[k]!;
    const end = ends[k]!;
    const seconds = end - start;
    const demand = demandOf(l);
    const speed = seconds > 0 ? demand / seconds : 0;
    const nextStart = k === ls.length - 1 ? w1 : ls[k + 1]!.start;
    const gapAfterUsed = Math.max(0, Math.min(end, Math.max(nextStart, slotEnd)) - Math.max(slotEnd, start));
    const gapBeforeUsed = k === 0 ? Math.max(0, w0 - start) : 0;
    let resolution: PlacementResolution;
    if (shortened.has(k) && speed <= cap + EPS) resolution = 'shortened';
    else if (speed > cap + EPS) resolution = 'sped_past_cap';
    else if (gapBeforeUsed > EPS) resolution = 'used_gap_before';
    else if (end <= slotEnd + EPS && start >= l.start - EPS) resolution = 'fits';
    else if (start >= l.start - EPS && end <= Math.max(nextStart, slotEnd) + EPS) resolution = 'used_gap_after';
    else resolution = 'borrowed';
    const nextLine = lines[turn[k]! + 1];
    return {
      id: l.id,
      slotStart: l.start,
      slotEnd,
      start,
      end,
      seconds,
      natural: l.natural,
      speed,
      resolution,
      shortened: shortened.has(k),
      gapAfterUsed,
      gapBeforeUsed,
      delayed: Math.max(0, start - l.start),
      truncated: 0,
      sourceOverlapNext: nextLine !== undefined && nextLine.start < l.end - EPS,
      demand,
    };
  });
  st.prevEnd = Math.max(st.prevEnd, ...ends);
  st.prevSourceEnd = Math.max(st.prevSourceEnd, ...ls.map((l) => l.end));
  return out;

  // No placement even at the speed limit: line by line (the next line waits, or is overlapped, or the end cuts), the shorter lines kept.
  async function fallback(): Promise<Placement[]> {
    const view = [...lines];
    for (const [k, i] of turn.entries()) view[i] = ls[k]!;
    const out: Placement[] = [];
    for (const [k, i] of turn.entries()) {
      const p = await placeOne(view, i, st, !shortened.has(k) && !triedShorter);
      out.push(shortened.has(k) ? { ...p, shortened: true, resolution: p.resolution === 'fits' || p.resolution === 'used_gap_after' ? 'shortened' : p.resolution } : p);
    }
    return out;
  }
}
