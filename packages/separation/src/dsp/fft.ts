/**
 * In-place iterative radix-2 complex FFT on Float64Arrays. Twiddles and the bit-reversal
 * permutation are computed once per size; a transform allocates nothing.
 */
export class Fft {
  readonly size: number;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  /** Pairs (i, j), i < j, swapped by the bit-reversal permutation. */
  private readonly swaps: Uint32Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 4 || (size & (size - 1)) !== 0) throw new RangeError(`FFT size must be a power of two >= 4, got ${size}`);
    this.size = size;
    const half = size >> 1;
    this.cos = new Float64Array(half);
    this.sin = new Float64Array(half);
    for (let k = 0; k < half; k++) {
      const a = (-2 * Math.PI * k) / size;
      this.cos[k] = Math.cos(a);
      this.sin[k] = Math.sin(a);
    }
    const bits = Math.log2(size);
    const pairs: number[] = [];
    for (let i = 0; i < size; i++) {
      let r = 0;
      for (let b = 0, x = i; b < bits; b++, x >>= 1) r = (r << 1) | (x & 1);
      if (i < r) pairs.push(i, r);
    }
    this.swaps = Uint32Array.from(pairs);
  }

  /** Forward transform, X[k] = sum_n x[n] e^{-2 pi i k n / N}, in place. */
  forward(re: Float64Array, im: Float64Array): void {
    this.transform(re, im);
  }

  /**
   * Inverse transform without the 1/N factor, x[n] = sum_k X[k] e^{+2 pi i k n / N}, in place
   * (the forward transform with real and imaginary parts swapped).
   */
  inverseUnscaled(re: Float64Array, im: Float64Array): void {
    this.transform(im, re);
  }

  private transform(re: Float64Array, im: Float64Array): void {
    const n = this.size;
    const swaps = this.swaps;
    for (let s = 0; s < swaps.length; s += 2) {
      const i = swaps[s]!;
      const j = swaps[s + 1]!;
      let t = re[i]!;
      re[i] = re[j]!;
      re[j] = t;
      t = im[i]!;
      im[i] = im[j]!;
      im[j] = t;
    }
    // Stages of length 2 and 4 have trivial twiddles (1 and -i): one combined radix-4 pass.
    for (let i = 0; i < n; i += 4) {
      const ar = re[i]!, ai = im[i]!;
      const br = re[i + 1]!, bi = im[i + 1]!;
      const cr = re[i + 2]!, ci = im[i + 2]!;
      const dr = re[i + 3]!, di = im[i + 3]!;
      const s0r = ar + br, s0i = ai + bi;
      const d0r = ar - br, d0i = ai - bi;
      const s1r = cr + dr, s1i = ci + di;
      const d1r = cr - dr, d1i = ci - di;
      re[i] = s0r + s1r;
      im[i] = s0i + s1i;
      re[i + 2] = s0r - s1r;
      im[i + 2] = s0i - s1i;
      // (d1r + i d1i) * (-i) = d1i - i d1r
      re[i + 1] = d0r + d1i;
      im[i + 1] = d0i - d1r;
      re[i + 3] = d0r - d1i;
      im[i + 3] = d0i + d1r;
    }
    const cos = this.cos;
    const sin = this.sin;
    for (let len = 8; len <= n; len <<= 1) {
      const half = len >> 1;
      const step = n / len;
      for (let j = 0, k = 0; j < half; j++, k += step) {
        const wr = cos[k]!;
        const wi = sin[k]!;
        for (let a = j; a < n; a += len) {
          const b = a + half;
          const xr = re[b]!;
          const xi = im[b]!;
          const tr = wr * xr - wi * xi;
          const ti = wr * xi + wi * xr;
          const ur = re[a]!;
          const ui = im[a]!;
          re[a] = ur + tr;
          im[a] = ui + ti;
          re[b] = ur - tr;
          im[b] = ui - ti;
        }
      }
    }
  }
}

/** Periodic Hann window (torch.hann_window default): 0.5 - 0.5 cos(2 pi n / N). */
export function hannWindow(size: number): Float64Array {
  const w = new Float64Array(size);
  for (let i = 0; i < size; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size);
  return w;
}
