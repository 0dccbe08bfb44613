/**
 * Mel filter banks: the Slaney-scale, Slaney-normalized bank Whisper uses (librosa's default) and
 * Kaldi's bank (1127 ln(1 + f/700), triangles in the mel domain) that fbank front-ends use.
 * Banks are dense row-major [nMels][nBins] matrices.
 */

export interface MelBank {
  nMels: number;
  nBins: number;
  weights: Float32Array;
  /** First and last non-zero bin of each filter (inclusive), to skip zeros. */
  ranges: Int32Array;
}

const F_SP = 200 / 3;
const MIN_LOG_HZ = 1000;
const MIN_LOG_MEL = MIN_LOG_HZ / F_SP;
const LOGSTEP = Math.log(6.4) / 27;

export function hzToMelSlaney(f: number): number {
  return f >= MIN_LOG_HZ ? MIN_LOG_MEL + Math.log(f / MIN_LOG_HZ) / LOGSTEP : f / F_SP;
}

export function melToHzSlaney(m: number): number {
  return m >= MIN_LOG_MEL ? MIN_LOG_HZ * Math.exp(LOGSTEP * (m - MIN_LOG_MEL)) : F_SP * m;
}

export function hzToMelKaldi(f: number): number {
  return 1127 * Math.log(1 + f / 700);
}

export function melToHzKaldi(m: number): number {
  return 700 * (Math.exp(m / 1127) - 1);
}

function withRanges(nMels: number, nBins: number, weights: Float32Array): MelBank {
  const ranges = new Int32Array(nMels * 2);
  for (let i = 0; i < nMels; i++) {
    let lo = -1;
    let hi = -2;
    for (let k = 0; k < nBins; k++) {
      if (weights[i * nBins + k] !== 0) {
        if (lo < 0) lo = k;
        hi = k;
      }
    }
    ranges[2 * i] = lo < 0 ? 0 : lo;
    ranges[2 * i + 1] = hi;
  }
  return { nMels, nBins, weights, ranges };
}

/** librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False, norm='slaney'): what Whisper ships as mel_filters.npz. */
export function slaneyMelBank(sampleRate: number, nFft: number, nMels: number, fmin = 0, fmax = sampleRate / 2): MelBank {
  const nBins = (nFft >> 1) + 1;
  const fftFreqs = new Float64Array(nBins);
  for (let k = 0; k < nBins; k++) fftFreqs[k] = (k * sampleRate) / nFft;
  const melMin = hzToMelSlaney(fmin);
  const melMax = hzToMelSlaney(fmax);
  const melF = new Float64Array(nMels + 2);
  for (let i = 0; i < nMels + 2; i++) melF[i] = melToHzSlaney(melMin + ((melMax - melMin) * i) / (nMels + 1));
  const w = new Float32Array(nMels * nBins);
  for (let i = 0; i < nMels; i++) {
    const fdiffLo = melF[i + 1]! - melF[i]!;
    const fdiffHi = melF[i + 2]! - melF[i + 1]!;
    const enorm = 2 / (melF[i + 2]! - melF[i]!);
    for (let k = 0; k < nBins; k++) {
      const lower = (fftFreqs[k]! - melF[i]!) / fdiffLo;
      const upper = (melF[i + 2]! - fftFreqs[k]!) / fdiffHi;
      const v = Math.max(0, Math.min(lower, upper));
      w[i * nBins + k] = v * enorm;
    }
  }
  return withRanges(nMels, nBins, w);
}

/** Kaldi's MelBanks: bins of a `paddedWindow`-point FFT (the Nyquist bin gets no weight). */
export function kaldiMelBank(sampleRate: number, paddedWindow: number, nMels: number, lowFreq = 20, highFreq = 0): MelBank {
  const nyquist = sampleRate / 2;
  const high = highFreq <= 0 ? nyquist + highFreq : highFreq;
  if (!(lowFreq >= 0 && high > lowFreq && high <= nyquist)) throw new RangeError(`invalid mel range [${lowFreq}, ${high}] for ${sampleRate} Hz`);
  const nBins = (paddedWindow >> 1) + 1;
  const numFftBins = paddedWindow >> 1;
  const binWidth = sampleRate / paddedWindow;
  const melLow = hzToMelKaldi(lowFreq);
  const melHigh = hzToMelKaldi(high);
  const delta = (melHigh - melLow) / (nMels + 1);
  const w = new Float32Array(nMels * nBins);
  for (let i = 0; i < nMels; i++) {
    const left = melLow + i * delta;
    const center = left + delta;
    const right = center + delta;
    for (let k = 0; k < numFftBins; k++) {
      const mel = hzToMelKaldi(binWidth * k);
      if (mel > left && mel < right) w[i * nBins + k] = mel <= center ? (mel - left) / (center - left) : (right - mel) / (right - center);
    }
  }
  return withRanges(nMels, nBins, w);
}

/** out[i] = sum_k bank[i][k] * power[k]. */
export function applyMelBank(bank: MelBank, power: ArrayLike<number>, out: Float64Array): void {
  const { nBins, weights, ranges } = bank;
  for (let i = 0; i < bank.nMels; i++) {
    let s = 0;
    const row = i * nBins;
    for (let k = ranges[2 * i]!, hi = ranges[2 * i + 1]!; k <= hi; k++) s += weights[row + k]! * power[k]!;
    out[i] = s;
  }
}
