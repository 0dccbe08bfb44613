/**
 * A SegmentModel with a known answer, for testing the windowing machinery without a network:
 * speech = `speechGain` x window and background = (1 - speechGain) x window. Reassembled tracks
 * equal those multiples of the input only when every window's samples are put back where they
 * came from and the weights are normalized.
 */
import type { SegmentModel } from '../segment-runner.js';

export class ScaledSegmentModel implements SegmentModel {
  readonly input: readonly [Float32Array, Float32Array];
  readonly speech: readonly [Float32Array, Float32Array];
  readonly background: readonly [Float32Array, Float32Array];
  /** Number of run() calls. */
  runs = 0;
  /** Copies of the left channel of each window fed, when `record` is set. */
  readonly windows: Float32Array[] = [];

  constructor(
    readonly segment: number,
    readonly sampleRate = 44100,
    private readonly speechGain = 0.25,
    private readonly record = true,
  ) {
    this.input = [new Float32Array(segment), new Float32Array(segment)];
    this.speech = [new Float32Array(segment), new Float32Array(segment)];
    this.background = [new Float32Array(segment), new Float32Array(segment)];
  }

  async run(): Promise<void> {
    this.runs++;
    if (this.record) this.windows.push(this.input[0].slice());
    const g = this.speechGain;
    for (let c = 0; c < 2; c++) {
      const x = this.input[c]!;
      const s = this.speech[c]!;
      const b = this.background[c]!;
      for (let i = 0; i < this.segment; i++) {
        s[i] = g * x[i]!;
        b[i] = (1 - g) * x[i]!;
      }
    }
  }

  async dispose(): Promise<void> {}
}
