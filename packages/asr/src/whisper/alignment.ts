/**
 * Token times from the decoder's cross-attention, as openai/whisper's timing.py finds them
 * (find_alignment): the attention of the alignment heads (the heads whose cross-attention follows
 * the audio; openai's _ALIGNMENT_HEADS per model) from each decoded token over the window's audio
 * frames, standardized per frame over the tokens, median-filtered along the frames (width 7),
 * averaged over the heads; dynamic time warping through its negative gives each token the frame
 * where it starts (20 ms a frame). Whisper's timestamp tokens time a segment only (often a
 * sentence over several lines); these time each word.
 */

/**
 * openai/whisper's alignment heads ([layer, head] of the decoder): its _ALIGNMENT_HEADS masks
 * decoded (python3: np.frombuffer(gzip.decompress(base64.b85decode(mask)), bool).reshape(layers,
 * heads).nonzero(); base "ABzY8KQ!870{>%RzyTQH3`Q^yNP!>##QT-<FaQ7m", 6 x 8).
 */
export const WHISPER_ALIGNMENT_HEADS: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  base: [[3, 1], [4, 2], [4, 3], [4, 7], [5, 1], [5, 2], [5, 4], [5, 6]],
  small: [[5, 3], [5, 9], [8, 0], [8, 4], [8, 7], [8, 8], [9, 0], [9, 7], [9, 9], [10, 5]],
};

/** Seconds per encoder frame (openai: TOKENS_PER_SECOND = 50). */
export const ALIGNMENT_FRAME_SECONDS = 0.02;

/** The alignment heads of a model by its id (whisper-base, whisper-base-q8, whisper-small, ...); undefined when not known. */
export function alignmentHeadsOf(model: string | undefined): readonly (readonly [number, number])[] | undefined {
  const size = model?.replace(/^whisper-/, '').replace(/-q8$/, '');
  return size ? WHISPER_ALIGNMENT_HEADS[size] : undefined;
}

/** openai's median_filter along the last axis of rows of `cols` values: reflect padding of width/2 each side, the median of each window. */
export function medianFilterRows(x: Float32Array, rows: number, cols: number, width: number): Float32Array {
  const pad = Math.floor(width / 2);
  if (pad === 0 || cols <= pad) return x.slice();
  const out = new Float32Array(rows * cols);
  const win = new Float32Array(width);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * cols, (r + 1) * cols);
    // numpy/torch 'reflect': index -1 is 1, index cols is cols - 2
    const at = (i: number) => row[i < 0 ? -i : i >= cols ? 2 * cols - 2 - i : i]!;
    for (let c = 0; c < cols; c++) {
      for (let k = 0; k < width; k++) win[k] = at(c - pad + k);
      win.sort();
      out[r * cols + c] = win[pad]!;
    }
  }
  return out;
}

/**
 * openai's dtw_cpu and backtrace over an n x m cost matrix (row-major): the path from (0, 0) to
 * (n-1, m-1), as [textIndices, timeIndices]. Ties go as openai's do: the diagonal only when
 * strictly below both, then up, else left.
 */
export function dtw(x: Float32Array, n: number, m: number): [number[], number[]] {
  const W = m + 1;
  const cost = new Float64Array((n + 1) * W).fill(Infinity);
  const trace = new Int8Array((n + 1) * W).fill(-1);
  cost[0] = 0;
  for (let j = 1; j <= m; j++) {
    for (let i = 1; i <= n; i++) {
      const c0 = cost[(i - 1) * W + j - 1]!;
      const c1 = cost[(i - 1) * W + j]!;
      const c2 = cost[i * W + j - 1]!;
      let c: number;
      let t: number;
      if (c0 < c1 && c0 < c2) [c, t] = [c0, 0];
      else if (c1 < c0 && c1 < c2) [c, t] = [c1, 1];
      else [c, t] = [c2, 2];
      cost[i * W + j] = x[(i - 1) * m + j - 1]! + c;
      trace[i * W + j] = t;
    }
  }
  for (let j = 0; j <= m; j++) trace[j] = 2;
  for (let i = 0; i <= n; i++) trace[i * W] = 1;
  const text: number[] = [];
  const time: number[] = [];
  let i = n;
  let j = m;
  while (i > 0 || j > 0) {
    text.push(i - 1);
    time.push(j - 1);
    const t = trace[i * W + j];
    if (t === 0) [i, j] = [i - 1, j - 1];
    else if (t === 1) i -= 1;
    else j -= 1;
  }
  return [text.reverse(), time.reverse()];
}

/**
 * The frame where each of `tokens` rows starts: `weights[h][t]` is head h's attention (over at
 * least `frames` encoder frames) when predicting token t (the rows of the text tokens, then the
 * end token's). Returns one start frame per row (the last row's start is where the text ends).
 */
export function alignmentStartFrames(weights: readonly (readonly Float32Array[])[], frames: number, medfiltWidth = 7): number[] {
  const heads = weights.length;
  const n = weights[0]?.length ?? 0;
  if (!heads || !n || frames < 1) return [];
  const matrix = new Float32Array(n * frames);
  const w = new Float32Array(n * frames);
  for (const rows of weights) {
    for (let t = 0; t < n; t++) w.set(rows[t]!.subarray(0, frames), t * frames);
    // standardize each frame over the tokens (torch.std_mean, unbiased=False)
    for (let f = 0; f < frames; f++) {
      let mean = 0;
      for (let t = 0; t < n; t++) mean += w[t * frames + f]!;
      mean /= n;
      let v = 0;
      for (let t = 0; t < n; t++) v += (w[t * frames + f]! - mean) ** 2;
      const std = Math.sqrt(v / n);
      for (let t = 0; t < n; t++) w[t * frames + f] = std > 0 ? (w[t * frames + f]! - mean) / std : 0;
    }
    const filtered = medianFilterRows(w, n, frames, medfiltWidth);
    for (let k = 0; k < matrix.length; k++) matrix[k] += filtered[k]! / heads;
  }
  for (let k = 0; k < matrix.length; k++) matrix[k] = -matrix[k]!;
  const [text, time] = dtw(matrix, n, frames);
  // the frame at each jump to the next row (openai: jumps = diff(text_indices) != 0, the first one included)
  const starts: number[] = [];
  for (let k = 0; k < text.length; k++) if (k === 0 || text[k] !== text[k - 1]) starts.push(time[k]!);
  return starts;
}

/**
 * A word DTW stretches over a pause: the attention of a word said after a silence spreads over the
 * silence, so it starts early, and a sentence's last word may run on into what follows. openai's
 * add_word_timestamps clips words longer than twice the median word duration (capped at 0.7 s)
 * at sentence ends; here every aligned word that long is clipped: one ending a sentence (. ! ?)
 * keeps its start and ends that long after it, any other keeps its end and starts that long
 * before it. In place; returns how many were clipped.
 */
export function shortenLongWords(words: { text: string; start: number; end: number; aligned?: boolean }[]): number {
  const aligned = words.filter((w) => w.aligned);
  if (!aligned.length) return 0;
  const d = aligned.map((w) => w.end - w.start).sort((a, b) => a - b);
  const median = Math.min(0.7, d.length % 2 ? d[(d.length - 1) / 2]! : (d[d.length / 2 - 1]! + d[d.length / 2]!) / 2);
  const max = 2 * median;
  if (!(max > 0)) return 0;
  let n = 0;
  for (const w of aligned) {
    if (w.end - w.start <= max) continue;
    if (/[.!?。！？]["'»”)\]]*$/u.test(w.text)) w.end = Math.round((w.start + max) * 1000) / 1000;
    else w.start = Math.round((w.end - max) * 1000) / 1000;
    n++;
  }
  return n;
}
