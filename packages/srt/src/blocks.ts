/**
 * Block segmentation: the token stream is cut into blocks by dynamic programming over cut points.
 * Hard constraints: at most two lines, each within the line limit, and the block within the
 * block limit (a block is feasible iff putting as much as fits on the first line leaves a second
 * line that fits). Costs: a constant per block (fewer, fuller blocks), the break cost after the
 * block's last token, uneven or very short blocks, a speaker change or a pause inside a block, a
 * block whose words span more than 7 s, a block ending at a weak point just after a clause or
 * sentence break inside it, and a large
 * penalty when the block cannot meet the reading speed inside the time it may use: from its first
 * word's start to the next block's first word minus the minimum gap (the silence after it).
 * Splitting a block is therefore chosen only where extending into the following silence does not
 * already satisfy the reading speed.
 */
import { BREAK_COST, type Breaks } from './breaks.js';
import type { Token } from './tokens.js';

export interface BlockLimits {
  maxBlockChars: number;
  maxLineChars: number;
  maxCharsPerSecond: number;
  minGapMs: number;
  mediaEndMs: number;
}

const BLOCK_COST = 10;
const FILL_WEIGHT = 6;
const SHORT_SHARE = 0.3;
const SHORT_WEIGHT = 0.4;
const SPEAKER_CHANGE_COST = 30;
const READING_SPEED_COST = 1000;
/** Pauses inside a block longer than this cost PAUSE_WEIGHT per millisecond beyond it. */
const PAUSE_FREE_MS = 500;
const PAUSE_WEIGHT = 0.02;
/** Blocks whose words span longer than this cost SPAN_WEIGHT per millisecond beyond it. */
const SPAN_FREE_MS = 7000;
const SPAN_WEIGHT = 0.005;
/**
 * A block that ends at a weak point shortly after a clause or sentence break inside it (a new
 * clause's first words dangling at its end) costs up to TAIL_WEIGHT times the extra break cost.
 */
const TAIL_WEIGHT = 2;
const TAIL_SHARE = 1;

/** The time a block may use ends here: the next token's start minus the gap, or the media end. */
export function availableEnd(tokens: readonly Token[], j: number, lim: BlockLimits): number {
  const next = tokens[j + 1];
  return next === undefined ? lim.mediaEndMs : Math.min(lim.mediaEndMs, next.start - lim.minGapMs);
}

/** Milliseconds needed to read `chars` characters at `cps` characters per second. */
export function readingMs(chars: number, cps: number): number {
  return Math.ceil((chars * 1000) / cps);
}

/** Cut the tokens into blocks; returns the index one past each block's last token. */
export function segmentBlocks(tokens: readonly Token[], breaks: Breaks, lim: BlockLimits): number[] {
  const n = tokens.length;
  if (n === 0) return [];
  const L = lim.maxLineChars;
  const B = lim.maxBlockChars;
  const best = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
  const from = new Int32Array(n + 1).fill(-1);
  best[0] = 0;
  const minFill = SHORT_SHARE * B;
  for (let i = 0; i < n; i++) {
    const base = best[i]!;
    if (base === Number.POSITIVE_INFINITY) continue;
    const start = tokens[i]!.start;
    let line1 = 0;
    let line2 = -1;
    let speakerChange = false;
    let pauseCost = 0;
    let strongAt = -1;
    let prevChars = 0;
    for (let j = i; j < n; j++) {
      const tok = tokens[j]!;
      if (j === i) line1 = tok.len;
      else {
        if (breaks.forced[j - 1]) break;
        if (line2 < 0) {
          if (line1 + tok.glue + tok.len <= L) line1 += tok.glue + tok.len;
          else line2 = tok.len;
        } else line2 += tok.glue + tok.len;
        if (line2 > L) break;
        if (tok.speaker !== tokens[j - 1]!.speaker) speakerChange = true;
        if (breaks.cost[j - 1]! <= BREAK_COST.clause) strongAt = prevChars;
        const pause = tok.start - tokens[j - 1]!.end;
        if (pause > PAUSE_FREE_MS) pauseCost += (pause - PAUSE_FREE_MS) * PAUSE_WEIGHT;
      }
      const chars = line2 < 0 ? line1 : line1 + line2;
      if (chars > B) break;
      prevChars = chars;
      const slack = (B - chars) / B;
      let cost = base + BLOCK_COST + breaks.cost[j]! + FILL_WEIGHT * slack * slack;
      if (chars < minFill) cost += (minFill - chars) * SHORT_WEIGHT;
      if (speakerChange) cost += SPEAKER_CHANGE_COST;
      cost += pauseCost;
      const endCost = breaks.cost[j]!;
      if (strongAt > 0 && endCost > BREAK_COST.clause) {
        const tail = chars - strongAt;
        cost += TAIL_WEIGHT * Math.max(0, 1 - tail / (TAIL_SHARE * B)) * (endCost - BREAK_COST.clause);
      }
      const span = tok.end - start;
      if (span > SPAN_FREE_MS) cost += (span - SPAN_FREE_MS) * SPAN_WEIGHT;
      const need = readingMs(chars, lim.maxCharsPerSecond);
      const avail = availableEnd(tokens, j, lim) - start;
      if (need > avail) cost += READING_SPEED_COST * (1 + (need - Math.max(0, avail)) / need);
      if (cost < best[j + 1]!) {
        best[j + 1] = cost;
        from[j + 1] = i;
      }
    }
  }
  const ends: number[] = [];
  for (let k = n; k > 0; k = from[k]!) ends.push(k);
  return ends.reverse();
}
