/**
 * The spectrogram HTDemucs consumes and produces, computed the way demucs' `_spec` and `_ispec`
 * do (torch.stft/istft with a periodic Hann window, normalized, centred with reflect padding):
 *
 *  - forward: reflect-pad the segment by `pad = hop/2*3` on the left and up to `frames*hop + pad`
 *    on the right, STFT (n_fft, hop), drop the Nyquist bin and keep frames [2, 2 + frames).
 *    The two channels' complex spectra go out as four real planes [re0, im0, re1, im1][bin][frame].
 *  - inverse: zero Nyquist bin, two zero frames on each side, iSTFT with the window-square
 *    envelope, crop [pad, pad + length).
 *
 * Both channels share one complex FFT per frame (a real pair packed as re + i*im). All buffers
 * are allocated once per instance; one instance serves every window of a run.
 */
import { Fft, hannWindow } from '@dub/media';

export class DemucsSpectrogram {
  /** Samples per channel of a segment. */
  readonly length: number;
  readonly nfft: number;
  readonly hop: number;
  /** Frequency bins kept (n_fft / 2: the Nyquist bin is dropped). */
  readonly bins: number;
  /** Frames kept (ceil(length / hop)). */
  readonly frames: number;
  private readonly pad: number;
  private readonly fft: Fft;
  /** Analysis window with the 1/sqrt(n_fft) normalization folded in. */
  private readonly analysis: Float64Array;
  /** Synthesis window with the 1/sqrt(n_fft) irfft normalization folded in. */
  private readonly synthesis: Float64Array;
  /** 1 / (sum of squared windows) at each output sample. */
  private readonly invEnvelope: Float64Array;
  private readonly ext0: Float32Array;
  private readonly ext1: Float32Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  private readonly acc0: Float64Array;
  private readonly acc1: Float64Array;

  constructor(length: number, nfft = 4096, hop = 1024) {
    if (hop * 4 !== nfft) throw new RangeError(`hop must be n_fft / 4 (got n_fft ${nfft}, hop ${hop})`);
    this.length = length;
    this.nfft = nfft;
    this.hop = hop;
    this.bins = nfft / 2;
    this.frames = Math.ceil(length / hop);
    this.pad = (hop / 2) * 3;
    this.fft = new Fft(nfft);
    const w = hannWindow(nfft);
    const norm = 1 / Math.sqrt(nfft);
    this.analysis = w.map((x) => x * norm);
    this.synthesis = w.map((x) => x * norm);
    const extLength = this.frames * hop + 2 * this.pad;
    if (this.pad >= length || extLength - length - this.pad >= length) throw new RangeError(`segment of ${length} samples is too short for n_fft ${nfft}`);
    this.ext0 = new Float32Array(extLength);
    this.ext1 = new Float32Array(extLength);
    this.re = new Float64Array(nfft);
    this.im = new Float64Array(nfft);
    this.acc0 = new Float64Array(length);
    this.acc1 = new Float64Array(length);
    this.invEnvelope = this.envelope(w);
  }

  /** Size of the forward output: 4 planes of bins x frames. */
  get specSize(): number {
    return 4 * this.bins * this.frames;
  }

  /**
   * Output sample j sits at position j + n_fft/2 + pad of the centred iSTFT, which has
   * frames + 4 frames (two zero frames on each side); every frame's squared window counts.
   */
  private envelope(w: Float64Array): Float64Array {
    const { nfft, hop, length } = this;
    const totalFrames = this.frames + 4;
    const inv = new Float64Array(length);
    const offset = nfft / 2 + this.pad;
    for (let j = 0; j < length; j++) {
      const p = j + offset;
      let s = 0;
      const fMin = Math.max(0, Math.ceil((p - nfft + 1) / hop));
      const fMax = Math.min(totalFrames - 1, Math.floor(p / hop));
      for (let f = fMin; f <= fMax; f++) {
        const v = w[p - f * hop]!;
        s += v * v;
      }
      inv[j] = s > 1e-11 ? 1 / s : 0;
    }
    return inv;
  }

  /** Reflect-pad one channel into `ext` (torch F.pad mode "reflect": the edge sample is not repeated). */
  private extend(x: Float32Array, ext: Float32Array): void {
    const { length, pad } = this;
    ext.set(x.subarray(0, length), pad);
    for (let i = 1; i <= pad; i++) ext[pad - i] = x[i]!;
    const right = ext.length - pad - length;
    for (let i = 1; i <= right; i++) ext[pad + length - 1 + i] = x[length - 1 - i]!;
  }

  /**
   * STFT of a stereo segment (`length` samples per channel) into `out` laid out as
   * [4][bins][frames]: re(ch0), im(ch0), re(ch1), im(ch1).
   */
  forward(ch0: Float32Array, ch1: Float32Array, out: Float32Array): void {
    const { nfft, hop, bins, frames, re, im, ext0, ext1 } = this;
    if (out.length < this.specSize) throw new RangeError(`spectrogram output needs ${this.specSize} floats, got ${out.length}`);
    this.extend(ch0, ext0);
    this.extend(ch1, ext1);
    const win = this.analysis;
    const plane = bins * frames;
    for (let t = 0; t < frames; t++) {
      const start = t * hop;
      for (let n = 0; n < nfft; n++) {
        const w = win[n]!;
        re[n] = ext0[start + n]! * w;
        im[n] = ext1[start + n]! * w;
      }
      this.fft.forward(re, im);
      // Unpack the two real spectra: X0 = (Z[k] + conj Z[N-k]) / 2, X1 = (Z[k] - conj Z[N-k]) / 2i.
      out[t] = re[0]!;
      out[plane + t] = 0;
      out[2 * plane + t] = im[0]!;
      out[3 * plane + t] = 0;
      for (let k = 1; k < bins; k++) {
        const zr = re[k]!, zi = im[k]!;
        const yr = re[nfft - k]!, yi = im[nfft - k]!;
        const idx = k * frames + t;
        out[idx] = 0.5 * (zr + yr);
        out[plane + idx] = 0.5 * (zi - yi);
        out[2 * plane + idx] = 0.5 * (zi + yi);
        out[3 * plane + idx] = 0.5 * (yr - zr);
      }
    }
  }

  /**
   * Sum the spectra of `sources` from a model output laid out as [source][4][bins][frames], take
   * the iSTFT of both channels and add the result to `out0` and `out1` (`length` samples each).
   */
  inverseAdd(spec: Float32Array, sources: readonly number[], out0: Float32Array, out1: Float32Array): void {
    const { nfft, hop, bins, frames, re, im, acc0, acc1, length, pad } = this;
    const plane = bins * frames;
    const sourceSize = 4 * plane;
    const bases = sources.map((s) => s * sourceSize);
    const nb = bases.length;
    const syn = this.synthesis;
    acc0.fill(0);
    acc1.fill(0);
    for (let t = 0; t < frames; t++) {
      // Full spectrum C = A + iB of the real pair (a, b): C[k] = A[k] + i B[k],
      // C[N-k] = conj(A[k]) + i conj(B[k]); DC imaginary parts are ignored as irfft does.
      for (let k = 0; k < bins; k++) {
        const idx = k * frames + t;
        let ar = 0, ai = 0, br = 0, bi = 0;
        for (let s = 0; s < nb; s++) {
          const b = bases[s]! + idx;
          ar += spec[b]!;
          ai += spec[b + plane]!;
          br += spec[b + 2 * plane]!;
          bi += spec[b + 3 * plane]!;
        }
        if (k === 0) {
          re[0] = ar;
          im[0] = br;
          continue;
        }
        re[k] = ar - bi;
        im[k] = ai + br;
        re[nfft - k] = ar + bi;
        im[nfft - k] = br - ai;
      }
      re[bins] = 0;
      im[bins] = 0;
      this.fft.inverseUnscaled(re, im);
      // Frame t of the model is frame t + 2 of the padded iSTFT; its sample n lands on output
      // sample (t + 2) * hop + n - n_fft/2 - pad.
      const start = (t + 2) * hop - nfft / 2 - pad;
      const n0 = Math.max(0, -start);
      const n1 = Math.min(nfft, length - start);
      for (let n = n0; n < n1; n++) {
        const w = syn[n]!;
        acc0[start + n] += re[n]! * w;
        acc1[start + n] += im[n]! * w;
      }
    }
    const inv = this.invEnvelope;
    for (let j = 0; j < length; j++) {
      const e = inv[j]!;
      out0[j] += acc0[j]! * e;
      out1[j] += acc1[j]! * e;
    }
  }
}
