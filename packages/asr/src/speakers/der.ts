/**
 * Diarization error rate, md-eval style on a 10 ms grid: per frame, error = max(reference speakers,
 * hypothesis speakers) - correctly mapped speakers, summed and divided by the reference speaker
 * time. The speaker mapping maximizes total overlap (exhaustive for small counts). Frames within
 * `collar` seconds of a reference turn boundary are not scored (0.25 s is the usual collar).
 */

export interface LabelledTurn {
  start: number;
  end: number;
  speaker: string;
}

export interface DerResult {
  der: number;
  missed: number;
  falseAlarm: number;
  confusion: number;
  /** Scored reference speaker time (seconds). */
  total: number;
  /** Hypothesis speaker -> reference speaker. */
  mapping: Record<string, string>;
}

/** `SPEAKER <file> <chan> <start> <duration> <NA> <NA> <speaker> ...` lines. */
export function parseRttm(text: string): LabelledTurn[] {
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[0] === 'SPEAKER' && f.length >= 8)
    .map((f) => ({ start: Number(f[3]), end: Number(f[3]) + Number(f[4]), speaker: f[7]! }));
}

const STEP = 0.01;

function bestMapping(overlap: number[][], hyp: string[], ref: string[]): Record<string, string> {
  let best = -1;
  let bestMap: number[] = [];
  const assign = new Array<number>(hyp.length).fill(-1);
  const used = new Array<boolean>(ref.length).fill(false);
  const walk = (h: number, score: number) => {
    if (h === hyp.length) {
      if (score > best) {
        best = score;
        bestMap = [...assign];
      }
      return;
    }
    assign[h] = -1;
    walk(h + 1, score);
    for (let r = 0; r < ref.length; r++) {
      if (used[r]) continue;
      used[r] = true;
      assign[h] = r;
      walk(h + 1, score + overlap[h]![r]!);
      used[r] = false;
      assign[h] = -1;
    }
  };
  if (hyp.length <= 7 && ref.length <= 7) walk(0, 0);
  else {
    // Greedy for large counts.
    const pairs = hyp.flatMap((_, h) => ref.map((_, r) => [h, r, overlap[h]![r]!] as const)).sort((a, b) => b[2] - a[2]);
    bestMap = new Array<number>(hyp.length).fill(-1);
    const usedR = new Set<number>();
    for (const [h, r] of pairs) if (bestMap[h] === -1 && !usedR.has(r)) {
      bestMap[h] = r;
      usedR.add(r);
    }
  }
  const out: Record<string, string> = {};
  bestMap.forEach((r, h) => {
    if (r >= 0) out[hyp[h]!] = ref[r]!;
  });
  return out;
}

export function diarizationErrorRate(reference: readonly LabelledTurn[], hypothesis: readonly LabelledTurn[], collar = 0.25): DerResult {
  const end = Math.max(0, ...reference.map((t) => t.end), ...hypothesis.map((t) => t.end));
  const n = Math.ceil(end / STEP);
  const refIds = [...new Set(reference.map((t) => t.speaker))];
  const hypIds = [...new Set(hypothesis.map((t) => t.speaker))];
  const grid = (turns: readonly LabelledTurn[], ids: string[]) => {
    const g = ids.map(() => new Uint8Array(n));
    for (const t of turns) {
      const row = g[ids.indexOf(t.speaker)]!;
      for (let i = Math.max(0, Math.round(t.start / STEP)); i < Math.min(n, Math.round(t.end / STEP)); i++) row[i] = 1;
    }
    return g;
  };
  const R = grid(reference, refIds);
  const H = grid(hypothesis, hypIds);
  const scored = new Uint8Array(n).fill(1);
  if (collar > 0) {
    for (const t of reference) {
      for (const b of [t.start, t.end]) {
        for (let i = Math.max(0, Math.round((b - collar) / STEP)); i < Math.min(n, Math.round((b + collar) / STEP)); i++) scored[i] = 0;
      }
    }
  }
  const overlap = hypIds.map((_, h) => refIds.map((_, r) => {
    let s = 0;
    for (let i = 0; i < n; i++) if (scored[i] && H[h]![i] && R[r]![i]) s++;
    return s;
  }));
  const mapping = bestMapping(overlap, hypIds, refIds);
  let missed = 0;
  let falseAlarm = 0;
  let confusion = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (!scored[i]) continue;
    let nr = 0;
    let nh = 0;
    let correct = 0;
    for (let r = 0; r < refIds.length; r++) nr += R[r]![i]!;
    for (let h = 0; h < hypIds.length; h++) {
      if (!H[h]![i]) continue;
      nh++;
      const m = mapping[hypIds[h]!];
      if (m !== undefined && R[refIds.indexOf(m)]![i]) correct++;
    }
    total += nr;
    missed += Math.max(0, nr - nh);
    falseAlarm += Math.max(0, nh - nr);
    confusion += Math.min(nr, nh) - correct;
  }
  const s = (x: number) => Math.round(x * STEP * 1000) / 1000;
  return { der: total ? (missed + falseAlarm + confusion) / total : 0, missed: s(missed), falseAlarm: s(falseAlarm), confusion: s(confusion), total: s(total), mapping };
}
