/**
 * Classical speaker vectors that need no model: 20 MFCCs (c1..c20 from 40 Kaldi mel bands, 25/10 ms,
 * cepstral lifter 22) per frame, and per window their mean and standard deviation (40 values).
 * Channel/mean normalization (CMN) happens across the file: the diarizer standardizes every
 * dimension over all windows before cosine scoring, which removes the file's mean cepstrum.
 */
import { FbankExtractor, mfccFromLogMel } from '../dsp/kaldi-fbank.js';
import type { SpeakerEmbeddingEngine, SpeakerEmbeddingFactory } from './types.js';

export interface MfccStatsOptions {
  /** Cepstral coefficients kept, c1..cN (default 20). */
  coefficients?: number;
  /** Mel bands (default 40). */
  melBands?: number;
}

export interface ResolvedMfccStatsOptions {
  coefficients: number;
  melBands: number;
}

export function resolveMfccStatsOptions(o: MfccStatsOptions = {}): ResolvedMfccStatsOptions {
  return { coefficients: o.coefficients ?? 20, melBands: o.melBands ?? 40 };
}

class MfccStats implements SpeakerEmbeddingEngine {
  readonly id = 'mfcc';
  readonly label = 'MFCC statistics';
  readonly needsStandardization = true;
  readonly dimension: number;
  private readonly fbank: FbankExtractor;
  constructor(private readonly o: ResolvedMfccStatsOptions) {
    this.dimension = 2 * o.coefficients;
    this.fbank = new FbankExtractor({ nMels: o.melBands, cmn: false, inputScale: 32768 });
  }
  /** Arithmetic only: nothing to release. */
  async dispose(): Promise<void> {}
  async embed(samples: Float32Array): Promise<Float32Array> {
    const n = this.o.coefficients;
    const mfcc = mfccFromLogMel(this.fbank.compute(samples), n + 1);
    const out = new Float32Array(2 * n);
    const T = mfcc.frames;
    if (T === 0) return out;
    for (let k = 0; k < n; k++) {
      let s = 0;
      let s2 = 0;
      for (let t = 0; t < T; t++) {
        const v = mfcc.data[t * (n + 1) + k + 1]!;
        s += v;
        s2 += v * v;
      }
      const mean = s / T;
      out[k] = mean;
      out[n + k] = Math.sqrt(Math.max(0, s2 / T - mean * mean));
    }
    return out;
  }
}

export const createMfccStats: SpeakerEmbeddingFactory<ResolvedMfccStatsOptions> = async (o) => new MfccStats(o);
