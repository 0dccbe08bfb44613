/**
 * Whisper's log-mel front-end, as in openai/whisper `log_mel_spectrogram`: audio at 16 kHz padded
 * (or cut) to 30 s, a 400-point STFT with a periodic Hann window and hop 160 (centered, reflect
 * padding), the last frame dropped (3000 frames), power spectrum through a Slaney mel bank
 * (80 or 128 filters), log10 clamped at 1e-10, floored at max - 8, then (x + 4) / 4.
 * The result is row-major [nMels][3000], the layout of `input_features` [1, nMels, 3000].
 */
import { Fft, hannWindow } from '@dub/media';
import { applyMelBank, slaneyMelBank, type MelBank } from './mel.js';

export const WHISPER_SAMPLE_RATE = 16000;
export const WHISPER_N_FFT = 400;
export const WHISPER_HOP = 160;
export const WHISPER_CHUNK_SECONDS = 30;
export const WHISPER_N_SAMPLES = WHISPER_SAMPLE_RATE * WHISPER_CHUNK_SECONDS;
export const WHISPER_N_FRAMES = WHISPER_N_SAMPLES / WHISPER_HOP;

export class WhisperFeatureExtractor {
  readonly nMels: number;
  readonly nFrames = WHISPER_N_FRAMES;
  private readonly fft = new Fft(WHISPER_N_FFT);
  private readonly bank: MelBank;
  private readonly window = hannWindow(WHISPER_N_FFT);

  constructor(nMels: 80 | 128 | number = 80) {
    this.nMels = nMels;
    this.bank = slaneyMelBank(WHISPER_SAMPLE_RATE, WHISPER_N_FFT, nMels);
  }

  /** Features of up to 30 s of 16 kHz mono audio (longer input is cut, shorter is zero-padded). */
  extract(audio: Float32Array): Float32Array {
    const n = WHISPER_N_SAMPLES;
    const pad = WHISPER_N_FFT / 2;
    // Reflect-padded signal of length n + 2 * pad (samples past the input are zeros).
    const x = new Float32Array(n + 2 * pad);
    x.set(audio.subarray(0, n), pad);
    for (let i = 1; i <= pad; i++) {
      x[pad - i] = x[pad + i]!;
      x[pad + n - 1 + i] = x[pad + n - 1 - i]!;
    }
    const frames = this.nFrames;
    const nMels = this.nMels;
    const out = new Float32Array(nMels * frames);
    const frame = new Float64Array(WHISPER_N_FFT);
    const power = new Float64Array((WHISPER_N_FFT >> 1) + 1);
    const mel = new Float64Array(nMels);
    let max = -Infinity;
    for (let t = 0; t < frames; t++) {
      const off = t * WHISPER_HOP;
      for (let i = 0; i < WHISPER_N_FFT; i++) frame[i] = x[off + i]! * this.window[i]!;
      this.fft.powerSpectrum(frame, power);
      applyMelBank(this.bank, power, mel);
      for (let m = 0; m < nMels; m++) {
        const v = Math.log10(Math.max(mel[m]!, 1e-10));
        out[m * frames + t] = v;
        if (v > max) max = v;
      }
    }
    const floor = max - 8;
    for (let i = 0; i < out.length; i++) out[i] = (Math.max(out[i]!, floor) + 4) / 4;
    return out;
  }
}
