export interface MixResult {
  output: string;
  sampleRate: number;
  channels: number;
  frames: number;
  durationSeconds: number;
  /** Integrated loudness of the mix before normalisation, LUFS. */
  inputIntegrated: number;
}
