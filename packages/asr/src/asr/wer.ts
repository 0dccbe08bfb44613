/** Word error rate: (substitutions + deletions + insertions) / reference words, after normalization. */

export function normalizeForWer(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[’']/g, "'")
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

export interface WerResult {
  wer: number;
  substitutions: number;
  deletions: number;
  insertions: number;
  referenceWords: number;
}

export function wordErrorRate(reference: string, hypothesis: string): WerResult {
  const r = normalizeForWer(reference);
  const h = normalizeForWer(hypothesis);
  // d[i][j] = (cost, subs, dels, ins) of aligning r[0..i) with h[0..j).
  type Cell = [number, number, number, number];
  let prev: Cell[] = Array.from({ length: h.length + 1 }, (_, j) => [j, 0, 0, j] as Cell);
  for (let i = 1; i <= r.length; i++) {
    const cur: Cell[] = [[i, 0, i, 0]];
    for (let j = 1; j <= h.length; j++) {
      const same = r[i - 1] === h[j - 1];
      const diag = prev[j - 1]!;
      const up = prev[j]!;
      const left = cur[j - 1]!;
      let best: Cell = [diag[0] + (same ? 0 : 1), diag[1] + (same ? 0 : 1), diag[2], diag[3]];
      if (up[0] + 1 < best[0]) best = [up[0] + 1, up[1], up[2] + 1, up[3]];
      if (left[0] + 1 < best[0]) best = [left[0] + 1, left[1], left[2], left[3] + 1];
      cur.push(best);
    }
    prev = cur;
  }
  const [cost, substitutions, deletions, insertions] = prev[h.length]!;
  return { wer: r.length ? cost / r.length : h.length ? 1 : 0, substitutions, deletions, insertions, referenceWords: r.length };
}
