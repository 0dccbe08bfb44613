/**
 * Beam search over a decoder that runs its live hypotheses as the rows of one batch, with the
 * rules of transformers' BeamSearchScorer as M2M100's generation_config sets them (num_beams,
 * early_stopping true, length_penalty 1.0):
 * - each step every live hypothesis proposes its 2 x beams best next tokens; all proposals are
 *   ranked by the sum of token log-probabilities;
 * - a proposal that ends the sentence (</s>) among the first `beams` ranks is a finished
 *   hypothesis, scored sum / generated_length ^ length_penalty (generated_length: the tokens after
 *   the decoder start, the forced language token included, </s> excluded); the others fill the
 *   `beams` live hypotheses of the next step;
 * - the search stops when `beams` hypotheses are finished, or at the length limit (the live ones
 *   are then finished as they are).
 * With beams = 1 this is greedy decoding. The n-best list is the finished hypotheses by score.
 */
import { throwIfAborted } from '@dub/core';

/** The decoder as beam search sees it: one row per live hypothesis. */
export interface BeamDecoder {
  /**
   * Feed one new token per row (rows in the order of `rows`: row i continues the previous step's
   * row rows[i], whose cache it takes) and return each row's next-token logits.
   */
  step(tokens: readonly number[], rows: readonly number[]): Promise<Float32Array[]>;
}

export interface BeamOptions {
  beams: number;
  /** Tokens generated at most (the forced language token not counted). */
  maxNewTokens: number;
  eosId: number;
  /** length_penalty of the generation config (1.0 for M2M100). */
  lengthPenalty?: number;
  /** How many finished hypotheses to return (at most `beams`). */
  nBest?: number;
  signal?: AbortSignal;
}

export interface Hypothesis {
  /** Generated tokens, without the forced language token and </s>. */
  tokens: number[];
  /** Sum of the tokens' log-probabilities (</s> included). */
  logprob: number;
  /** The ranking score: logprob / generated_length ^ length_penalty. */
  score: number;
  /** Whether it ended with </s> (false: cut at the length limit). */
  finished: boolean;
}

/** log(sum(exp(logits))), computed stably. */
export function logSumExp(logits: Float32Array): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return max + Math.log(sum);
}

/** log-softmax of `logits` into a new array. */
export function logSoftmax(logits: Float32Array): Float64Array {
  const lse = logSumExp(logits);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - lse;
  return out;
}

/** Indices of the k largest values, largest first (ties: lower index first). */
export function topK(values: Float32Array | Float64Array, k: number): number[] {
  const idx: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (idx.length === k && v <= values[idx[k - 1]!]!) continue;
    let j = idx.length < k ? idx.length : k - 1;
    if (idx.length < k) idx.push(i);
    while (j > 0 && values[idx[j - 1]!]! < v) {
      idx[j] = idx[j - 1]!;
      j--;
    }
    idx[j] = i;
  }
  return idx;
}

/**
 * Run beam search from the decoder's state after its prompt (decoder start + forced language
 * token): `first` are the logits that prompt produced (one row).
 */
export async function beamSearch(decoder: BeamDecoder, first: Float32Array, o: BeamOptions): Promise<Hypothesis[]> {
  const beams = Math.max(1, Math.floor(o.beams));
  const lp = o.lengthPenalty ?? 1;
  const norm = (logprob: number, generated: number) => logprob / Math.pow(generated, lp);
  let live: { tokens: number[]; logprob: number }[] = [{ tokens: [], logprob: 0 }];
  let logits: Float32Array[] = [first];
  const finished: Hypothesis[] = [];
  for (let step = 0; ; step++) {
    throwIfAborted(o.signal);
    const proposals: { row: number; token: number; logprob: number }[] = [];
    for (const [row, h] of live.entries()) {
      // the best tokens of the logits are those of the log-softmax: one pass for the normaliser, one for the top
      const l = logits[row]!;
      const lse = logSumExp(l);
      for (const t of topK(l, 2 * beams)) proposals.push({ row, token: t, logprob: h.logprob + (l[t]! - lse) });
    }
    proposals.sort((a, b) => b.logprob - a.logprob || a.row - b.row || a.token - b.token);
    const next: { tokens: number[]; logprob: number; row: number }[] = [];
    for (const [rank, p] of proposals.entries()) {
      const h = live[p.row]!;
      if (p.token === o.eosId) {
        // generated so far: the language token + h.tokens (</s> not counted), as transformers counts it
        if (rank < beams) finished.push({ tokens: h.tokens, logprob: p.logprob, score: norm(p.logprob, h.tokens.length + 1), finished: true });
        continue;
      }
      next.push({ tokens: [...h.tokens, p.token], logprob: p.logprob, row: p.row });
      if (next.length === beams) break;
    }
    if (finished.length >= beams || !next.length) break;
    if (step + 1 >= o.maxNewTokens) {
      for (const h of next) finished.push({ tokens: h.tokens, logprob: h.logprob, score: norm(h.logprob, h.tokens.length + 1), finished: false });
      break;
    }
    logits = await decoder.step(next.map((h) => h.tokens.at(-1)!), next.map((h) => h.row));
    live = next;
  }
  finished.sort((a, b) => b.score - a.score);
  return finished.slice(0, Math.max(1, Math.min(o.nBest ?? beams, finished.length)));
}
