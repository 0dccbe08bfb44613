/**
 * Agglomerative clustering, average linkage on cosine distance, with the nearest-neighbour-chain
 * algorithm (O(n^2) time, one n x n distance matrix). Cut the dendrogram at a distance threshold
 * (estimate the count) or at exactly k clusters.
 */

export interface Merge {
  a: number;
  b: number;
  distance: number;
}

/** Unit-length copies of `vectors`, after optional per-dimension standardization across all of them. */
export function prepareVectors(vectors: readonly Float32Array[], standardize: boolean): Float64Array[] {
  const n = vectors.length;
  const d = vectors[0]?.length ?? 0;
  const out = vectors.map((v) => Float64Array.from(v));
  if (standardize && n > 1) {
    for (let j = 0; j < d; j++) {
      let s = 0;
      for (const v of out) s += v[j]!;
      const mean = s / n;
      let s2 = 0;
      for (const v of out) s2 += (v[j]! - mean) ** 2;
      const sd = Math.sqrt(s2 / n) || 1;
      for (const v of out) v[j] = (v[j]! - mean) / sd;
    }
  }
  for (const v of out) {
    let norm = 0;
    for (let j = 0; j < d; j++) norm += v[j]! * v[j]!;
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < d; j++) v[j] = v[j]! / norm;
  }
  return out;
}

/** Cosine distance matrix (1 - cos) of unit vectors, row-major n x n. */
export function cosineDistances(units: readonly Float64Array[]): Float64Array {
  const n = units.length;
  const D = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let dot = 0;
      const a = units[i]!;
      const b = units[j]!;
      for (let k = 0; k < a.length; k++) dot += a[k]! * b[k]!;
      D[i * n + j] = D[j * n + i] = 1 - dot;
    }
  }
  return D;
}

/** The n - 1 merges of average-linkage clustering, sorted by distance; cluster ids are the smallest member index. */
export function averageLinkage(distances: Float64Array, n: number): Merge[] {
  const D = Float64Array.from(distances);
  const size = new Int32Array(n).fill(1);
  const active = new Uint8Array(n).fill(1);
  const merges: Merge[] = [];
  const chain: number[] = [];
  let remaining = n;
  while (remaining > 1) {
    if (!chain.length) chain.push(active.indexOf(1));
    for (;;) {
      const x = chain[chain.length - 1]!;
      const prev = chain.length > 1 ? chain[chain.length - 2]! : -1;
      let best = -1;
      let bestD = Infinity;
      for (let y = 0; y < n; y++) {
        if (!active[y] || y === x) continue;
        const d = D[x * n + y]!;
        if (d < bestD || (d === bestD && y === prev)) {
          bestD = d;
          best = y;
        }
      }
      if (best === prev) {
        chain.pop();
        chain.pop();
        const a = Math.min(x, best);
        const b = Math.max(x, best);
        merges.push({ a, b, distance: bestD });
        // Lance-Williams update for average linkage; b is folded into a.
        for (let y = 0; y < n; y++) {
          if (!active[y] || y === a || y === b) continue;
          const d = (size[a]! * D[a * n + y]! + size[b]! * D[b * n + y]!) / (size[a]! + size[b]!);
          D[a * n + y] = D[y * n + a] = d;
        }
        size[a] = size[a]! + size[b]!;
        active[b] = 0;
        remaining--;
        break;
      }
      chain.push(best);
    }
  }
  return merges.sort((p, q) => p.distance - q.distance);
}

/** Labels 0..k-1 (in order of first appearance) after applying merges up to `threshold`, or until `k` clusters remain. */
export function cutDendrogram(n: number, merges: readonly Merge[], cut: { threshold: number } | { k: number }): Int32Array {
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  let clusters = n;
  for (const m of merges) {
    if ('k' in cut ? clusters <= cut.k : m.distance > cut.threshold) break;
    const ra = find(m.a);
    const rb = find(m.b);
    if (ra !== rb) {
      parent[Math.max(ra, rb)] = Math.min(ra, rb);
      clusters--;
    }
  }
  const labels = new Int32Array(n);
  const ids = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    if (!ids.has(r)) ids.set(r, ids.size);
    labels[i] = ids.get(r)!;
  }
  return labels;
}
