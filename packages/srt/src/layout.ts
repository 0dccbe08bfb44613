/**
 * Line layout of one block: one line when it fits, otherwise the two-line split that keeps both
 * lines within the line limit and the block within the block limit, minimizing the length
 * difference of the two lines plus a share of the break cost (so lines break at punctuation or
 * before a conjunction where that costs little balance). On a tie the shorter line goes on top.
 */
import { DubError } from '@dub/core';
import type { Breaks } from './breaks.js';
import type { Token } from './tokens.js';

const LINE_BREAK_WEIGHT = 1;

export interface BlockLayout {
  lines: string[];
  /** Characters of the block: both lines, the line break not counted. */
  chars: number;
}

function join(tokens: readonly Token[], from: number, to: number): string {
  let s = tokens[from]!.text;
  for (let k = from + 1; k < to; k++) s += tokens[k]!.glue ? ` ${tokens[k]!.text}` : tokens[k]!.text;
  return s;
}

/** Lay out tokens [from, to) as one or two lines. */
export function layoutBlock(tokens: readonly Token[], from: number, to: number, breaks: Breaks, maxLineChars: number, maxBlockChars: number): BlockLayout {
  let total = tokens[from]!.len;
  for (let k = from + 1; k < to; k++) total += tokens[k]!.glue + tokens[k]!.len;
  if (total <= maxLineChars) return { lines: [join(tokens, from, to)], chars: total };
  let bestK = -1;
  let bestCost = Number.POSITIVE_INFINITY;
  let bestChars = 0;
  let l1 = tokens[from]!.len;
  for (let k = from + 1; k < to; k++) {
    const l2 = total - l1 - tokens[k]!.glue;
    if (l1 <= maxLineChars && l2 <= maxLineChars && l1 + l2 <= maxBlockChars) {
      const cost = Math.abs(l1 - l2) + LINE_BREAK_WEIGHT * breaks.cost[k - 1]! + (l1 > l2 ? 0.01 : 0);
      if (cost < bestCost) {
        bestCost = cost;
        bestK = k;
        bestChars = l1 + l2;
      }
    }
    l1 += tokens[k]!.glue + tokens[k]!.len;
  }
  if (bestK < 0) throw new DubError('internal_error', `block of ${total} characters has no valid line split`);
  return { lines: [join(tokens, from, bestK), join(tokens, bestK, to)], chars: bestChars };
}
