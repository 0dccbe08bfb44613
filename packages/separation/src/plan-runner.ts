/**
 * Running a SeparationPlan over an AudioSource into two sinks, streaming:
 *
 * - without the model (`passThrough`): the mix goes to one track and silence to the other;
 * - on spans (`runSpans`): outside the spans the mix is the background and the speech is silence;
 *   inside, the segment runner separates the span (its own audio only: zeros past its edges, as
 *   at the ends of a file) and the first and last `fade` seconds of a span that does not touch an
 *   end of the input cross-fade linearly between the model's tracks and the pass-through ones, so
 *   a span's edge (where the padding around speech leaves only background) makes no step.
 */
import { subContext, throwIfAborted, type StageContext } from '@dub/core';
import type { AudioSink, AudioSource } from './audio-io.js';
import { mergeSpans, type TimeSpan } from './background.js';
import type { SegmentRunner, SegmentSinks } from './segment-runner.js';

const BLOCK = 1 << 16;

function stereo(block: Float32Array[]): [Float32Array, Float32Array] {
  const l = block[0] ?? new Float32Array(0);
  return [l, block.length > 1 ? block[1]! : l];
}

/** [from, to) of the source: the mix to `mixTo`, silence to the other track. */
async function copyRange(source: AudioSource, sinks: SegmentSinks, mixTo: 'speech' | 'background', from: number, to: number, ctx: StageContext): Promise<void> {
  let zeros = new Float32Array(0);
  for (let at = from; at < to; at += BLOCK) {
    throwIfAborted(ctx.signal);
    const n = Math.min(BLOCK, to - at);
    const mix = stereo(await source.read(at, n));
    if (zeros.length !== n) zeros = new Float32Array(n);
    const silent = [zeros, zeros];
    await sinks.speech.write(mixTo === 'speech' ? mix : silent);
    await sinks.background.write(mixTo === 'background' ? mix : silent);
  }
}

/** No model: the whole mix to `mixTo` (`speech` when there is no background, `background` when there is no speech). */
export async function passThrough(source: AudioSource, sinks: SegmentSinks, mixTo: 'speech' | 'background', ctx: StageContext, stage = 'separation'): Promise<void> {
  await copyRange(source, sinks, mixTo, 0, source.frames, ctx);
  ctx.onProgress?.({ stage, fraction: 1, message: `no model: the mix is the ${mixTo}` });
}

/** A span [a, b) of `source` as a source of its own. */
function spanSource(source: AudioSource, a: number, b: number): AudioSource {
  return {
    sampleRate: source.sampleRate,
    channelCount: source.channelCount,
    frames: b - a,
    read: (start, count) => source.read(a + start, Math.max(0, Math.min(count, b - a - start))),
  };
}

/** Writes the model's output of span [a, b), cross-faded with the pass-through track near faded edges. */
class FadeSink implements AudioSink {
  private at = 0;

  constructor(
    private readonly target: AudioSink,
    private readonly kind: 'speech' | 'background',
    private readonly source: AudioSource,
    private readonly a: number,
    private readonly b: number,
    private readonly fadeIn: number,
    private readonly fadeOut: number,
  ) {}

  private weight(i: number): number {
    const len = this.b - this.a;
    let w = 1;
    if (i < this.fadeIn) w = Math.min(w, (i + 0.5) / this.fadeIn);
    if (i >= len - this.fadeOut) w = Math.min(w, (len - i - 0.5) / this.fadeOut);
    return w;
  }

  async write(block: readonly Float32Array[]): Promise<void> {
    const n = block[0]?.length ?? 0;
    const start = this.at;
    this.at += n;
    const len = this.b - this.a;
    const faded = start < this.fadeIn || start + n > len - this.fadeOut;
    if (!faded) return this.target.write(block);
    const mix = this.kind === 'background' ? stereo(await this.source.read(this.a + start, n)) : undefined;
    const out = [new Float32Array(n), new Float32Array(n)];
    for (let c = 0; c < 2; c++) {
      const x = block[c] ?? block[0]!;
      const o = out[c]!;
      const m = mix?.[c];
      for (let j = 0; j < n; j++) {
        const w = this.weight(start + j);
        o[j] = w * x[j]! + (m ? (1 - w) * m[j]! : 0);
      }
    }
    return this.target.write(out);
  }
}

/**
 * Separate `source` on `spans` (seconds) with `runner`; the rest is background as it is.
 * Returns the frames the model ran on.
 */
export async function runSpans(runner: SegmentRunner, source: AudioSource, sinks: SegmentSinks, spans: readonly TimeSpan[], overlap: number, ctx: StageContext, opts: { fade?: number; stage?: string } = {}): Promise<number> {
  const rate = source.sampleRate;
  const frames = source.frames;
  const stage = opts.stage ?? 'separation';
  const merged = mergeSpans(spans, 0, frames / rate)
    .map((s) => [Math.round(s.start * rate), Math.min(frames, Math.round(s.end * rate))] as const)
    .filter(([a, b]) => b > a);
  const total = merged.reduce((s, [a, b]) => s + b - a, 0);
  const fade = Math.max(0, Math.round((opts.fade ?? 0.5) * rate));
  let pos = 0;
  let modelled = 0;
  for (const [a, b] of merged) {
    await copyRange(source, sinks, 'background', pos, a, ctx);
    const f = Math.min(fade, Math.floor((b - a) / 2));
    const src = spanSource(source, a, b);
    const spanSinks: SegmentSinks = {
      speech: new FadeSink(sinks.speech, 'speech', source, a, b, a > 0 ? f : 0, b < frames ? f : 0),
      background: new FadeSink(sinks.background, 'background', source, a, b, a > 0 ? f : 0, b < frames ? f : 0),
    };
    await runner.run(src, spanSinks, overlap, subContext(ctx, stage, modelled / total, (modelled + b - a) / total));
    modelled += b - a;
    pos = b;
  }
  await copyRange(source, sinks, 'background', pos, frames, ctx);
  if (total === 0) ctx.onProgress?.({ stage, fraction: 1, message: 'no spans: the mix is the background' });
  return total;
}
