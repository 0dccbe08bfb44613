/**
 * Byte-pair merges by rank, the step GPT-2-style tokenizers share (Whisper's in @dub/asr,
 * Chatterbox's in @dub/voice): each tokenizer splits and maps its text its own way, then merges.
 */

/**
 * Merge `symbols` by `ranks` (keys "a b", the merges file's lines; lower merges first): the pair
 * of adjacent symbols with the lowest rank (the first such pair where ranks tie) is merged
 * everywhere it stands, until no adjacent pair has a rank.
 */
export function bpeMerge(symbols: readonly string[], ranks: ReadonlyMap<string, number>): string[] {
  let parts = [...symbols];
  while (parts.length > 1) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i < parts.length - 1; i++) {
      const r = ranks.get(`${parts[i]} ${parts[i + 1]}`);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) break;
    const a = parts[best]!;
    const b = parts[best + 1]!;
    const merged: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      if (i < parts.length - 1 && parts[i] === a && parts[i + 1] === b) {
        merged.push(a + b);
        i++;
      } else merged.push(parts[i]!);
    }
    parts = merged;
  }
  return parts;
}
