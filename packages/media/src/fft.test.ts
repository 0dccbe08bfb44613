import { describe, expect, it } from 'vitest';
import { Fft, hannWindow, nextPow2 } from './fft.js';

/** Direct O(n^2) DFT with the sign of the exponent given (-1 forward, +1 unscaled inverse). */
function naiveDft(re: Float64Array, im: Float64Array, sign: number): [Float64Array, Float64Array] {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sr = 0;
    let si = 0;
    for (let t = 0; t < n; t++) {
      // (k * t) mod n keeps the angle small and exact for the larger sizes.
      const a = (sign * 2 * Math.PI * ((k * t) % n)) / n;
      sr += re[t]! * Math.cos(a) - im[t]! * Math.sin(a);
      si += re[t]! * Math.sin(a) + im[t]! * Math.cos(a);
    }
    outRe[k] = sr;
    outIm[k] = si;
  }
  return [outRe, outIm];
}

function random(n: number, seed: number): Float64Array {
  let s = seed;
  return Float64Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648 - 0.5;
  });
}

describe('Fft', () => {
  for (const n of [1, 2, 3, 4, 5, 8, 12, 16, 64, 100, 400, 512, 800, 1024]) {
    it(`matches a direct DFT at size ${n}, forward and inverse`, () => {
      const re = random(n, n);
      const im = random(n, n + 1);
      const fft = new Fft(n);
      expect(fft.size).toBe(n);
      const [er, ei] = naiveDft(re, im, -1);
      const fr = re.slice();
      const fi = im.slice();
      fft.forward(fr, fi);
      for (let k = 0; k < n; k++) {
        expect(fr[k]).toBeCloseTo(er[k]!, 9);
        expect(fi[k]).toBeCloseTo(ei[k]!, 9);
      }
      const [ir, ii] = naiveDft(re, im, 1);
      const br = re.slice();
      const bi = im.slice();
      fft.inverseUnscaled(br, bi);
      for (let k = 0; k < n; k++) {
        expect(br[k]).toBeCloseTo(ir[k]!, 9);
        expect(bi[k]).toBeCloseTo(ii[k]!, 9);
      }
    });
  }

  for (const n of [4096, 400, 1000]) {
    it(`round-trips forward then inverse / N at size ${n}, and again with the same instance`, () => {
      const fft = new Fft(n);
      for (const seed of [7, 9]) {
        const re = random(n, seed);
        const im = random(n, seed + 1);
        const r = re.slice();
        const i = im.slice();
        fft.forward(r, i);
        fft.inverseUnscaled(r, i);
        for (let k = 0; k < n; k++) {
          expect(r[k]! / n).toBeCloseTo(re[k]!, 12);
          expect(i[k]! / n).toBeCloseTo(im[k]!, 12);
        }
      }
    });
  }

  for (const n of [2, 3, 8, 15, 400, 512, 800]) {
    it(`power spectrum of a real frame of ${n} values is |X_k|^2 for k = 0..N/2`, () => {
      const fft = new Fft(n);
      const out = new Float64Array((n >> 1) + 1);
      for (const seed of [3, 4]) {
        const x = random(n, seed);
        const [er, ei] = naiveDft(x, new Float64Array(n), -1);
        fft.powerSpectrum(Float32Array.from(x), out);
        const f32 = Float32Array.from(x);
        const [fr, fi] = naiveDft(Float64Array.from(f32), new Float64Array(n), -1);
        for (let k = 0; k < out.length; k++) {
          expect(out[k]).toBeCloseTo(fr[k]! * fr[k]! + fi[k]! * fi[k]!, 8);
        }
        fft.powerSpectrum(x, out);
        for (let k = 0; k < out.length; k++) expect(out[k]).toBeCloseTo(er[k]! * er[k]! + ei[k]! * ei[k]!, 8);
      }
    });
  }

  it('puts a pure tone in its bin', () => {
    const n = 400;
    const x = Float64Array.from({ length: n }, (_, i) => Math.cos((2 * Math.PI * 25 * i) / n));
    const out = new Float64Array(201);
    new Fft(n).powerSpectrum(x, out);
    expect(out[25]).toBeCloseTo((n / 2) ** 2, 6);
    for (let k = 0; k < out.length; k++) if (k !== 25) expect(out[k]).toBeLessThan(1e-12);
  });

  it('rejects bad sizes and arrays of the wrong length', () => {
    expect(() => new Fft(0)).toThrow(RangeError);
    expect(() => new Fft(2.5)).toThrow(RangeError);
    const fft = new Fft(8);
    expect(() => fft.forward(new Float64Array(8), new Float64Array(4))).toThrow(RangeError);
    expect(() => fft.powerSpectrum(new Float64Array(4), new Float64Array(5))).toThrow(RangeError);
  });
});

describe('nextPow2', () => {
  it('rounds up to a power of two', () => {
    expect([1, 2, 3, 400, 512, 513, 799].map(nextPow2)).toEqual([1, 2, 4, 512, 512, 1024, 1024]);
  });
});

describe('hannWindow', () => {
  it('is periodic by default (torch.hann_window)', () => {
    const w = hannWindow(8);
    expect(w).toHaveLength(8);
    expect(w[0]).toBe(0);
    expect(w[4]).toBeCloseTo(1, 15);
    expect(w[2]).toBeCloseTo(0.5, 15);
    expect(w[6]).toBeCloseTo(0.5, 15);
  });

  it('is symmetric on request (both ends 0)', () => {
    const w = hannWindow(9, false);
    expect(w[0]).toBe(0);
    expect(w[8]).toBeCloseTo(0, 15);
    expect(w[4]).toBeCloseTo(1, 15);
    for (let i = 0; i < 9; i++) expect(w[i]).toBeCloseTo(w[8 - i]!, 15);
    expect(Array.from(hannWindow(1, false))).toEqual([1]);
  });
});
