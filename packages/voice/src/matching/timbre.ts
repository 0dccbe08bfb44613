/**
 * Offline timbre match: the long-term spectral envelope of a speaker (from the reference clip)
 * against the envelope of the synthetic voice chosen for them, and the smooth equalisation that
 * moves the voice's envelope toward the speaker's. No weights: an STFT, band averages and a
 * per-bin gain, so it runs anywhere, after any engine.
 *
 * Envelope: power per band (TIMBRE_BANDS: 18 log-spaced bands from 100 Hz to 7 kHz, the range
 * every recording here and every synthetic voice has), averaged over the active frames (within
 * 30 dB of the loudest), in dB, with the mean over bands removed (the shape only: the level is
 * the mix's business). Correction: speaker minus voice per band, smoothed over neighbouring bands,
 * clamped to +-maxDb, scaled by `strength`; applied by overlap-add filtering with the band gains
 * interpolated per FFT bin (log frequency), unity outside the bands.
 */
import { Fft, hannWindow } from '@dub/media';

/** Band centres, Hz. */
export const TIMBRE_BANDS: readonly number[] = Array.from({ length: 18 }, (_, i) => 100 * Math.pow(70, i / 17));

const FRAME = 1024;
const HOP = 512;

function bandEdges(): number[] {
  const c = TIMBRE_BANDS;
  const edges = [c[0]! / Math.sqrt(c[1]! / c[0]!)];
  for (let i = 0; i < c.length - 1; i++) edges.push(Math.sqrt(c[i]! * c[i + 1]!));
  edges.push(c.at(-1)! * Math.sqrt(c.at(-1)! / c.at(-2)!));
  return edges;
}

/** The long-term envelope of `x` (dB per band, mean removed); null when it has no active frames. */
export function spectralEnvelope(x: Float32Array, sampleRate: number): number[] | null {
  const n = FRAME;
  if (x.length < n) return null;
  const fft = new Fft(n);
  const win = hannWindow(n);
  const edges = bandEdges();
  const binHz = sampleRate / n;
  const bandOf = new Int16Array(n / 2 + 1).fill(-1);
  for (let k = 0; k <= n / 2; k++) {
    const f = k * binHz;
    for (let b = 0; b < TIMBRE_BANDS.length; b++) if (f >= edges[b]! && f < edges[b + 1]!) bandOf[k] = b;
  }
  const frames: { energy: number; bands: Float64Array }[] = [];
  const power = new Float64Array(n / 2 + 1);
  const frame = new Float64Array(n);
  for (let at = 0; at + n <= x.length; at += HOP) {
    for (let i = 0; i < n; i++) frame[i] = x[at + i]! * win[i]!;
    fft.powerSpectrum(frame, power);
    const bands = new Float64Array(TIMBRE_BANDS.length);
    const counts = new Float64Array(TIMBRE_BANDS.length);
    let energy = 0;
    for (let k = 0; k <= n / 2; k++) {
      energy += power[k]!;
      const b = bandOf[k]!;
      if (b >= 0) {
        bands[b] += power[k]!;
        counts[b]++;
      }
    }
    for (let b = 0; b < bands.length; b++) bands[b] = counts[b] ? bands[b]! / counts[b]! : 0;
    frames.push({ energy, bands });
  }
  const loudest = Math.max(...frames.map((f) => f.energy));
  if (!(loudest > 0)) return null;
  const active = frames.filter((f) => f.energy >= loudest * 1e-3);
  const mean = new Float64Array(TIMBRE_BANDS.length);
  for (const f of active) for (let b = 0; b < mean.length; b++) mean[b] += f.bands[b]! / active.length;
  if (mean.some((v) => !(v > 0))) return null;
  const db = Array.from(mean, (v) => 10 * Math.log10(v));
  const avg = db.reduce((a, b) => a + b, 0) / db.length;
  return db.map((v) => v - avg);
}

export interface TimbreOptions {
  /** Largest boost or cut, dB (default 9). */
  maxDb?: number;
  /** 0..1 of the difference applied (default 1). */
  strength?: number;
}

/** Band gains (dB) that move `voice`'s envelope toward `speaker`'s: smoothed over 3 bands, clamped. */
export function timbreCorrection(speaker: readonly number[], voice: readonly number[], o: TimbreOptions = {}): number[] {
  const maxDb = o.maxDb ?? 9;
  const strength = o.strength ?? 1;
  const diff = speaker.map((s, i) => s - voice[i]!);
  const smooth = diff.map((_, i) => {
    const w = [diff[i - 1], diff[i]!, diff[i + 1]].filter((v): v is number => v !== undefined);
    return w.reduce((a, b) => a + b, 0) / w.length;
  });
  const mean = smooth.reduce((a, b) => a + b, 0) / smooth.length;
  return smooth.map((d) => Math.round(Math.max(-maxDb, Math.min(maxDb, (d - mean) * strength)) * 100) / 100);
}

/** Filter `x` with the band gains (dB, one per TIMBRE_BANDS entry); same length, same rate. */
export function applyTimbre(x: Float32Array, sampleRate: number, gainsDb: readonly number[]): Float32Array {
  if (gainsDb.length !== TIMBRE_BANDS.length) throw new RangeError(`timbre needs ${TIMBRE_BANDS.length} band gains, got ${gainsDb.length}`);
  if (gainsDb.every((g) => g === 0) || x.length === 0) return x;
  const n = FRAME;
  const fft = new Fft(n);
  const win = hannWindow(n);
  // per-bin gain: linear interpolation of the band gains over log frequency, flat beyond the ends
  const logC = TIMBRE_BANDS.map((c) => Math.log(c));
  const gain = new Float64Array(n / 2 + 1);
  for (let k = 0; k <= n / 2; k++) {
    const lf = Math.log(Math.max(1, (k * sampleRate) / n));
    let g: number;
    if (lf <= logC[0]!) g = gainsDb[0]!;
    else if (lf >= logC.at(-1)!) g = gainsDb.at(-1)!;
    else {
      let b = 0;
      while (lf > logC[b + 1]!) b++;
      const t = (lf - logC[b]!) / (logC[b + 1]! - logC[b]!);
      g = gainsDb[b]! * (1 - t) + gainsDb[b + 1]! * t;
    }
    gain[k] = Math.pow(10, g / 20);
  }
  // overlap-add, hann analysis window at 50 % overlap (sums to one), padded by a frame each side
  const padded = new Float64Array(x.length + 2 * n);
  padded.set(x, n);
  const out = new Float64Array(padded.length);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let at = 0; at + n <= padded.length; at += HOP) {
    for (let i = 0; i < n; i++) {
      re[i] = padded[at + i]! * win[i]!;
      im[i] = 0;
    }
    fft.forward(re, im);
    for (let k = 0; k < n; k++) {
      const g = gain[k <= n / 2 ? k : n - k]!;
      re[k]! *= g;
      im[k]! *= g;
    }
    fft.inverseUnscaled(re, im);
    for (let i = 0; i < n; i++) out[at + i] += re[i]! / n;
  }
  const y = new Float32Array(x.length);
  for (let i = 0; i < y.length; i++) y[i] = out[n + i]!;
  return y;
}
