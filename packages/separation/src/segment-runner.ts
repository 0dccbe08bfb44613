/**
 * Streaming overlap-add over a fixed-segment model. Windows are read from an AudioSource one at
 * a time, each result is blended into a one-segment accumulator with demucs' transition
 * weights, and samples no later window touches are normalized and handed to the sinks. Memory
 * is a few segments whatever the input length; nothing is allocated per window here.
 */
import { reportProgress, throwIfAborted, type StageContext } from '@dub/core';
import type { AudioSink, AudioSource } from './audio-io.js';
import { planWindows, transitionWeight } from './windowing.js';

/** A model that separates one full-length stereo segment at a time. */
export interface SegmentModel {
  /** Samples per channel of a segment. */
  readonly segment: number;
  readonly sampleRate: number;
  /** Two channels of `segment` samples: the runner writes each window here before `run()`. */
  readonly input: readonly [Float32Array, Float32Array];
  /** Two channels each, filled by `run()`. */
  readonly speech: readonly [Float32Array, Float32Array];
  readonly background: readonly [Float32Array, Float32Array];
  run(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * A SegmentModel's stereo buffers, allocated once for its segment: the input (a pair of its own,
 * or views of the buffer its input tensor is made of) and the speech and background `run()` fills.
 * Its sessions belong to a SessionCache and the buffers go with the model: `dispose()` has nothing to do.
 */
export abstract class StereoSegmentModel implements SegmentModel {
  readonly input: readonly [Float32Array, Float32Array];
  readonly speech: readonly [Float32Array, Float32Array];
  readonly background: readonly [Float32Array, Float32Array];

  protected constructor(readonly segment: number, readonly sampleRate: number, input?: readonly [Float32Array, Float32Array]) {
    const pair = () => [new Float32Array(segment), new Float32Array(segment)] as const;
    this.input = input ?? pair();
    this.speech = pair();
    this.background = pair();
  }

  abstract run(): Promise<void>;

  async dispose(): Promise<void> {}
}

export interface SegmentSinks {
  speech: AudioSink;
  background: AudioSink;
}

/** Reusable accumulators for one model (one run at a time). */
export class SegmentRunner {
  private readonly weight: Float32Array;
  private readonly acc: Float32Array[];
  private readonly sumWeight: Float32Array;
  private readonly out: Float32Array[];

  constructor(private readonly model: SegmentModel, private readonly stage = 'separation') {
    const s = model.segment;
    this.weight = transitionWeight(s);
    // speech L/R, background L/R
    this.acc = Array.from({ length: 4 }, () => new Float32Array(s));
    this.sumWeight = new Float32Array(s);
    this.out = Array.from({ length: 4 }, () => new Float32Array(s));
  }

  async run(source: AudioSource, sinks: SegmentSinks, overlap: number, ctx: StageContext): Promise<number> {
    const { model, weight, acc, sumWeight, out } = this;
    const segment = model.segment;
    const plan = planWindows(source.frames, segment, overlap);
    const windows = plan.windows;
    const [in0, in1] = model.input;
    const modelOut = [model.speech[0], model.speech[1], model.background[0], model.background[1]];
    for (const a of acc) a.fill(0);
    sumWeight.fill(0);
    ctx.logger.debug({ frames: source.frames, windows: windows.length, segment }, 'separation windows');

    for (let i = 0; i < windows.length; i++) {
      throwIfAborted(ctx.signal);
      const w = windows[i]!;
      // The model's window: real audio where there is some, zeros past either end.
      const from = Math.max(0, w.inputStart);
      const to = Math.min(source.frames, w.inputStart + segment);
      const block = await source.read(from, to - from);
      const lead = from - w.inputStart;
      const n = block[0]?.length ?? 0;
      const left = block[0]!;
      const right = block.length > 1 ? block[1]! : left;
      in0.fill(0, 0, lead);
      in1.fill(0, 0, lead);
      in0.set(left, lead);
      in1.set(right, lead);
      in0.fill(0, lead + n);
      in1.fill(0, lead + n);

      await model.run();

      // The window's own samples start at offset - inputStart inside the model output.
      const skip = w.offset - w.inputStart;
      for (let c = 0; c < 4; c++) {
        const a = acc[c]!;
        const o = modelOut[c]!;
        for (let j = 0; j < w.length; j++) a[j] += weight[j]! * o[skip + j]!;
      }
      for (let j = 0; j < w.length; j++) sumWeight[j] += weight[j]!;

      // Samples before the next window's offset are final.
      const next = i + 1 < windows.length ? windows[i + 1]!.offset : plan.total;
      const done = next - w.offset;
      for (let c = 0; c < 4; c++) {
        const a = acc[c]!;
        const o = out[c]!;
        for (let j = 0; j < done; j++) o[j] = a[j]! / sumWeight[j]!;
      }
      await sinks.speech.write([out[0]!.subarray(0, done), out[1]!.subarray(0, done)]);
      await sinks.background.write([out[2]!.subarray(0, done), out[3]!.subarray(0, done)]);
      for (const a of [...acc, sumWeight]) {
        a.copyWithin(0, done);
        a.fill(0, segment - done);
      }
      reportProgress(ctx, this.stage, (i + 1) / windows.length, `window ${i + 1}/${windows.length}`);
    }
    if (windows.length === 0) reportProgress(ctx, this.stage, 1, 'empty input');
    return plan.total;
  }
}
