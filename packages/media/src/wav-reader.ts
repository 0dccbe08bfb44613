/**
 * Streaming WAV reader: parses the header with a few small reads, then `read(start, count)`
 * reads only that window from disk. Memory is bounded by the window size.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { decodeFrames } from './wav-codec.js';
import { parseWavAsync, WavFormatError, type WavLayout, type WavSampleFormat } from './wav-format.js';

/** Anything that serves planar windows of audio (WavReader, or audio in memory). */
export interface AudioSource {
  readonly sampleRate: number;
  readonly channelCount: number;
  readonly frames: number;
  read(startFrame: number, frameCount: number): Promise<Float32Array[]>;
}

export class WavReader implements AudioSource {
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
    private readonly layout: WavLayout,
  ) {}

  /** Open `file` and parse its header; throws WavFormatError for a file that is not a readable WAV. */
  /** Byte offset of the first frame in the file, and bytes per frame. */
  get dataOffset(): number {
    return this.layout.dataOffset;
  }

  get blockAlign(): number {
    return this.layout.format.blockAlign;
  }

  static async open(file: string): Promise<WavReader> {
    const fh = await open(file, 'r');
    try {
      const { size } = await fh.stat();
      const layout = await parseWavAsync(size, async (pos, len) => {
        const b = Buffer.alloc(len);
        const { bytesRead } = await fh.read(b, 0, len, pos);
        return b.subarray(0, bytesRead);
      });
      return new WavReader(file, fh, layout);
    } catch (e) {
      await fh.close();
      if (e instanceof WavFormatError) throw new WavFormatError(e.message, { file, cause: e });
      throw e;
    }
  }

  get sampleRate(): number {
    return this.layout.format.sampleRate;
  }
  get channelCount(): number {
    return this.layout.format.channels;
  }
  get frames(): number {
    return this.layout.frames;
  }
  /** Duration in seconds. */
  get duration(): number {
    return this.layout.frames / this.layout.format.sampleRate;
  }
  get sampleFormat(): WavSampleFormat {
    return this.layout.format.sampleFormat;
  }

  /**
   * Read `frameCount` frames from `startFrame` as planar channels. The window is clipped to the
   * file: arrays are shorter near the end and empty past it.
   */
  async read(startFrame: number, frameCount: number): Promise<Float32Array[]> {
    if (this.closed) throw new Error(`WavReader for ${this.file} is closed`);
    if (!Number.isInteger(startFrame) || startFrame < 0) throw new RangeError(`startFrame must be a non-negative integer, got ${startFrame}`);
    if (!Number.isInteger(frameCount) || frameCount < 0) throw new RangeError(`frameCount must be a non-negative integer, got ${frameCount}`);
    const { format, dataOffset } = this.layout;
    const n = Math.max(0, Math.min(frameCount, this.layout.frames - startFrame));
    const out = Array.from({ length: format.channels }, () => new Float32Array(n));
    if (n === 0) return out;
    const bytes = n * format.blockAlign;
    const buf = Buffer.allocUnsafeSlow(bytes);
    let got = 0;
    while (got < bytes) {
      const { bytesRead } = await this.fh.read(buf, got, bytes - got, dataOffset + startFrame * format.blockAlign + got);
      if (bytesRead === 0) throw new WavFormatError('file ended before its data chunk did', { file: this.file });
      got += bytesRead;
    }
    decodeFrames(buf, format.sampleFormat, format.channels, n, out);
    return out;
  }

  /** Iterate the file in windows of `windowFrames` frames. */
  async *windows(windowFrames: number, startFrame = 0, endFrame = this.frames): AsyncGenerator<{ startFrame: number; channels: Float32Array[] }> {
    if (!Number.isInteger(windowFrames) || windowFrames < 1) throw new RangeError('windowFrames must be a positive integer');
    const end = Math.min(endFrame, this.frames);
    for (let s = startFrame; s < end; s += windowFrames) {
      yield { startFrame: s, channels: await this.read(s, Math.min(windowFrames, end - s)) };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }
}
