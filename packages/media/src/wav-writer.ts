/**
 * Streaming WAV writer: writes a header with zero sizes, appends planar windows, and `close()`
 * patches the RIFF, data (and fact) sizes. Limited to 4 GiB of samples by the RIFF format.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { frameCount } from './audio.js';
import { encodeFrames } from './wav-codec.js';
import { buildWavHeader, bytesPerSample, checkWriteParams, WAV_MAX_RIFF_SIZE, type WavWriteFormat } from './wav-format.js';
import { DubError } from '@dub/core';

export interface WavWriterOptions {
  sampleRate: number;
  channels: number;
  /** Default pcm16. */
  format?: WavWriteFormat;
}

export class WavWriter {
  private framesWritten = 0;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private failed: unknown;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
    readonly sampleRate: number,
    readonly channelCount: number,
    readonly format: WavWriteFormat,
    private readonly headerBytes: number,
  ) {}

  static async create(file: string, opts: WavWriterOptions): Promise<WavWriter> {
    const format = opts.format ?? 'pcm16';
    checkWriteParams(format, opts.sampleRate, opts.channels);
    const header = buildWavHeader(format, opts.sampleRate, opts.channels, 0);
    const fh = await open(file, 'w');
    try {
      await fh.write(header, 0, header.length, 0);
    } catch (e) {
      await fh.close();
      throw e;
    }
    return new WavWriter(file, fh, opts.sampleRate, opts.channels, format, header.length);
  }

  /** Frames written so far. */
  get frames(): number {
    return this.framesWritten;
  }

  /** Append planar frames (one array per channel, same length). Calls are applied in order. */
  write(channels: readonly Float32Array[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`WavWriter for ${this.file} is closed`));
    if (channels.length !== this.channelCount) return Promise.reject(new RangeError(`expected ${this.channelCount} channels, got ${channels.length}`));
    let n: number;
    try {
      n = frameCount(channels);
    } catch (e) {
      return Promise.reject(e);
    }
    const blockAlign = bytesPerSample(this.format) * this.channelCount;
    const at = this.headerBytes + this.framesWritten * blockAlign;
    const dataBytes = (this.framesWritten + n) * blockAlign;
    if (this.headerBytes - 8 + dataBytes + (dataBytes & 1) > WAV_MAX_RIFF_SIZE) {
      return Promise.reject(new DubError('payload_too_large', `a WAV file holds at most 4 GiB; ${this.file} would exceed it`, { retryable: false }));
    }
    this.framesWritten += n;
    const bytes = encodeFrames(channels, this.format, 0, n);
    const job = this.queue.then(async () => {
      if (this.failed) throw this.failed;
      let done = 0;
      while (done < bytes.length) {
        const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done, at + done);
        done += bytesWritten;
      }
    });
    this.queue = job.catch((e: unknown) => {
      this.failed ??= e;
    });
    return job;
  }

  /** Finish the file: pad byte, header sizes, close. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.queue;
      if (this.failed) throw this.failed;
      const header = buildWavHeader(this.format, this.sampleRate, this.channelCount, this.framesWritten);
      const dataBytes = this.framesWritten * bytesPerSample(this.format) * this.channelCount;
      if (dataBytes & 1) await this.fh.write(Buffer.alloc(1), 0, 1, this.headerBytes + dataBytes);
      await this.fh.write(header, 0, header.length, 0);
    } finally {
      await this.fh.close();
    }
  }
}
