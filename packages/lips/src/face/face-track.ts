/**
 * The main face of every frame, from detections on a stride with interpolation:
 *
 * 1. Key frames: every Nth frame (`detectEvery`; the profiles set N from a time, `detectSeconds`)
 *    is decoded scaled to an analysis size (ffmpeg drops the others before converting them). The
 *    detector runs on a region around the last face (tracking), on the whole frame when that finds
 *    nothing, then on overlapping tiles (small faces); the largest face wins.
 * 2. Refinement: an interval between two key frames is refined when the face moves or changes
 *    size across it (`TRACKING.move`, `TRACKING.scale`), appears or disappears in it, or scores
 *    low at either end (`TRACKING.lowScore`). A second decode delivers only those intervals'
 *    frames; each is bisected: the middle frame is detected, and where it agrees with the
 *    interpolation of its ends (`TRACKING.agree`) the halves are interpolated, else each half is
 *    refined again, down to single frames. A still talking head costs one detection per key
 *    frame; a moving one about two; a cut or a face leaving the picture is found to the frame.
 * 3. The geometry is interpolated between detected frames and smoothed with a One Euro filter. A
 *    gap of more than half an interval with no face at one end leaves frames faceless.
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

/**
 * When an interval between detections is refined (fixed from the warp's geometry, not fitted to
 * any recording): the mouth box is 1.5 eye distances wide and the jaw moves by up to 0.2 of one,
 * so 0.05 of an eye distance (a pixel or two on a 480 px talking head) is an error nobody sees.
 */
export const TRACKING = Object.freeze({
  /** Refine when the mouth or the face centre moves by more than this many eye distances across the interval. */
  move: 0.1,
  /** ... or the eye distance changes by more than this fraction. */
  scale: 0.1,
  /** ... or a face at either end scores under this (the detector's threshold is 0.6 by default). */
  lowScore: 0.75,
  /** A middle detection within this many eye distances (and this fraction of size) of the interpolation ends the refinement. */
  agree: 0.05,
});

export interface TrackFacesOptions extends MediaToolOptions {
  /** Detector for whole frames and tiles. */
  detector: FaceDetectorLike;
  /** Detector for the region around the last face (default: `detector`). */
  trackingDetector?: FaceDetectorLike;
  /** Detect on every Nth frame (default 2), refining where the face moves. */
  detectEvery?: number;
  /** Refine intervals where the face moves, appears or scores low (default true); false: key frames only. */
  refine?: boolean;
  /** Longest side of the frames the detector sees (default 640). */
  analysisMaxSide?: number;
  /** Side of the tracking region in face sizes (default 2.4). */
  trackingRegion?: number;
  smoothing?: OneEuroOptions;
}

interface Key {
  p: FaceParams | null;
  score: number;
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
  const keys = new Map<number, Key>();
  let detectionMs = 0;
  let refined = 0;
  const keyTotal = Math.max(1, Math.ceil(video.frameCount / every));
  const run = (fn: () => Promise<FaceDetection[]>): Promise<FaceDetection[]> => (withLimit ? withLimit('gpu', fn) : fn());

  /** The largest face of `img` (video pixels), looking around `near` first; tiles when `tiles`. */
  const detect = async (img: RgbImage, near: FaceParams | null, tiles: boolean): Promise<Key> => {
    const t0 = performance.now();
    let faces: FaceDetection[] = [];
    if (near) {
      const side = near[2] * regionSide * (aw / video.width);
      const cx = near[0] / back.x;
      const cy = near[1] / back.y;
      faces = await run(() => tracker.detect(img, { x: cx - side / 2, y: cy - side / 2, w: side, h: side }));
    }
    if (!faces.length) faces = await run(() => opts.detector.detect(img));
    if (!faces.length && tiles) faces = await detectInTiles(img, (r) => run(() => opts.detector.detect(img, r)));
    detectionMs += performance.now() - t0;
    const best = faces.sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)[0];
    if (!best) return { p: null, score: 0 };
    // analysis pixels -> video pixels (the same factor on both axes up to rounding)
    const p = paramsOf(best, 1);
    return { p: [p[0] * back.x, p[1] * back.y, p[2] * back.x, p[3] * back.x, p[4] * back.y, p[5] * back.x], score: best.score };
  };

  // 1. key frames
  let last: FaceParams | null = null;
  let misses = 0;
  let index = 0;
  for await (const img of readFrames(video.file, { ...opts, width: aw, height: ah, every }, ctx)) {
    const k = await detect(img, last, misses % 4 === 0);
    keys.set(index, k);
    last = k.p;
    misses = k.p ? 0 : misses + 1;
    index += every;
    reportProgress(ctx, 'face_detection', (0.9 * keys.size) / keyTotal);
  }
  const keyFrames = [...keys.keys()];

  // 2. refinement of the intervals where the face moves, appears or disappears, or scores low
  const flagged: { start: number; end: number }[] = [];
  if (opts.refine !== false) {
    for (let i = 0; i + 1 < keyFrames.length; i++) {
      const a = keyFrames[i]!;
      const b = keyFrames[i + 1]!;
      if (b - a > 1 && needsRefining(keys.get(a)!, keys.get(b)!)) flagged.push({ start: a + 1, end: b });
    }
  }
  if (flagged.length) {
    const buffered = new Map<number, RgbImage>();
    let span = 0;
    let at = flagged[0]!.start;
    const refineInterval = async (a: number, b: number): Promise<void> => {
      if (b - a <= 1) return;
      const ka = keys.get(a)!;
      const kb = keys.get(b)!;
      if (!needsRefining(ka, kb)) return;
      const m = Math.floor((a + b) / 2);
      const km = await detect(buffered.get(m)!, (m - a <= b - m ? ka.p ?? kb.p : kb.p ?? ka.p), false);
      keys.set(m, km);
      refined++;
      if (ka.p && kb.p && km.p && agrees(km.p, ka.p, kb.p, (m - a) / (b - a))) return;
      await refineInterval(a, m);
      await refineInterval(m, b);
    };
    for await (const img of readFrames(video.file, { ...opts, width: aw, height: ah, spans: flagged }, ctx)) {
      if (at >= flagged[span]!.end) at = flagged[++span]!.start;
      buffered.set(at, img);
      if (at === flagged[span]!.end - 1) {
        await refineInterval(flagged[span]!.start - 1, flagged[span]!.end);
        buffered.clear();
        reportProgress(ctx, 'face_detection', 0.9 + (0.1 * (span + 1)) / flagged.length);
      }
      at++;
    }
  }

  // 3. every frame: interpolated between the detected frames around it, smoothed
  const detected = [...keys.keys()].sort((x, y) => x - y);
  const frameCount = Math.max(video.frameCount, detected.length ? detected.at(-1)! + 1 : 0);
  const filter = new OneEuroFilter(opts.smoothing);
  const dt = 1 / (video.fps || 25);
  const frames: FaceTrack['frames'] = [];
  let j = 0;
  for (let i = 0; i < frameCount; i++) {
    while (j + 1 < detected.length && detected[j + 1]! <= i) j++;
    const fa = detected[j];
    const fb = detected[j + 1];
    const a = fa !== undefined && fa <= i ? keys.get(fa)!.p : null;
    const b = fb !== undefined ? keys.get(fb)!.p : undefined;
    const t = fa !== undefined && fb !== undefined ? (i - fa) / (fb - fa) : 0;
    let p: readonly number[] | null = null;
    if (a && b) p = a.map((v, k) => v + (b[k]! - v) * t);
    else if (a && (t <= 0.5 || b === undefined)) p = a;
    else if (b && t > 0.5) p = b;
    if (!p) {
      filter.reset();
      frames.push(null);
      continue;
    }
    frames.push(frameOf(filter.filter(p, dt)));
  }
  reportProgress(ctx, 'face_detection', 1);
  const found = [...keys.values()].filter((k) => k.p).length;
  return { width: video.width, height: video.height, fps: video.fps, frameCount, frames, detectedFrames: keys.size, facesFound: found, detectionMs, refinedFrames: refined };
}

/** Whether the face's geometry (or presence, or confidence) changes across an interval. */
function needsRefining(a: Key, b: Key): boolean {
  if (!a.p && !b.p) return false;
  if (!a.p || !b.p) return true;
  if (Math.min(a.score, b.score) < TRACKING.lowScore) return true;
  return !within(a.p, b.p, TRACKING.move, TRACKING.scale);
}

/** Whether the detection `m` at fraction `t` of the interval matches the interpolation of its ends. */
function agrees(m: FaceParams, a: FaceParams, b: FaceParams, t: number): boolean {
  return within(m, a.map((v, k) => v + (b[k]! - v) * t) as FaceParams, TRACKING.agree, TRACKING.agree);
}

/** Mouth and face centre within `move` eye distances, eye distance and face size within `scale`. */
function within(a: FaceParams, b: FaceParams, move: number, scale: number): boolean {
  const d = (a[5] + b[5]) / 2;
  if (Math.hypot(a[3] - b[3], a[4] - b[4]) > move * d) return false;
  if (Math.hypot(a[0] - b[0], a[1] - b[1]) > move * d) return false;
  if (Math.abs(a[5] - b[5]) > scale * d) return false;
  return Math.abs(a[2] - b[2]) <= scale * ((a[2] + b[2]) / 2);
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
