/**
 * Fundamental frequency with YIN (de Cheveigné & Kawahara 2002): difference function, cumulative
 * mean normalisation, absolute threshold, parabolic interpolation. Frames below an energy gate
 * (relative to the loudest frame) are unvoiced; so are frames with no dip under the threshold.
 */

export interface PitchOptions {
  /** Lowest F0 searched, Hz (default 60). */
  minHz?: number;
  /** Highest F0 searched, Hz (default 450). */
  maxHz?: number;
  /** Hop between frames in seconds (default 0.01). */
  hopSeconds?: number;
  /** YIN absolute threshold (default 0.15). */
  threshold?: number;
  /** Frames quieter than this many dB below the loudest frame are unvoiced (default 35). */
  gateDb?: number;
}

export interface PitchTrack {
  hopSeconds: number;
  /** F0 per frame in Hz, 0 where unvoiced. */
  f0: Float32Array;
  /** Median F0 of the voiced frames (0 when none). */
  medianHz: number;
  voicedFrames: number;
}

/** YIN over mono samples, decimated first to 8..16 kHz (pitch and its first harmonics live far below 4 kHz). */
export function trackPitch(samples: Float32Array, sampleRate: number, opts: PitchOptions = {}): PitchTrack {
  const minHz = opts.minHz ?? 60;
  const maxHz = opts.maxHz ?? 450;
  const hopSeconds = opts.hopSeconds ?? 0.01;
  const threshold = opts.threshold ?? 0.15;
  const gateDb = opts.gateDb ?? 35;
  const factor = Math.max(1, Math.floor(sampleRate / 8000));
  const x = factor > 1 ? decimate(samples, factor) : samples;
  const sr = sampleRate / factor;
  const tauMin = Math.max(2, Math.floor(sr / maxHz));
  const tauMax = Math.ceil(sr / minHz);
  const win = tauMax; // integration window of YIN: one longest period
  const hop = Math.max(1, Math.round(hopSeconds * sr));
  const frames = x.length >= win + tauMax ? Math.floor((x.length - win - tauMax) / hop) + 1 : 0;
  const f0 = new Float32Array(frames);
  const energy = new Float32Array(frames);
  let maxEnergy = 0;
  for (let f = 0; f < frames; f++) {
    let e = 0;
    const s = f * hop;
    for (let i = 0; i < win; i++) e += x[s + i]! * x[s + i]!;
    energy[f] = e / win;
    if (energy[f]! > maxEnergy) maxEnergy = energy[f]!;
  }
  const gate = maxEnergy * Math.pow(10, -gateDb / 10);
  const d = new Float64Array(tauMax + 1);
  for (let f = 0; f < frames; f++) {
    if (energy[f]! <= gate || energy[f]! < 1e-10) continue;
    const s = f * hop;
    for (let tau = 1; tau <= tauMax; tau++) {
      let sum = 0;
      for (let i = 0; i < win; i++) {
        const diff = x[s + i]! - x[s + i + tau]!;
        sum += diff * diff;
      }
      d[tau] = sum;
    }
    // cumulative mean normalised difference
    let running = 0;
    let best = -1;
    const cmnd = (tau: number): number => d[tau]!;
    for (let tau = 1; tau <= tauMax; tau++) {
      running += d[tau]!;
      d[tau] = running > 0 ? (d[tau]! * tau) / running : 1;
    }
    for (let tau = tauMin; tau < tauMax; tau++) {
      if (cmnd(tau) < threshold) {
        while (tau + 1 < tauMax && cmnd(tau + 1) < cmnd(tau)) tau++;
        best = tau;
        break;
      }
    }
    if (best < 0) continue;
    const a = cmnd(best - 1);
    const b = cmnd(best);
    const c = cmnd(best + 1);
    const denom = a - 2 * b + c;
    const shift = denom !== 0 ? (0.5 * (a - c)) / denom : 0;
    const period = best + (Math.abs(shift) < 1 ? shift : 0);
    f0[f] = sr / period;
  }
  const voiced = Array.from(f0).filter((v) => v > 0);
  return { hopSeconds: hop / sr, f0, medianHz: median(voiced), voicedFrames: voiced.length };
}

/** Median F0 in Hz of mono audio (0 when nothing is voiced). */
export function medianPitch(samples: Float32Array, sampleRate: number, opts: PitchOptions = {}): number {
  return trackPitch(samples, sampleRate, opts).medianHz;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Semitones from `fromHz` to `toHz`. */
export function semitones(fromHz: number, toHz: number): number {
  return 12 * Math.log2(toHz / fromHz);
}

/** Average-and-drop decimation (a box filter is enough for pitch below 1 kHz). */
function decimate(x: Float32Array, factor: number): Float32Array {
  const n = Math.floor(x.length / factor);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < factor; k++) s += x[i * factor + k]!;
    out[i] = s / factor;
  }
  return out;
}
