/**
 * The main face of every frame, from detections on every Nth frame: frames are decoded scaled to
 * an analysis size, the detector runs on a region around the last face (tracking) and on the
 * whole frame when that finds nothing (then on overlapping tiles, for small faces), the largest
 * face wins, the geometry is interpolated between detected frames and smoothed with a One Euro
 * filter. A gap of more than half a detection interval with no face leaves frames faceless.
 */
import { reportProgress, resolveContext } from '@dub/core';
import type { MediaToolOptions } from '@dub/media';
import type { FaceDetection } from './blazeface.js';
import { OneEuroFilter, type OneEuroOptions } from './one-euro.js';
import { frameOf, paramsOf, type FaceParams } from './mouth-region.js';
import type { Rect, RgbImage } from '../image/rgb-image.js';
import { readFrames } from '../video/frame-reader.js';
import type { VideoInfo } from '../video/video-info.js';
import type { FaceTrack, LipsContext } from '../types.js';

export interface FaceDetectorLike {
  detect(img: RgbImage, region?: Rect): Promise<FaceDetection[]>;
}

export interface TrackFacesOptions extends MediaToolOptions {
  /** Detector for whole frames and tiles. */
  detector: FaceDetectorLike;
  /** Detector for the region around the last face (default: `detector`). */
  trackingDetector?: FaceDetectorLike;
  /** Detect on every Nth frame (default 2). */
  detectEvery?: number;
  /** Longest side of the frames the detector sees (default 640). */
  analysisMaxSide?: number;
  /** Side of the tracking region in face sizes (default 2.4). */
  trackingRegion?: number;
  smoothing?: OneEuroOptions;
}

export async function trackFaces(video: VideoInfo, opts: TrackFacesOptions, context: Partial<LipsContext> = {}): Promise<FaceTrack> {
  const ctx = resolveContext(context);
  const withLimit = context.withLimit;
  const every = Math.max(1, Math.round(opts.detectEvery ?? 2));
  const maxSide = opts.analysisMaxSide ?? 640;
  const scale = Math.min(1, maxSide / Math.max(video.width, video.height));
  const aw = Math.max(2, Math.round(video.width * scale));
  const ah = Math.max(2, Math.round(video.height * scale));
  const back = { x: video.width / aw, y: video.height / ah };
  const tracker = opts.trackingDetector ?? opts.detector;
  const regionSide = opts.trackingRegion ?? 2.4;
  const keys: (FaceParams | null)[] = [];
  let last: FaceParams | null = null;
  let misses = 0;
  let detectionMs = 0;
  const keyTotal = Math.max(1, Math.ceil(video.frameCount / every));
  const run = (fn: () => Promise<FaceDetection[]>): Promise<FaceDetection[]> => (withLimit ? withLimit('gpu', fn) : fn());

  for await (const img of readFrames(video.file, { ...opts, width: aw, height: ah, every }, ctx)) {
    const t0 = performance.now();
    let faces: FaceDetection[] = [];
    if (last) {
      const side = last[2] * regionSide * (aw / video.width);
      const cx = last[0] / back.x;
      const cy = last[1] / back.y;
      faces = await run(() => tracker.detect(img, { x: cx - side / 2, y: cy - side / 2, w: side, h: side }));
    }
    if (!faces.length) faces = await run(() => opts.detector.detect(img));
    if (!faces.length && misses % 4 === 0) faces = await detectInTiles(img, (r) => run(() => opts.detector.detect(img, r)));
    detectionMs += performance.now() - t0;
    const best = faces.sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)[0];
    if (best) {
      // analysis pixels -> video pixels (the same factor on both axes up to rounding)
      const p = paramsOf(best, 1);
      last = [p[0] * back.x, p[1] * back.y, p[2] * back.x, p[3] * back.x, p[4] * back.y, p[5] * back.x];
      misses = 0;
    } else {
      last = null;
      misses++;
    }
    keys.push(last);
    reportProgress(ctx, 'face_detection', keys.length / keyTotal);
  }

  const frameCount = Math.max(video.frameCount, keys.length ? (keys.length - 1) * every + 1 : 0);
  const filter = new OneEuroFilter(opts.smoothing);
  const dt = 1 / (video.fps || 25);
  const frames: FaceTrack['frames'] = [];
  for (let i = 0; i < frameCount; i++) {
    const k = Math.floor(i / every);
    const t = (i - k * every) / every;
    const a = keys[k];
    const b = keys[k + 1];
    let p: readonly number[] | null = null;
    if (a && b) p = a.map((v, j) => v + (b[j] - v) * t);
    else if (a && (t <= 0.5 || b === undefined)) p = a;
    else if (b && t > 0.5) p = b;
    if (!p) {
      filter.reset();
      frames.push(null);
      continue;
    }
    frames.push(frameOf(filter.filter(p, dt)));
  }
  return { width: video.width, height: video.height, fps: video.fps, frameCount, frames, detectedFrames: keys.length, facesFound: keys.filter(Boolean).length, detectionMs };
}

/** Overlapping square tiles of half the short side (faces too small for the whole frame). */
async function detectInTiles(img: RgbImage, detect: (r: Rect) => Promise<FaceDetection[]>): Promise<FaceDetection[]> {
  const side = Math.min(img.width, img.height) / 2;
  if (side < 64) return [];
  const step = side / 2;
  const out: FaceDetection[] = [];
  for (let y = 0; y + side <= img.height + 1; y += step) {
    for (let x = 0; x + side <= img.width + 1; x += step) out.push(...(await detect({ x, y, w: side, h: side })));
  }
  return out;
}
