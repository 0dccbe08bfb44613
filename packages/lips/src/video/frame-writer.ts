/**
 * Encoding a stream of rgb24 frames with ffmpeg (libx264, the source's frame rate and size) into
 * a video-only MP4. `write()` waits while ffmpeg's input pipe is full, so at most a few frames
 * are buffered.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';
import type { RgbImage } from '../image/rgb-image.js';

export interface FrameWriterOptions extends MediaToolOptions {
  width: number;
  height: number;
  /** Frame rate as ffmpeg reads it: "30", "30000/1001". */
  rate: string;
  /** x264 CRF (default 18) and preset (default "veryfast"). */
  crf?: number;
  preset?: string;
  /** The frames' layout: rgb24 (default) or yuv420p (I420, written as it is). */
  pixelFormat?: 'rgb24' | 'yuv420p';
  /** Expected frame count, for progress (optional). */
  frames?: number;
}

export class FrameWriter {
  private readonly pipe: PassThrough;
  private readonly done: Promise<unknown>;
  private failure: unknown;
  private written = 0;
  private readonly stop = new AbortController();

  private constructor(
    readonly output: string,
    private readonly opts: FrameWriterOptions,
    context: PartialContext,
  ) {
    const ctx = resolveContext(context);
    const yuv = opts.pixelFormat === 'yuv420p';
    const frameBytes = yuv ? (opts.width * opts.height * 3) / 2 : opts.width * opts.height * 3;
    this.pipe = new PassThrough({ highWaterMark: Math.max(frameBytes * 2, 1 << 16) });
    this.pipe.on('error', () => undefined); // writes after a failure: the failure is reported instead
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, this.stop.signal]) : this.stop.signal;
    const even = opts.width % 2 === 0 && opts.height % 2 === 0;
    const args = [
      '-f', 'rawvideo', '-pix_fmt', yuv ? 'yuv420p' : 'rgb24', '-s', `${opts.width}x${opts.height}`, '-framerate', opts.rate, '-i', 'pipe:0',
      '-an', '-c:v', 'libx264', '-preset', opts.preset ?? 'veryfast', '-crf', String(opts.crf ?? 18),
      '-pix_fmt', even ? 'yuv420p' : 'yuv444p', '-r', opts.rate, '-movflags', '+faststart', output,
    ];
    this.done = runFfmpeg(args, { ...opts, stage: 'encode_frames', input: this.pipe, progress: false }, { ...ctx, signal }).catch((e: unknown) => {
      this.failure = e;
      this.pipe.destroy();
    });
  }

  static start(output: string, opts: FrameWriterOptions, context: PartialContext = {}): FrameWriter {
    return new FrameWriter(output, opts, context);
  }

  get frames(): number {
    return this.written;
  }

  /** Queue one frame (its buffer must not be changed afterwards). */
  async write(frame: RgbImage): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (frame.width !== this.opts.width || frame.height !== this.opts.height) {
      throw new RangeError(`frame ${frame.width}x${frame.height} does not match the encoder's ${this.opts.width}x${this.opts.height}`);
    }
    this.written++;
    if (!this.pipe.write(frame.data)) {
      await Promise.race([once(this.pipe, 'drain'), this.done]);
      if (this.failure !== undefined) throw this.failure;
    }
  }

  /** End the input and wait for the file. */
  async close(): Promise<void> {
    this.pipe.end();
    await this.done;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Stop ffmpeg without waiting for a complete file (errors are swallowed). */
  async abort(): Promise<void> {
    this.stop.abort('encoding abandoned');
    this.pipe.destroy();
    await this.done;
  }
}
