/**
 * FFT of any length: iterative radix-2 for powers of two, Bluestein's chirp-z (over a radix-2
 * transform) for other lengths such as Whisper's 400-point frames. Tables are built once per
 * instance; one instance serves every frame of a stage.
 */
export class Fft {
  readonly n: number;
  private readonly pow2: boolean;
  private readonly m: number;
  private readonly rev: Uint32Array;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  // Bluestein tables (n not a power of two).
  private readonly chirpRe?: Float64Array;
  private readonly chirpIm?: Float64Array;
  private readonly bRe?: Float64Array;
  private readonly bIm?: Float64Array;
  private readonly workRe: Float64Array;
  private readonly workIm: Float64Array;

  constructor(n: number) {
    if (!Number.isInteger(n) || n < 2) throw new RangeError(`FFT length must be an integer >= 2, got ${n}`);
    this.n = n;
    this.pow2 = (n & (n - 1)) === 0;
    this.m = this.pow2 ? n : nextPow2(2 * n - 1);
    const m = this.m;
    this.rev = new Uint32Array(m);
    const bits = Math.log2(m);
    for (let i = 0; i < m; i++) {
      let r = 0;
      for (let b = 0, x = i; b < bits; b++, x >>= 1) r = (r << 1) | (x & 1);
      this.rev[i] = r;
    }
    this.cos = new Float64Array(m / 2);
    this.sin = new Float64Array(m / 2);
    for (let i = 0; i < m / 2; i++) {
      this.cos[i] = Math.cos((2 * Math.PI * i) / m);
      this.sin[i] = -Math.sin((2 * Math.PI * i) / m);
    }
    this.workRe = new Float64Array(m);
    this.workIm = new Float64Array(m);
    if (!this.pow2) {
      this.chirpRe = new Float64Array(n);
      this.chirpIm = new Float64Array(n);
      for (let k = 0; k < n; k++) {
        // k^2 mod 2n keeps the angle exact for large k.
        const a = (Math.PI * ((k * k) % (2 * n))) / n;
        this.chirpRe[k] = Math.cos(a);
        this.chirpIm[k] = -Math.sin(a);
      }
      this.bRe = new Float64Array(m);
      this.bIm = new Float64Array(m);
      for (let k = 0; k < n; k++) {
        this.bRe[k] = this.chirpRe[k]!;
        this.bIm[k] = -this.chirpIm[k]!;
        if (k > 0) {
          this.bRe[m - k] = this.chirpRe[k]!;
          this.bIm[m - k] = -this.chirpIm[k]!;
        }
      }
      this.radix2(this.bRe, this.bIm, false);
    }
  }

  /** In-place forward DFT of complex data of length n. */
  transform(re: Float64Array, im: Float64Array): void {
    if (re.length !== this.n || im.length !== this.n) throw new RangeError(`FFT expects ${this.n} values`);
    if (this.pow2) {
      this.radix2(re, im, false);
      return;
    }
    const { n, m, workRe: ar, workIm: ai } = this;
    const cr = this.chirpRe!;
    const ci = this.chirpIm!;
    ar.fill(0);
    ai.fill(0);
    for (let k = 0; k < n; k++) {
      ar[k] = re[k]! * cr[k]! - im[k]! * ci[k]!;
      ai[k] = re[k]! * ci[k]! + im[k]! * cr[k]!;
    }
    this.radix2(ar, ai, false);
    const br = this.bRe!;
    const bi = this.bIm!;
    for (let k = 0; k < m; k++) {
      const r = ar[k]! * br[k]! - ai[k]! * bi[k]!;
      ai[k] = ar[k]! * bi[k]! + ai[k]! * br[k]!;
      ar[k] = r;
    }
    this.radix2(ar, ai, true);
    for (let k = 0; k < n; k++) {
      const r = ar[k]! / m;
      const i = ai[k]! / m;
      re[k] = r * cr[k]! - i * ci[k]!;
      im[k] = r * ci[k]! + i * cr[k]!;
    }
  }

  /** |X_k|^2 for k = 0..n/2 of a real frame of length n. `out` needs floor(n/2)+1 values. */
  powerSpectrum(frame: ArrayLike<number>, out: Float64Array, scratchRe = new Float64Array(this.n), scratchIm = new Float64Array(this.n)): void {
    for (let i = 0; i < this.n; i++) {
      scratchRe[i] = frame[i]!;
      scratchIm[i] = 0;
    }
    this.transform(scratchRe, scratchIm);
    const bins = (this.n >> 1) + 1;
    for (let k = 0; k < bins; k++) out[k] = scratchRe[k]! * scratchRe[k]! + scratchIm[k]! * scratchIm[k]!;
  }

  private radix2(re: Float64Array, im: Float64Array, inverse: boolean): void {
    const m = re.length;
    const rev = this.rev;
    for (let i = 0; i < m; i++) {
      const j = rev[i]!;
      if (j > i) {
        let t = re[i]!;
        re[i] = re[j]!;
        re[j] = t;
        t = im[i]!;
        im[i] = im[j]!;
        im[j] = t;
      }
    }
    const sign = inverse ? -1 : 1;
    for (let size = 2; size <= m; size <<= 1) {
      const half = size >> 1;
      const step = m / size;
      for (let start = 0; start < m; start += size) {
        for (let k = 0; k < half; k++) {
          const wr = this.cos[k * step]!;
          const wi = sign * this.sin[k * step]!;
          const a = start + k;
          const b = a + half;
          const xr = re[b]! * wr - im[b]! * wi;
          const xi = re[b]! * wi + im[b]! * wr;
          re[b] = re[a]! - xr;
          im[b] = im[a]! - xi;
          re[a] = re[a]! + xr;
          im[a] = im[a]! + xi;
        }
      }
    }
  }
}

export function nextPow2(x: number): number {
  let p = 1;
  while (p < x) p <<= 1;
  return p;
}
