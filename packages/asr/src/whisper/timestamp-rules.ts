/**
 * Whisper's logit rules for timestamped decoding (openai/whisper ApplyTimestampRules), applied in
 * place to one step's logits given the tokens sampled so far (after the prompt):
 * <|notimestamps|> and other special tokens never; the first token is a timestamp no later than
 * `maxInitialTimestamp`; timestamps come in pairs (after a lone timestamp comes text or a closing
 * timestamp, after a pair comes text); timestamps never go back; and when the timestamp tokens
 * together are more likely than any single text token, a timestamp is taken.
 */
export interface TimestampRuleTokens {
  eot: number;
  noTimestamps: number;
  timestampBegin: number;
}

export function applyTimestampRules(logits: Float32Array, seq: readonly number[], t: TimestampRuleTokens, maxInitialTimestampIndex = 50): void {
  const { eot, timestampBegin: tb } = t;
  const V = logits.length;
  const NEG = -Infinity;
  // Special tokens between <|endoftext|> and the timestamps (sot, languages, tasks, notimestamps).
  for (let i = eot + 1; i < tb && i < V; i++) logits[i] = NEG;
  logits[t.noTimestamps] = NEG;

  const last = seq.length >= 1 ? seq[seq.length - 1]! : -1;
  const lastWasTs = seq.length >= 1 && last >= tb;
  const penultimateWasTs = seq.length < 2 || seq[seq.length - 2]! >= tb;
  if (lastWasTs) {
    if (penultimateWasTs) for (let i = tb; i < V; i++) logits[i] = NEG;
    else for (let i = 0; i < eot; i++) logits[i] = NEG;
  }
  const stamps = seq.filter((x) => x >= tb);
  if (stamps.length) {
    const lastTs = stamps[stamps.length - 1]!;
    const floor = lastWasTs && !penultimateWasTs ? lastTs : lastTs + 1;
    for (let i = tb; i < Math.min(floor, V); i++) logits[i] = NEG;
  }
  if (seq.length === 0) {
    for (let i = 0; i < tb; i++) logits[i] = NEG;
    for (let i = tb + maxInitialTimestampIndex + 1; i < V; i++) logits[i] = NEG;
  }
  // Sum of timestamp probability vs the best text token.
  let max = NEG;
  for (let i = 0; i < V; i++) if (logits[i]! > max) max = logits[i]!;
  if (max === NEG) return;
  let sumAll = 0;
  let sumTs = 0;
  let maxText = NEG;
  for (let i = 0; i < V; i++) {
    const e = Math.exp(logits[i]! - max);
    sumAll += e;
    if (i >= tb) sumTs += e;
    else if (logits[i]! > maxText) maxText = logits[i]!;
  }
  const logpTs = Math.log(sumTs) - Math.log(sumAll);
  const logpText = maxText - max - Math.log(sumAll);
  if (sumTs > 0 && logpTs > logpText) for (let i = 0; i < tb; i++) logits[i] = NEG;
}

/** Softmax probability of `index` in `logits`. */
export function softmaxAt(logits: Float32Array, index: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return Math.exp(logits[index]! - max) / sum;
}

export function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}
