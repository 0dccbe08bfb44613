import { describe, expect, it } from 'vitest';
import { DemucsSpectrogram } from './demucs-spectrogram.js';

/**
 * Direct transcription of demucs' _spec / _ispec with torch.stft / torch.istft semantics
 * (periodic Hann, normalized, center=True with reflect padding), in float64 with a naive DFT.
 */
function reflect(x: Float64Array, left: number, right: number): Float64Array {
  const n = x.length;
  const out = new Float64Array(n + left + right);
  for (let i = 0; i < out.length; i++) {
    let j = i - left;
    if (j < 0) j = -j;
    if (j >= n) j = 2 * (n - 1) - j;
    out[i] = x[j]!;
  }
  return out;
}

function hann(n: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n));
}

function refSpec(x: Float64Array, nfft: number, hop: number): { re: Float64Array[]; im: Float64Array[] } {
  const le = Math.ceil(x.length / hop);
  const pad = (hop / 2) * 3;
  const p1 = reflect(x, pad, pad + le * hop - x.length);
  const p2 = reflect(p1, nfft / 2, nfft / 2);
  const frames = Math.floor((p2.length - nfft) / hop) + 1;
  expect(frames).toBe(le + 4);
  const w = hann(nfft);
  const re: Float64Array[] = [];
  const im: Float64Array[] = [];
  for (let t = 2; t < 2 + le; t++) {
    const fr = new Float64Array(nfft / 2);
    const fi = new Float64Array(nfft / 2);
    for (let k = 0; k < nfft / 2; k++) {
      let sr = 0;
      let si = 0;
      for (let n = 0; n < nfft; n++) {
        const v = p2[t * hop + n]! * w[n]!;
        const a = (-2 * Math.PI * k * n) / nfft;
        sr += v * Math.cos(a);
        si += v * Math.sin(a);
      }
      fr[k] = sr / Math.sqrt(nfft);
      fi[k] = si / Math.sqrt(nfft);
    }
    re.push(fr);
    im.push(fi);
  }
  return { re, im };
}

/** _ispec: pad Nyquist bin and 2 frames each side, torch.istft(length=le), crop [pad, pad+length). */
function refIspec(re: Float64Array[], im: Float64Array[], nfft: number, hop: number, length: number): Float64Array {
  const zeros = new Float64Array(nfft / 2 + 1);
  const frames = [zeros, zeros, ...re.map((r, t) => ({ r, i: im[t]! })), zeros, zeros];
  const total = frames.length;
  const w = hann(nfft);
  const full = new Float64Array(nfft + (total - 1) * hop);
  const env = new Float64Array(full.length);
  frames.forEach((f, t) => {
    const fr = f instanceof Float64Array ? f : f.r;
    const fi = f instanceof Float64Array ? f : f.i;
    for (let n = 0; n < nfft; n++) {
      // irfft of bins 0..nfft/2 (Nyquist 0), imaginary parts of DC ignored, normalized by 1/sqrt(N)
      let s = f instanceof Float64Array ? 0 : fr[0]!;
      if (!(f instanceof Float64Array)) {
        for (let k = 1; k < nfft / 2; k++) {
          const a = (2 * Math.PI * k * n) / nfft;
          s += 2 * (fr[k]! * Math.cos(a) - fi[k]! * Math.sin(a));
        }
      }
      full[t * hop + n] += (s / Math.sqrt(nfft)) * w[n]!;
      env[t * hop + n] += w[n]! * w[n]!;
    }
  });
  const le = hop * Math.ceil(length / hop) + 2 * ((hop / 2) * 3);
  const centred = full.subarray(nfft / 2, nfft / 2 + le);
  const envC = env.subarray(nfft / 2, nfft / 2 + le);
  const pad = (hop / 2) * 3;
  return Float64Array.from({ length }, (_, j) => centred[pad + j]! / envC[pad + j]!);
}

function signal(n: number, f: number, seed: number): Float32Array {
  let s = seed;
  return Float32Array.from({ length: n }, (_, i) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.sin(i * f) * 0.6 + (s / 2147483648 - 0.5) * 0.3;
  });
}

describe('DemucsSpectrogram', () => {
  const nfft = 64;
  const hop = 16;
  const length = 300;

  it('forward matches torch-style _spec of both channels (reflect padding, frames 2..2+le, no Nyquist)', () => {
    const x0 = signal(length, 0.07, 1);
    const x1 = signal(length, 0.31, 2);
    const spec = new DemucsSpectrogram(length, nfft, hop);
    expect(spec.frames).toBe(Math.ceil(length / hop));
    expect(spec.bins).toBe(nfft / 2);
    const out = new Float32Array(spec.specSize);
    spec.forward(x0, x1, out);
    const plane = spec.bins * spec.frames;
    const refs = [refSpec(Float64Array.from(x0), nfft, hop), refSpec(Float64Array.from(x1), nfft, hop)];
    for (let c = 0; c < 2; c++) {
      for (let t = 0; t < spec.frames; t++) {
        for (let k = 0; k < spec.bins; k++) {
          expect(out[2 * c * plane + k * spec.frames + t]).toBeCloseTo(refs[c]!.re[t]![k]!, 4);
          expect(out[(2 * c + 1) * plane + k * spec.frames + t]).toBeCloseTo(refs[c]!.im[t]![k]!, 4);
        }
      }
    }
  });

  it('inverseAdd matches torch-style _ispec of the summed sources, and adds to its output', () => {
    const spec = new DemucsSpectrogram(length, nfft, hop);
    const { bins, frames } = spec;
    const plane = bins * frames;
    const sources = 3;
    const data = new Float32Array(sources * 4 * plane);
    let s = 5;
    for (let i = 0; i < data.length; i++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      data[i] = s / 2147483648 - 0.5;
    }
    const picked = [0, 2];
    const out0 = new Float32Array(length).fill(1);
    const out1 = new Float32Array(length).fill(-1);
    spec.inverseAdd(data, picked, out0, out1);
    for (let c = 0; c < 2; c++) {
      const re: Float64Array[] = [];
      const im: Float64Array[] = [];
      for (let t = 0; t < frames; t++) {
        const fr = new Float64Array(bins + 1);
        const fi = new Float64Array(bins + 1);
        for (let k = 0; k < bins; k++) {
          for (const src of picked) {
            fr[k] += data[src * 4 * plane + 2 * c * plane + k * frames + t]!;
            fi[k] += data[src * 4 * plane + (2 * c + 1) * plane + k * frames + t]!;
          }
        }
        re.push(fr);
        im.push(fi);
      }
      const ref = refIspec(re, im, nfft, hop, length);
      const out = c === 0 ? out0 : out1;
      const base = c === 0 ? 1 : -1;
      for (let j = 0; j < length; j++) expect(out[j]! - base).toBeCloseTo(ref[j]!, 4);
    }
  });

  it('inverse of forward restores the interior of a signal without Nyquist content', () => {
    const n = 4096;
    const spec = new DemucsSpectrogram(n, 256, 64);
    const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.05) + 0.5 * Math.cos(i * 0.9));
    const z = new Float32Array(spec.specSize);
    spec.forward(x, x, z);
    const y0 = new Float32Array(n);
    const y1 = new Float32Array(n);
    spec.inverseAdd(z, [0], y0, y1);
    // The first and last frames are dropped by _spec, so only the interior is exact.
    for (let j = 256; j < n - 256; j++) {
      expect(y0[j]).toBeCloseTo(x[j]!, 4);
      expect(y1[j]).toBeCloseTo(x[j]!, 4);
    }
  });

  it('rejects a hop that is not n_fft / 4', () => {
    expect(() => new DemucsSpectrogram(1000, 64, 32)).toThrow(RangeError);
  });
});
