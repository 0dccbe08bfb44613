/**
 * Kaldi-compatible filter-bank features (`compute-fbank-feats`, torchaudio.compliance.kaldi.fbank)
 * as speaker-embedding models (WeSpeaker, CAM++) expect: 25 ms frames every 10 ms (snip_edges),
 * no dither, DC removal, pre-emphasis 0.97, a window (Kaldi's `window_type`: `povey`, Kaldi's
 * default and 3D-Speaker/CAM++'s, or `hamming`, WeSpeaker's; also `hanning`, `rectangular`),
 * 512-point power spectrum, a Kaldi mel bank (20 Hz to Nyquist), natural log floored at float
 * epsilon; optionally cepstral mean normalization over the utterance. Row-major [frames][nMels].
 */
import { Fft, hannWindow, nextPow2 } from '@dub/media';
import { applyMelBank, kaldiMelBank, type MelBank } from './mel.js';

/** Kaldi's analysis windows (feature-window.cc), all symmetric over the frame. */
export type FbankWindow = 'povey' | 'hamming' | 'hanning' | 'rectangular';
export const FBANK_WINDOWS: readonly FbankWindow[] = ['povey', 'hamming', 'hanning', 'rectangular'];

export interface FbankOptions {
  sampleRate?: number;
  /** Analysis window (default `povey`, Kaldi's default). */
  window?: FbankWindow;
  nMels?: number;
  frameLengthMs?: number;
  frameShiftMs?: number;
  preemphasis?: number;
  lowFreq?: number;
  highFreq?: number;
  /** Multiply samples by this first (WeSpeaker feeds 16-bit scale: 32768). */
  inputScale?: number;
  /** Subtract the per-bin mean over all frames. */
  cmn?: boolean;
}

export type ResolvedFbankOptions = Required<FbankOptions>;

export function resolveFbankOptions(o: FbankOptions = {}): ResolvedFbankOptions {
  return {
    sampleRate: o.sampleRate ?? 16000,
    window: o.window ?? 'povey',
    nMels: o.nMels ?? 80,
    frameLengthMs: o.frameLengthMs ?? 25,
    frameShiftMs: o.frameShiftMs ?? 10,
    preemphasis: o.preemphasis ?? 0.97,
    lowFreq: o.lowFreq ?? 20,
    highFreq: o.highFreq ?? 0,
    inputScale: o.inputScale ?? 1,
    cmn: o.cmn ?? true,
  };
}

const FLT_EPSILON = 1.1920928955078125e-7;

export interface Fbank {
  frames: number;
  nMels: number;
  /** Row-major [frames][nMels]. */
  data: Float32Array;
}

export class FbankExtractor {
  readonly options: ResolvedFbankOptions;
  readonly frameLength: number;
  readonly frameShift: number;
  private readonly fft: Fft;
  private readonly bank: MelBank;
  private readonly window: Float64Array;

  constructor(options: FbankOptions = {}) {
    this.options = resolveFbankOptions(options);
    const o = this.options;
    this.frameLength = Math.round((o.sampleRate * o.frameLengthMs) / 1000);
    this.frameShift = Math.round((o.sampleRate * o.frameShiftMs) / 1000);
    const padded = nextPow2(this.frameLength);
    this.fft = new Fft(padded);
    this.bank = kaldiMelBank(o.sampleRate, padded, o.nMels, o.lowFreq, o.highFreq);
    this.window = fbankWindow(o.window, this.frameLength);
  }

  /** Number of frames of `samples` samples (snip_edges: only whole frames). */
  frameCount(samples: number): number {
    return samples < this.frameLength ? 0 : 1 + Math.floor((samples - this.frameLength) / this.frameShift);
  }

  compute(audio: Float32Array): Fbank {
    const o = this.options;
    const frames = this.frameCount(audio.length);
    const nMels = o.nMels;
    const data = new Float32Array(frames * nMels);
    const padded = this.fft.size;
    const frame = new Float64Array(padded);
    const power = new Float64Array((padded >> 1) + 1);
    const mel = new Float64Array(nMels);
    const L = this.frameLength;
    for (let t = 0; t < frames; t++) {
      const off = t * this.frameShift;
      let mean = 0;
      for (let i = 0; i < L; i++) {
        frame[i] = audio[off + i]! * o.inputScale;
        mean += frame[i]!;
      }
      mean /= L;
      for (let i = 0; i < L; i++) frame[i] = frame[i]! - mean;
      if (o.preemphasis !== 0) {
        for (let i = L - 1; i > 0; i--) frame[i] = frame[i]! - o.preemphasis * frame[i - 1]!;
        frame[0] = frame[0]! - o.preemphasis * frame[0]!;
      }
      for (let i = 0; i < L; i++) frame[i] = frame[i]! * this.window[i]!;
      frame.fill(0, L);
      this.fft.powerSpectrum(frame, power);
      applyMelBank(this.bank, power, mel);
      for (let m = 0; m < nMels; m++) data[t * nMels + m] = Math.log(Math.max(mel[m]!, FLT_EPSILON));
    }
    if (o.cmn && frames > 0) subtractMean(data, frames, nMels);
    return { frames, nMels, data };
  }
}

/** Kaldi's window of `length` samples: hanning 0.5 - 0.5 cos(2 pi n / (N - 1)), povey = hanning^0.85, hamming 0.54 - 0.46 cos(2 pi n / (N - 1)). */
export function fbankWindow(type: FbankWindow, length: number): Float64Array {
  switch (type) {
    case 'povey':
      return hannWindow(length, false).map((w) => Math.pow(w, 0.85));
    case 'hanning':
      return hannWindow(length, false);
    case 'hamming': {
      const w = new Float64Array(length);
      const a = (2 * Math.PI) / Math.max(1, length - 1);
      for (let i = 0; i < length; i++) w[i] = 0.54 - 0.46 * Math.cos(a * i);
      return w;
    }
    case 'rectangular':
      return new Float64Array(length).fill(1);
    default:
      throw new RangeError(`unknown fbank window "${String(type)}" (one of ${FBANK_WINDOWS.join(', ')})`);
  }
}

/** Subtract the per-column mean of a row-major [rows][cols] matrix in place. */
export function subtractMean(data: Float32Array, rows: number, cols: number): void {
  const mean = new Float64Array(cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) mean[c] = mean[c]! + data[r * cols + c]!;
  for (let c = 0; c < cols; c++) mean[c] = mean[c]! / rows;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[r * cols + c] = data[r * cols + c]! - mean[c]!;
}

/** Kaldi-style MFCC from log-mel rows: orthonormal DCT-II, `nCeps` coefficients, cepstral lifter. */
export function mfccFromLogMel(logMel: Fbank, nCeps: number, lifter = 22): Fbank {
  const { frames, nMels } = logMel;
  if (nCeps > nMels) throw new RangeError(`nCeps ${nCeps} > nMels ${nMels}`);
  const dct = new Float64Array(nCeps * nMels);
  for (let k = 0; k < nCeps; k++) {
    const scale = k === 0 ? Math.sqrt(1 / nMels) : Math.sqrt(2 / nMels);
    for (let n = 0; n < nMels; n++) dct[k * nMels + n] = scale * Math.cos((Math.PI / nMels) * (n + 0.5) * k);
  }
  const lift = new Float64Array(nCeps);
  for (let k = 0; k < nCeps; k++) lift[k] = lifter > 0 ? 1 + 0.5 * lifter * Math.sin((Math.PI * k) / lifter) : 1;
  const data = new Float32Array(frames * nCeps);
  for (let t = 0; t < frames; t++) {
    for (let k = 0; k < nCeps; k++) {
      let s = 0;
      for (let n = 0; n < nMels; n++) s += dct[k * nMels + n]! * logMel.data[t * nMels + n]!;
      data[t * nCeps + k] = s * lift[k]!;
    }
  }
  return { frames, nMels: nCeps, data };
}
