export interface MixResult {
  output: string;
  sampleRate: number;
  channels: number;
  frames: number;
  durationSeconds: number;
  /** Integrated loudness of the mix before normalisation, LUFS. */
  inputIntegrated: number;
  /** Loudness gain applied before the limiter, dB (the previous gain when it was kept). */
  gainDb: number;
  /** Gain that would bring the mix exactly to the target, dB. */
  exactGainDb: number;
  /** True when the `previousGainDb` asked for was within the tolerance and kept. */
  gainKept: boolean;
  /** K-weighted energy of the premix per 100 ms hop: given back as `previous.hops` to updateMixReplace. */
  hops?: Float64Array;
}
