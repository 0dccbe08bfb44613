/**
 * Block timing (integer milliseconds). Each block starts at its first word (or later, to keep the
 * minimum gap after the previous block) and needs max(minimum duration, characters / reading
 * speed). It ends at its last word or later when it needs more time, extending into the silence
 * that follows up to the next block's first word minus the minimum gap (or the media end); when
 * that is not enough it also starts earlier, back into the silence before it down to the previous
 * block's end plus the gap. A block that still lacks time keeps what it has and is reported.
 * Blocks never overlap and are always at least the minimum gap apart: with crowded input (the next
 * block's words start before this block can show at all) a block lasts at least 1 ms and pushes
 * the next block's start later.
 */
import { availableEnd, readingMs, type BlockLimits } from './blocks.js';
import type { Token } from './tokens.js';

export interface BlockTiming {
  start: number;
  end: number;
}

export interface TimingLimits extends BlockLimits {
  minDurationMs: number;
}

export function timeBlocks(tokens: readonly Token[], ends: readonly number[], chars: readonly number[], lim: TimingLimits): BlockTiming[] {
  const out: BlockTiming[] = [];
  let from = 0;
  let prevEnd = Number.NEGATIVE_INFINITY;
  ends.forEach((to, b) => {
    let wordEnd = tokens[from]!.end;
    for (let k = from + 1; k < to; k++) wordEnd = Math.max(wordEnd, tokens[k]!.end);
    const lo = b === 0 ? 0 : prevEnd + lim.minGapMs;
    const hi = availableEnd(tokens, to - 1, lim);
    const need = Math.max(lim.minDurationMs, readingMs(chars[b]!, lim.maxCharsPerSecond));
    let start = Math.max(tokens[from]!.start, lo);
    let end = Math.min(Math.max(wordEnd, start + need), hi);
    if (end - start < need) start = Math.max(lo, Math.min(start, end - need));
    if (end <= start) end = start + Math.max(1, Math.min(need, wordEnd - start));
    out.push({ start, end });
    prevEnd = end;
    from = to;
  });
  return out;
}
