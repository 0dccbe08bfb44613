/**
 * The spectrogram Spleeter 2-stems consumes, computed as Deezer's Spleeter and k2-fsa/sherpa-onnx's
 * runtime (kaldi-native-fbank `Stft`/`IStft`, offline-source-separation-spleeter-impl.h) do:
 * n_fft 4096, hop 1024, periodic Hann window of 4096, `center` false, not normalized (X[k] = sum_n
 * w[n] x[n] e^{-2 pi i k n / N}), inverse = irfft (1/N), the window again, overlap-add, divided by
 * the sum of squared windows.
 *
 * One segment at a time: the segment is zero-padded by n_fft - hop samples on both sides (as
 * Spleeter pads the waveform with zeros before its STFT), so that every sample of the segment is
 * covered by n_fft / hop = 4 frames and the iSTFT of the unmasked spectrogram gives the segment back
 * (to float rounding); `frames` frames (512, Spleeter's T) then cover `length` = (frames + 1) * hop -
 * n_fft samples (521216: 11.82 s at 44.1 kHz).
 *
 * `forward` writes the magnitudes of the lowest `bins` bins (1024, Spleeter's F: up to 11 kHz) in
 * the model's layout [channel][frame][bin] (the graph's x is [2, splits, 512, 1024]) and keeps the
 * complex spectra of every bin; `inverse` applies a mask of [channel][frame][bin] to the kept bins
 * and `above` to the bins above them, and returns both channels in the time domain. The two
 * channels share one complex FFT per frame (a real pair packed as re + i*im); every buffer is
 * allocated once per instance.
 */
import { Fft, hannWindow } from '@dub/media';

export const SPLEETER_NFFT = 4096;
export const SPLEETER_HOP = 1024;
/** Frequency bins the model sees (Spleeter's F): 0 .. 1023, up to 11 kHz at 44.1 kHz. */
export const SPLEETER_BINS = 1024;
/** Frames per model split (Spleeter's T). */
export const SPLEETER_FRAMES = 512;

export class SpleeterSpectrogram {
  /** Samples per channel of a segment. */
  readonly length: number;
  readonly frames: number;
  readonly bins: number;
  readonly nfft: number;
  readonly hop: number;
  /** Zeros before and after the segment (n_fft - hop). */
  readonly pad: number;
  /** Bins of the real FFT (n_fft / 2 + 1). */
  readonly fullBins: number;
  private readonly fft: Fft;
  private readonly window: Float64Array;
  /** 1 / (sum of squared windows) at each sample of the segment. */
  private readonly invEnvelope: Float64Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  /** Complex spectra of both channels, [frame][fullBins] each. */
  private readonly xr0: Float32Array;
  private readonly xi0: Float32Array;
  private readonly xr1: Float32Array;
  private readonly xi1: Float32Array;
  private readonly acc0: Float64Array;
  private readonly acc1: Float64Array;

  constructor(frames = SPLEETER_FRAMES, bins = SPLEETER_BINS, nfft = SPLEETER_NFFT, hop = SPLEETER_HOP) {
    if ((nfft & (nfft - 1)) !== 0 || nfft < 4) throw new RangeError(`n_fft must be a power of two, got ${nfft}`);
    if (!(hop > 0 && nfft % hop === 0)) throw new RangeError(`hop must divide n_fft (got n_fft ${nfft}, hop ${hop})`);
    if (!(bins >= 1 && bins <= nfft / 2 + 1)) throw new RangeError(`bins must be in [1, ${nfft / 2 + 1}], got ${bins}`);
    this.frames = frames;
    this.bins = bins;
    this.nfft = nfft;
    this.hop = hop;
    this.pad = nfft - hop;
    this.fullBins = nfft / 2 + 1;
    this.length = (frames - 1) * hop + nfft - 2 * this.pad;
    if (this.length < 1) throw new RangeError(`${frames} frames of hop ${hop} cover no sample once padded by ${this.pad}`);
    this.fft = new Fft(nfft);
    this.window = hannWindow(nfft, true);
    this.re = new Float64Array(nfft);
    this.im = new Float64Array(nfft);
    const spec = frames * this.fullBins;
    this.xr0 = new Float32Array(spec);
    this.xi0 = new Float32Array(spec);
    this.xr1 = new Float32Array(spec);
    this.xi1 = new Float32Array(spec);
    this.acc0 = new Float64Array(this.length);
    this.acc1 = new Float64Array(this.length);
    this.invEnvelope = new Float64Array(this.length);
    for (let j = 0; j < this.length; j++) {
      const p = j + this.pad;
      let s = 0;
      for (let f = Math.max(0, Math.ceil((p - nfft + 1) / hop)); f <= Math.min(frames - 1, Math.floor(p / hop)); f++) {
        const v = this.window[p - f * hop]!;
        s += v * v;
      }
      // kaldi-native-fbank divides only where the sum is not zero
      this.invEnvelope[j] = s !== 0 ? 1 / s : 0;
    }
  }

  /** The complex spectrum of `channel` from the last `forward`, [frame][n_fft/2 + 1] (views, not copies). */
  spectrum(channel: 0 | 1): { re: Float32Array; im: Float32Array } {
    return channel === 0 ? { re: this.xr0, im: this.xi0 } : { re: this.xr1, im: this.xi1 };
  }

  /** Floats of the model input (and of a mask): 2 channels x frames x bins. */
  get size(): number {
    return 2 * this.frames * this.bins;
  }

  /**
   * STFT of a stereo segment (`length` samples per channel, zeros around it): keeps the complex
   * spectra and writes |X| of the lowest `bins` bins into `magnitude` as [channel][frame][bin].
   */
  forward(ch0: Float32Array, ch1: Float32Array, magnitude: Float32Array): void {
    const { nfft, hop, bins, frames, fullBins, pad, length, re, im, window } = this;
    if (ch0.length < length || ch1.length < length) throw new RangeError(`a segment needs ${length} samples per channel, got ${ch0.length} and ${ch1.length}`);
    if (magnitude.length < this.size) throw new RangeError(`magnitude output needs ${this.size} floats, got ${magnitude.length}`);
    const plane = frames * bins;
    for (let t = 0; t < frames; t++) {
      // frame t covers padded samples [t*hop, t*hop + n_fft), segment samples from t*hop - pad
      const start = t * hop - pad;
      for (let n = 0; n < nfft; n++) {
        const j = start + n;
        if (j < 0 || j >= length) {
          re[n] = 0;
          im[n] = 0;
        } else {
          const w = window[n]!;
          re[n] = ch0[j]! * w;
          im[n] = ch1[j]! * w;
        }
      }
      this.fft.forward(re, im);
      const row = t * fullBins;
      // Unpack the two real spectra: X0 = (Z[k] + conj Z[N-k]) / 2, X1 = (Z[k] - conj Z[N-k]) / 2i.
      for (let k = 0; k < fullBins; k++) {
        const zr = re[k]!, zi = im[k]!;
        const m = k === 0 ? 0 : nfft - k;
        const yr = re[m]!, yi = im[m]!;
        const r0 = 0.5 * (zr + yr), i0 = 0.5 * (zi - yi);
        const r1 = 0.5 * (zi + yi), i1 = 0.5 * (yr - zr);
        this.xr0[row + k] = r0;
        this.xi0[row + k] = i0;
        this.xr1[row + k] = r1;
        this.xi1[row + k] = i1;
        if (k < bins) {
          magnitude[t * bins + k] = Math.sqrt(r0 * r0 + i0 * i0);
          magnitude[plane + t * bins + k] = Math.sqrt(r1 * r1 + i1 * i1);
        }
      }
    }
  }

  /**
   * iSTFT of the last `forward`'s spectra times `mask` ([channel][frame][bin] for the lowest
   * `bins` bins) and times `above` for the bins above them (Spleeter: 0), into `out0`/`out1`
   * (`length` samples each, overwritten).
   */
  inverse(mask: Float32Array, above: number, out0: Float32Array, out1: Float32Array): void {
    const { nfft, hop, bins, frames, fullBins, pad, length, re, im, window, acc0, acc1 } = this;
    if (mask.length < this.size) throw new RangeError(`mask needs ${this.size} floats, got ${mask.length}`);
    const plane = frames * bins;
    const half = nfft / 2;
    acc0.fill(0);
    acc1.fill(0);
    for (let t = 0; t < frames; t++) {
      const row = t * fullBins;
      for (let k = 0; k < fullBins; k++) {
        const m0 = k < bins ? mask[t * bins + k]! : above;
        const m1 = k < bins ? mask[plane + t * bins + k]! : above;
        const ar = m0 * this.xr0[row + k]!, ai = m0 * this.xi0[row + k]!;
        const br = m1 * this.xr1[row + k]!, bi = m1 * this.xi1[row + k]!;
        // Full spectrum C = A + iB of the real pair (a, b); the DC and Nyquist imaginary parts are
        // dropped, as irfft (and kaldi-native-fbank's inverse rfft) does.
        if (k === 0 || k === half) {
          re[k] = ar;
          im[k] = br;
          continue;
        }
        re[k] = ar - bi;
        im[k] = ai + br;
        re[nfft - k] = ar + bi;
        im[nfft - k] = br - ai;
      }
      this.fft.inverseUnscaled(re, im);
      const start = t * hop - pad;
      const n0 = Math.max(0, -start);
      const n1 = Math.min(nfft, length - start);
      for (let n = n0; n < n1; n++) {
        const w = window[n]! / nfft;
        acc0[start + n] += re[n]! * w;
        acc1[start + n] += im[n]! * w;
      }
    }
    const inv = this.invEnvelope;
    for (let j = 0; j < length; j++) {
      out0[j] = acc0[j]! * inv[j]!;
      out1[j] = acc1[j]! * inv[j]!;
    }
  }
}
