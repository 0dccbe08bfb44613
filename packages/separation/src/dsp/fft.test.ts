import { describe, expect, it } from 'vitest';
import { Fft, hannWindow } from './fft.js';

function naiveDft(re: Float64Array, im: Float64Array, sign: number): [Float64Array, Float64Array] {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sr = 0;
    let si = 0;
    for (let t = 0; t < n; t++) {
      const a = (sign * 2 * Math.PI * k * t) / n;
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
  for (const n of [4, 8, 16, 64, 512, 1024]) {
    it(`matches a direct DFT at size ${n}, forward and inverse`, () => {
      const re = random(n, n);
      const im = random(n, n + 1);
      const [er, ei] = naiveDft(re, im, -1);
      const fr = re.slice();
      const fi = im.slice();
      new Fft(n).forward(fr, fi);
      for (let k = 0; k < n; k++) {
        expect(fr[k]).toBeCloseTo(er[k]!, 9);
        expect(fi[k]).toBeCloseTo(ei[k]!, 9);
      }
      const [ir, ii] = naiveDft(re, im, 1);
      const br = re.slice();
      const bi = im.slice();
      new Fft(n).inverseUnscaled(br, bi);
      for (let k = 0; k < n; k++) {
        expect(br[k]).toBeCloseTo(ir[k]!, 9);
        expect(bi[k]).toBeCloseTo(ii[k]!, 9);
      }
    });
  }

  it('round-trips forward then inverse / N', () => {
    const n = 4096;
    const re = random(n, 7);
    const im = random(n, 8);
    const r = re.slice();
    const i = im.slice();
    const fft = new Fft(n);
    fft.forward(r, i);
    fft.inverseUnscaled(r, i);
    for (let k = 0; k < n; k++) {
      expect(r[k]! / n).toBeCloseTo(re[k]!, 12);
      expect(i[k]! / n).toBeCloseTo(im[k]!, 12);
    }
  });

  it('rejects sizes that are not powers of two', () => {
    expect(() => new Fft(12)).toThrow(RangeError);
    expect(() => new Fft(2)).toThrow(RangeError);
  });

  it('hann window is periodic (torch.hann_window)', () => {
    const w = hannWindow(8);
    expect(w[0]).toBe(0);
    expect(w[4]).toBeCloseTo(1, 15);
    expect(w[2]).toBeCloseTo(0.5, 15);
    expect(w[6]).toBeCloseTo(0.5, 15);
  });
});
