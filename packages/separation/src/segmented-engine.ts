/**
 * A SeparationEngine over any fixed-segment model: in-memory audio goes through views, a WAV file
 * is read in windows with WavReader (converted first with ffmpeg when its rate differs) and the
 * tracks are written with WavWriter as windows complete. Calls on one engine run one at a time
 * (the model's buffers are shared).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { resolveContext, ValidationError, type PartialContext, type StageContext } from '@dub/core';
import { resample, WavReader, WavWriter, type PlanarAudio } from '@dub/media';
import { MemorySink, planarSource } from './audio-io.js';
import type { ResolvedEngineOptions } from './options.js';
import { runSpans } from './plan-runner.js';
import { SegmentRunner, type SegmentModel, type SegmentSinks } from './segment-runner.js';
import { isWavInput, type SeparatedAudio, type SeparatedFiles, type SeparationEngine, type SeparationInput, type SeparationOutput, type SeparationRunOptions, type WavSeparationInput } from './types.js';
import type { AudioSource } from './audio-io.js';

export class SegmentedSeparationEngine implements SeparationEngine {
  readonly channels = 2;
  private readonly runner: SegmentRunner;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;

  constructor(
    readonly id: string,
    private readonly model: SegmentModel,
    private readonly options: ResolvedEngineOptions,
    private readonly release: () => Promise<void>,
    /** What its record calls it (default: the id). */
    readonly label: string = id,
  ) {
    this.runner = new SegmentRunner(model);
  }

  get sampleRate(): number {
    return this.model.sampleRate;
  }

  separate<I extends SeparationInput>(input: I, context: PartialContext = {}, opts: SeparationRunOptions = {}): Promise<SeparationOutput<I>> {
    if (this.disposed) return Promise.reject(new ValidationError(`separation engine ${this.id} is disposed`));
    const ctx = resolveContext(context);
    const job = this.queue.then((): Promise<SeparatedAudio | SeparatedFiles> => (isWavInput(input) ? this.separateFile(input, ctx, opts) : this.separateAudio(input, ctx, opts)));
    this.queue = job.catch(() => undefined);
    return job as Promise<SeparationOutput<I>>;
  }

  private async runOn(source: AudioSource, sinks: SegmentSinks, ctx: StageContext, opts: SeparationRunOptions): Promise<void> {
    if (opts.spans) await runSpans(this.runner, source, sinks, opts.spans, this.options.overlap, ctx);
    else await this.runner.run(source, sinks, this.options.overlap, ctx);
  }

  private async separateAudio(audio: PlanarAudio, ctx: StageContext, opts: SeparationRunOptions): Promise<SeparatedAudio> {
    if (audio.sampleRate !== this.sampleRate) {
      throw new ValidationError(`engine ${this.id} needs audio at ${this.sampleRate} Hz, got ${audio.sampleRate} Hz (resample it first, or pass a WAV file)`, { field: 'input' });
    }
    const source = planarSource(audio);
    const speech = new MemorySink(2, source.frames);
    const background = new MemorySink(2, source.frames);
    await this.runOn(source, { speech, background }, ctx, opts);
    return {
      speech: { sampleRate: this.sampleRate, channels: speech.channels },
      background: { sampleRate: this.sampleRate, channels: background.channels },
    };
  }

  private async separateFile(input: WavSeparationInput, ctx: StageContext, opts: SeparationRunOptions): Promise<SeparatedFiles> {
    let reader = await WavReader.open(input.path);
    let converted: string | undefined;
    try {
      if (reader.sampleRate !== this.sampleRate) {
        await reader.close();
        converted = path.join(this.options.tmpDir, `dub-separation-${randomUUID()}.wav`);
        ctx.logger.info({ file: input.path, sampleRate: reader.sampleRate, to: this.sampleRate }, 'resampling separation input');
        await resample(input.path, converted, { sampleRate: this.sampleRate, channels: Math.min(2, reader.channelCount), format: 'float32', ffmpegPath: this.options.ffmpegPath, ffprobePath: this.options.ffprobePath }, { logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) });
        reader = await WavReader.open(converted);
      }
      const format = input.format ?? 'float32';
      const speech = await WavWriter.create(input.speechPath, { sampleRate: this.sampleRate, channels: 2, format });
      const background = await WavWriter.create(input.backgroundPath, { sampleRate: this.sampleRate, channels: 2, format });
      try {
        await this.runOn(reader, { speech, background }, ctx, opts);
        await Promise.all([speech.close(), background.close()]);
      } catch (e) {
        await Promise.allSettled([speech.close(), background.close()]);
        await Promise.allSettled([fs.rm(input.speechPath, { force: true }), fs.rm(input.backgroundPath, { force: true })]);
        throw e;
      }
      return { speech: input.speechPath, background: input.backgroundPath };
    } finally {
      await reader.close();
      if (converted) await fs.rm(converted, { force: true });
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.queue;
    await this.model.dispose();
    await this.release();
  }
}
