/**
 * How natural it is to end a block or a line after each token: 0 is best (sentence end, speaker
 * change, long pause, end of a segment in per-segment profiles), then clause punctuation and
 * pauses, then before a conjunction/article, then any other word boundary, then right after a
 * conjunction/article (it would dangle); the middle of a word split for length is the last resort.
 */
import type { Token } from './tokens.js';

/** Closing quotes and brackets that may follow the punctuation mark. */
const CLOSERS = `[\\p{Pe}\\p{Pf}"'»”’」』）\\]]*`;
const SENTENCE_END = new RegExp(`[.!?…。！？؟۔।]${CLOSERS}$`, 'u');
const CLAUSE_END = new RegExp(`[,;:—–、，；：،؛]${CLOSERS}$`, 'u');
const DASH = /^[-—–]+$/u;
const LEADING_NON_LETTERS = /^[^\p{L}\p{N}]+/u;

export const BREAK_COST = {
  best: 0,
  segment: 3,
  clause: 4,
  pause: 5,
  breakWord: 8,
  plain: 24,
  /** After a conjunction or article: it would dangle at the end of the line. */
  afterBreakWord: 30,
  midWord: 60,
} as const;

export interface Breaks {
  /** Cost of ending a block or line after token t (the last token: 0). */
  cost: Float64Array;
  /** A block must end after token t. */
  forced: Uint8Array;
}

export interface BreakConfig {
  crossSegment: boolean;
  maxPauseMs: number;
  breakWords: ReadonlySet<string>;
}

function isBreakWord(text: string, words: ReadonlySet<string>): boolean {
  return words.has(text.replace(LEADING_NON_LETTERS, '').toLowerCase());
}

export function computeBreaks(tokens: readonly Token[], cfg: BreakConfig): Breaks {
  const n = tokens.length;
  const cost = new Float64Array(n);
  const forced = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const tok = tokens[t]!;
    const next = tokens[t + 1];
    if (next === undefined) {
      forced[t] = 1;
      continue;
    }
    const newSegment = next.seg !== tok.seg;
    const gap = next.start - tok.end;
    if (newSegment && !cfg.crossSegment) {
      forced[t] = 1;
      continue;
    }
    if (cfg.crossSegment && gap >= cfg.maxPauseMs) {
      forced[t] = 1;
      continue;
    }
    let c: number;
    if (next.midWord) c = BREAK_COST.midWord;
    else if (SENTENCE_END.test(tok.text)) c = BREAK_COST.best;
    else if (CLAUSE_END.test(tok.text) || DASH.test(tok.text) || DASH.test(next.text)) c = BREAK_COST.clause;
    else if (!tok.spaced && next.glue === 1) c = BREAK_COST.clause;
    else if (tok.spaced && isBreakWord(tok.text, cfg.breakWords)) c = BREAK_COST.afterBreakWord;
    else if (next.spaced && isBreakWord(next.text, cfg.breakWords)) c = BREAK_COST.breakWord;
    else c = BREAK_COST.plain;
    if (!next.midWord) {
      if (gap >= 700) c = Math.min(c, 1);
      else if (gap >= 300) c = Math.min(c, BREAK_COST.pause);
      if (newSegment) c = next.speaker !== tok.speaker ? BREAK_COST.best : Math.min(c, BREAK_COST.segment);
    }
    cost[t] = c;
  }
  return { cost, forced };
}
