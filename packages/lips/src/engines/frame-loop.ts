/**
 * The loop both engines share: decode the video frame by frame, let the engine change the mouth
 * region of frames that have a face, encode every frame. Checks the AbortSignal between frames
 * and reports progress per frame.
 */
import { reportProgress, throwIfAborted } from '@dub/core';
import type { FaceFrame } from '../face/mouth-region.js';
import type { RgbImage } from '../image/rgb-image.js';
import type { YuvImage } from './mouth-warp.js';
import { readFrames } from '../video/frame-reader.js';
import { FrameWriter } from '../video/frame-writer.js';
import type { VideoInfo } from '../video/video-info.js';
import type { FaceTrack, LipsContext, LipsRenderOptions, LipsRenderResult } from '../types.js';

export type FrameOp = (frame: RgbImage, face: FaceFrame, index: number) => Promise<boolean> | boolean;

/** Whether frames of this size can travel as yuv420p (the engine has a yuv op, the size is even). */
export function yuvTransport(video: Pick<VideoInfo, 'width' | 'height'>, opYuv: unknown): boolean {
  return typeof opYuv === 'function' && video.width % 2 === 0 && video.height % 2 === 0;
}

/**
 * `opYuv`, when given and the size is even, replaces `op`: frames are read and written as
 * yuv420p, never converted to RGB.
 */
export async function transformFrames(video: VideoInfo, faces: FaceTrack, output: string, opts: LipsRenderOptions, op: FrameOp, ctx: LipsContext, opYuv?: (frame: YuvImage, face: FaceFrame, index: number) => boolean): Promise<LipsRenderResult> {
  const yuv = yuvTransport(video, opYuv);
  const pixelFormat = yuv ? ('yuv420p' as const) : ('rgb24' as const);
  const frameOp: FrameOp = yuv ? (frame, face, i) => opYuv!(frame, face, i) : op;
  const writer = FrameWriter.start(output, { ...opts.media, width: video.width, height: video.height, rate: video.rate, crf: opts.encode.crf, preset: opts.encode.preset, pixelFormat }, ctx);
  let index = 0;
  let changed = 0;
  let engineMs = 0;
  const total = Math.max(1, faces.frameCount);
  try {
    for await (const frame of readFrames(video.file, { ...opts.media, width: video.width, height: video.height, pixelFormat }, ctx)) {
      throwIfAborted(ctx.signal);
      const face = faces.frames[Math.min(index, faces.frames.length - 1)] ?? null;
      if (face) {
        const t0 = performance.now();
        if (await frameOp(frame, face, index)) changed++;
        engineMs += performance.now() - t0;
      }
      await writer.write(frame);
      index++;
      if (index % 5 === 0) reportProgress(ctx, 'lips', index / total);
    }
    await writer.close();
  } catch (e) {
    await writer.abort();
    throw e;
  }
  reportProgress(ctx, 'lips', 1);
  return { file: output, frames: index, changedFrames: changed, engineMs };
}
