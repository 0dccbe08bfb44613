/**
 * Discrete Fourier transform of any length, shared by the audio front-ends (Whisper's 400-point
 * frames, Kaldi fbank, Wav2Lip's 800-point STFT) and the HTDemucs STFT/iSTFT (4096 points).
 *
 * Powers of two run an iterative radix-2 transform: bit reversal by precomputed swap pairs,
 * precomputed twiddles, the first two stages fused into one radix-4 pass. Other lengths use
 * Bluestein's chirp-z transform over a radix-2 transform of length >= 2n - 1. Tables and work
 * buffers are built once per instance (one instance serves every frame of a stage), so a
 * transform allocates nothing.
 */

/** Bluestein tables: the chirp exp(-i pi k^2 / n), the transform of its conjugate (scaled by 1/m), work buffers. */
interface Bluestein {
  chirpRe: Float64Array;
  chirpIm: Float64Array;
  kernelRe: Float64Array;
  kernelIm: Float64Array;
  workRe: Float64Array;
  workIm: Float64Array;
}

/**
 * Power spectrum of real frames: an even length n packs the frame into n/2 complex values
 * (even samples real, odd samples imaginary), transforms those with `half` and untangles the
 * two spectra with the twiddles exp(-2 pi i k / n); an odd length transforms the whole frame.
 */
interface RealPlan {
  half: Fft | undefined;
  re: Float64Array;
  im: Float64Array;
  twRe: Float64Array;
  twIm: Float64Array;
}

export class Fft {
  readonly size: number;
  /** Length of the radix-2 transform: `size` itself, or Bluestein's padded length. */
  private readonly m: number;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  /** Pairs (i, j), i < j, swapped by the bit-reversal permutation of length m. */
  private readonly swaps: Uint32Array;
  private readonly bluestein: Bluestein | undefined;
  /** Built by the first `powerSpectrum` call (transforms that never take one do not pay for it). */
  private real: RealPlan | undefined;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`FFT size must be a positive integer, got ${size}`);
    this.size = size;
    const pow2 = (size & (size - 1)) === 0;
    const m = pow2 ? size : nextPow2(2 * size - 1);
    this.m = m;
    const half = m >> 1;
    this.cos = new Float64Array(half);
    this.sin = new Float64Array(half);
    for (let k = 0; k < half; k++) {
      const a = (-2 * Math.PI * k) / m;
      this.cos[k] = Math.cos(a);
      this.sin[k] = Math.sin(a);
    }
    const bits = Math.log2(m);
    const pairs: number[] = [];
    for (let i = 0; i < m; i++) {
      let r = 0;
      for (let b = 0, x = i; b < bits; b++, x >>= 1) r = (r << 1) | (x & 1);
      if (i < r) pairs.push(i, r);
    }
    this.swaps = Uint32Array.from(pairs);
    this.bluestein = pow2 ? undefined : this.bluesteinTables();
  }

  /** Forward transform, X[k] = sum_n x[n] e^{-2 pi i k n / N}, in place. */
  forward(re: Float64Array, im: Float64Array): void {
    if (re.length !== this.size || im.length !== this.size) throw new RangeError(`FFT of size ${this.size} got arrays of ${re.length} and ${im.length} values`);
    if (this.bluestein) this.chirpZ(re, im, this.bluestein);
    else this.radix2(re, im);
  }

  /**
   * Inverse transform without the 1/N factor, x[n] = sum_k X[k] e^{+2 pi i k n / N}, in place
   * (the forward transform with real and imaginary parts swapped).
   */
  inverseUnscaled(re: Float64Array, im: Float64Array): void {
    this.forward(im, re);
  }

  /** |X_k|^2 for k = 0..floor(N/2) of a real frame of N values; `out` needs floor(N/2) + 1 values. */
  powerSpectrum(frame: ArrayLike<number>, out: Float64Array): void {
    const n = this.size;
    const bins = (n >> 1) + 1;
    if (frame.length < n || out.length < bins) throw new RangeError(`power spectrum of size ${n} needs ${n} samples and ${bins} outputs, got ${frame.length} and ${out.length}`);
    const plan = (this.real ??= this.realPlan());
    const { half, re, im } = plan;
    if (!half) {
      for (let i = 0; i < n; i++) {
        re[i] = frame[i]!;
        im[i] = 0;
      }
      this.forward(re, im);
      for (let k = 0; k < bins; k++) out[k] = re[k]! * re[k]! + im[k]! * im[k]!;
      return;
    }
    const h = n >> 1;
    for (let j = 0; j < h; j++) {
      re[j] = frame[2 * j]!;
      im[j] = frame[2 * j + 1]!;
    }
    half.forward(re, im);
    const { twRe, twIm } = plan;
    for (let k = 0; k <= h; k++) {
      const a = k === h ? 0 : k;
      const b = k === 0 ? 0 : h - k;
      const ar = re[a]!, ai = im[a]!;
      const br = re[b]!, bi = im[b]!;
      // Spectrum of the even samples E = (Z_k + conj Z_{h-k}) / 2, of the odd ones O = (Z_k - conj Z_{h-k}) / 2i.
      const er = ar + br, ei = ai - bi;
      const or = ai + bi, oi = br - ar;
      const wr = twRe[k]!, wi = twIm[k]!;
      const xr = er + wr * or - wi * oi;
      const xi = ei + wr * oi + wi * or;
      out[k] = 0.25 * (xr * xr + xi * xi);
    }
  }

  private realPlan(): RealPlan {
    const n = this.size;
    if (n % 2 !== 0 || n < 4) return { half: undefined, re: new Float64Array(n), im: new Float64Array(n), twRe: new Float64Array(0), twIm: new Float64Array(0) };
    const h = n >> 1;
    const twRe = new Float64Array(h + 1);
    const twIm = new Float64Array(h + 1);
    for (let k = 0; k <= h; k++) {
      twRe[k] = Math.cos((2 * Math.PI * k) / n);
      twIm[k] = -Math.sin((2 * Math.PI * k) / n);
    }
    return { half: new Fft(h), re: new Float64Array(h), im: new Float64Array(h), twRe, twIm };
  }

  private bluesteinTables(): Bluestein {
    const n = this.size;
    const m = this.m;
    const chirpRe = new Float64Array(n);
    const chirpIm = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      // k^2 mod 2n keeps the angle exact for large k.
      const a = (Math.PI * ((k * k) % (2 * n))) / n;
      chirpRe[k] = Math.cos(a);
      chirpIm[k] = -Math.sin(a);
    }
    // The convolution kernel conj(chirp) laid out circularly, transformed once; 1/m of the inverse folded in.
    const kernelRe = new Float64Array(m);
    const kernelIm = new Float64Array(m);
    for (let k = 0; k < n; k++) {
      kernelRe[k] = chirpRe[k]!;
      kernelIm[k] = -chirpIm[k]!;
      if (k > 0) {
        kernelRe[m - k] = chirpRe[k]!;
        kernelIm[m - k] = -chirpIm[k]!;
      }
    }
    this.radix2(kernelRe, kernelIm);
    for (let k = 0; k < m; k++) {
      kernelRe[k] = kernelRe[k]! / m;
      kernelIm[k] = kernelIm[k]! / m;
    }
    return { chirpRe, chirpIm, kernelRe, kernelIm, workRe: new Float64Array(m), workIm: new Float64Array(m) };
  }

  /** X_k = chirp_k * sum_j (x_j chirp_j) conj(chirp_{k-j}): a circular convolution of length m. */
  private chirpZ(re: Float64Array, im: Float64Array, t: Bluestein): void {
    const n = this.size;
    const m = this.m;
    const { chirpRe: cr, chirpIm: ci, kernelRe: kr, kernelIm: ki, workRe: ar, workIm: ai } = t;
    multiply(re, im, cr, ci, ar, ai, n);
    ar.fill(0, n);
    ai.fill(0, n);
    this.radix2(ar, ai);
    multiply(ar, ai, kr, ki, ar, ai, m);
    // Inverse (unscaled: the kernel carries 1/m) as the forward transform of the swapped parts.
    this.radix2(ai, ar);
    multiply(ar, ai, cr, ci, re, im, n);
  }

  /** Forward radix-2 transform of the first m values of `re` and `im`, in place. */
  private radix2(re: Float64Array, im: Float64Array): void {
    const n = this.m;
    if (n < 4) {
      if (n === 2) {
        const ar = re[0]!, ai = im[0]!;
        const br = re[1]!, bi = im[1]!;
        re[0] = ar + br;
        im[0] = ai + bi;
        re[1] = ar - br;
        im[1] = ai - bi;
      }
      return;
    }
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

/** Smallest power of two >= x (1 for x <= 1). */
export function nextPow2(x: number): number {
  let p = 1;
  while (p < x) p <<= 1;
  return p;
}

/**
 * Hann window of `size` values. Periodic (the default; torch.hann_window, scipy
 * get_window('hann', fftbins=True)): 0.5 - 0.5 cos(2 pi n / N); symmetric: the same over N - 1.
 */
export function hannWindow(size: number, periodic = true): Float64Array {
  const w = new Float64Array(size);
  const period = periodic ? size : size - 1;
  if (period === 0) {
    w.fill(1);
    return w;
  }
  for (let i = 0; i < size; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / period);
  return w;
}

/** out_k = a_k * b_k (complex) for k < n; `out` may be `a`. */
function multiply(ar: Float64Array, ai: Float64Array, br: Float64Array, bi: Float64Array, outR: Float64Array, outI: Float64Array, n: number): void {
  for (let k = 0; k < n; k++) {
    const xr = ar[k]!, xi = ai[k]!;
    const wr = br[k]!, wi = bi[k]!;
    outR[k] = xr * wr - xi * wi;
    outI[k] = xr * wi + xi * wr;
  }
}
