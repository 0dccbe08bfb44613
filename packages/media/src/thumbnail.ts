/** A poster frame: ffmpeg decodes one frame (rotation applied), sharp resizes and encodes JPEG. */
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg } from './ffmpeg.js';
import { probe } from './probe.js';
import { ffTime } from './seconds.js';
import type { MediaToolOptions } from './tools.js';

export interface ThumbnailOptions extends MediaToolOptions {
  /** Seconds into the video (default 10% of the duration). */
  time?: number;
  /** Output width in pixels, height keeps the aspect ratio (default: the frame's width; never enlarged). */
  width?: number;
  /** JPEG quality 1-100 (default 82). */
  quality?: number;
  timeoutMs?: number;
}

export interface ThumbnailResult {
  file: string;
  width: number;
  height: number;
  /** Seconds into the video the frame was taken at. */
  time: number;
}

export async function thumbnail(video: string, outFile: string, opts: ThumbnailOptions = {}, context: PartialContext = {}): Promise<ThumbnailResult> {
  const ctx = resolveContext(context);
  let time = opts.time;
  if (time === undefined) time = (await probe(video, opts, ctx)).duration * 0.1;
  let png = await grabFrame(video, time, opts, ctx);
  if (png.length === 0 && time > 0) {
    // Past the last decodable frame: take the first one.
    time = 0;
    png = await grabFrame(video, 0, opts, ctx);
  }
  if (png.length === 0) throw new DubError('unsupported_media', `no video frame could be decoded from ${video}`);
  let img = sharp(png);
  if (opts.width !== undefined) img = img.resize({ width: opts.width, withoutEnlargement: true });
  const { data, info } = await img.jpeg({ quality: opts.quality ?? 82, mozjpeg: true }).toBuffer({ resolveWithObject: true });
  await writeFile(outFile, data);
  return { file: outFile, width: info.width, height: info.height, time };
}

async function grabFrame(video: string, time: number, opts: ThumbnailOptions, ctx: PartialContext): Promise<Buffer> {
  const args = ['-ss', ffTime(time), '-i', video, '-map', '0:v:0', '-frames:v', '1', '-an', '-sn', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'];
  const res = await runFfmpeg(args, { ...opts, stage: 'thumbnail', progress: false, stdout: 'capture' }, ctx);
  return res.stdout;
}
