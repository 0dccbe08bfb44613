/**
 * Wav2Lip's audio front-end (its hparams and audio.melspectrogram): 16 kHz audio, pre-emphasis
 * 0.97, STFT with n_fft 800, hop 200, a periodic Hann window of 800 and centred frames (reflect
 * padding), magnitude -> 80 Slaney mel bands (55..7600 Hz, Slaney area normalisation, as
 * librosa.filters.mel), amplitude -> dB with a floor of -100 dB minus the reference level 20 dB,
 * then normalised symmetrically to [-4, 4]. 80 mel frames per second of audio.
 *
 * `MelWindows` computes the 16-frame window a video frame needs straight from the WAV on disk
 * (frames cached briefly: neighbouring video frames share most of theirs), so memory does not grow
 * with the audio's length.
 */
import { Fft, hannWindow, WavReader } from '@dub/media';

/** The periodic Hann window of the STFT, kept on this module's surface. */
export { hannWindow };

export const WAV2LIP_MEL = Object.freeze({
  sampleRate: 16000,
  nFft: 800,
  hop: 200,
  win: 800,
  nMels: 80,
  fmin: 55,
  fmax: 7600,
  preemphasis: 0.97,
  minLevelDb: -100,
  refLevelDb: 20,
  maxAbsValue: 4,
  /** Mel frames per video frame window. */
  windowFrames: 16,
});

function hzToMel(f: number): number {
  const fSp = 200 / 3;
  const minLogHz = 1000;
  const minLogMel = minLogHz / fSp;
  const logstep = Math.log(6.4) / 27;
  return f >= minLogHz ? minLogMel + Math.log(f / minLogHz) / logstep : f / fSp;
}
function melToHz(m: number): number {
  const fSp = 200 / 3;
  const minLogHz = 1000;
  const minLogMel = minLogHz / fSp;
  const logstep = Math.log(6.4) / 27;
  return m >= minLogMel ? minLogHz * Math.exp(logstep * (m - minLogMel)) : fSp * m;
}

/** librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax) with htk=False, norm='slaney': [nMels][nFft/2+1]. */
export function melFilterbank(sr = WAV2LIP_MEL.sampleRate, nFft = WAV2LIP_MEL.nFft, nMels = WAV2LIP_MEL.nMels, fmin = WAV2LIP_MEL.fmin, fmax = WAV2LIP_MEL.fmax): Float32Array[] {
  const bins = nFft / 2 + 1;
  const fftFreqs = Array.from({ length: bins }, (_, i) => (i * sr) / nFft);
  const mMin = hzToMel(fmin);
  const mMax = hzToMel(fmax);
  const pts = Array.from({ length: nMels + 2 }, (_, i) => melToHz(mMin + ((mMax - mMin) * i) / (nMels + 1)));
  const out: Float32Array[] = [];
  for (let m = 0; m < nMels; m++) {
    const row = new Float32Array(bins);
    const lo = pts[m];
    const c = pts[m + 1];
    const hi = pts[m + 2];
    const enorm = 2 / (hi - lo);
    for (let k = 0; k < bins; k++) {
      const f = fftFreqs[k];
      const w = Math.max(0, Math.min((f - lo) / (c - lo), (hi - f) / (hi - c)));
      row[k] = w * enorm;
    }
    out.push(row);
  }
  return out;
}

/** Normalised log-mel of one STFT magnitude frame (Wav2Lip's _amp_to_db, -ref, _normalize). */
export function normaliseMel(melAmp: number): number {
  const { minLevelDb, refLevelDb, maxAbsValue } = WAV2LIP_MEL;
  const minLevel = Math.exp((minLevelDb / 20) * Math.log(10));
  const db = 20 * Math.log10(Math.max(minLevel, melAmp)) - refLevelDb;
  const v = 2 * maxAbsValue * ((db - minLevelDb) / -minLevelDb) - maxAbsValue;
  return Math.max(-maxAbsValue, Math.min(maxAbsValue, v));
}

/** Mel frames of a 16 kHz WAV, computed on demand. */
export class MelWindows {
  private readonly fft = new Fft(WAV2LIP_MEL.nFft);
  /** Periodic Hann window (scipy.signal.get_window('hann', n, fftbins=True)). */
  private readonly window = hannWindow(WAV2LIP_MEL.win);
  private readonly filters = melFilterbank();
  private readonly cache = new Map<number, Float32Array>();
  /** Number of mel frames (librosa, centred: 1 + floor(samples / hop)). */
  readonly frames: number;

  private constructor(private readonly reader: WavReader) {
    this.frames = 1 + Math.floor(reader.frames / WAV2LIP_MEL.hop);
  }

  static async open(wav16k: string): Promise<MelWindows> {
    const reader = await WavReader.open(wav16k);
    if (reader.sampleRate !== WAV2LIP_MEL.sampleRate) {
      await reader.close();
      throw new RangeError(`mel front-end needs ${WAV2LIP_MEL.sampleRate} Hz audio, ${wav16k} is ${reader.sampleRate} Hz`);
    }
    return new MelWindows(reader);
  }

  /**
   * The [80 x 16] window (row-major: mel band, then time) of video frame `index` at `fps`:
   * mel frames from int(80 * index / fps), or int(80 * time) for a variable frame rate's frame at
   * `time` s; the last 16 frames where the audio ends sooner.
   */
  async windowFor(index: number, fps: number, time?: number): Promise<Float32Array> {
    const { windowFrames, nMels } = WAV2LIP_MEL;
    let start = time === undefined ? Math.floor((80 * index) / fps) : Math.floor(80 * time);
    if (start + windowFrames > this.frames) start = Math.max(0, this.frames - windowFrames);
    await this.compute(start, start + windowFrames);
    const out = new Float32Array(nMels * windowFrames);
    for (let t = 0; t < windowFrames; t++) {
      const col = this.cache.get(start + t);
      for (let m = 0; m < nMels; m++) out[m * windowFrames + t] = col ? col[m] : -WAV2LIP_MEL.maxAbsValue;
    }
    for (const k of this.cache.keys()) if (k < start - windowFrames) this.cache.delete(k);
    return out;
  }

  /** Compute (and cache) mel frames [from, to). */
  private async compute(from: number, to: number): Promise<void> {
    const missing: number[] = [];
    for (let f = from; f < Math.min(to, this.frames); f++) if (!this.cache.has(f)) missing.push(f);
    if (!missing.length) return;
    const { hop, nFft, preemphasis } = WAV2LIP_MEL;
    const n = this.reader.frames;
    const half = nFft / 2;
    // samples of the centred frames, the reflected ones at both ends and one before for pre-emphasis
    const lo = missing[0] * hop - half;
    const hi = missing[missing.length - 1] * hop + half;
    const readFrom = Math.max(0, lo - 4);
    const readTo = Math.min(n, Math.max(hi + 2, lo < 0 ? half + 2 : 0));
    const raw = readTo > readFrom ? (await this.reader.read(readFrom, readTo - readFrom))[0] : new Float32Array(0);
    const pre = (i: number): number => {
      // pre-emphasised sample i of the whole signal (scipy lfilter([1, -k], [1], x): y[0] = x[0])
      const x = raw[i - readFrom] ?? 0;
      const prev = i > 0 ? raw[i - 1 - readFrom] ?? 0 : 0;
      return x - preemphasis * prev;
    };
    const at = (i: number): number => {
      if (n <= 1) return 0;
      let j = i;
      if (j < 0) j = -j;
      if (j >= n) j = 2 * (n - 1) - j;
      return j >= 0 && j < n ? pre(j) : 0;
    };
    const frame = new Float64Array(nFft);
    const mag = new Float64Array(half + 1);
    for (const f of missing) {
      const c = f * hop - half;
      for (let t = 0; t < nFft; t++) frame[t] = at(c + t) * this.window[t];
      this.fft.powerSpectrum(frame, mag);
      for (let k = 0; k < mag.length; k++) mag[k] = Math.sqrt(mag[k]);
      const col = new Float32Array(this.filters.length);
      for (let m = 0; m < this.filters.length; m++) {
        const row = this.filters[m];
        let s = 0;
        for (let k = 0; k < mag.length; k++) if (row[k] !== 0) s += row[k] * mag[k];
        col[m] = normaliseMel(s);
      }
      this.cache.set(f, col);
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
    await this.reader.close();
  }
}
