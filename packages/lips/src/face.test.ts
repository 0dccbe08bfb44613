import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionCache } from '@dub/onnx';
import { anchorLayers, BLAZEFACE_STRIDES, generateAnchors } from './face/anchors.js';
import { BlazeFaceDetector } from './face/blazeface.js';
import { KEYPOINT, weightedNms, type Detection } from './face/decode.js';
import { trackFaces } from './face/face-track.js';
import { OneEuroFilter } from './face/one-euro.js';
import { readFrames } from './video/frame-reader.js';
import { videoInfo } from './video/video-info.js';
import { requireBlazeFace, testsrc, TALKING_HEAD, trim, VERTICAL } from './media.test-helper.js';
import { describeWithMedia } from '../../../test/support/media.js';

describe('BlazeFace anchors and decoding', () => {
  it('896 anchors for both models, 16x16x2 then 8x8x6, cell centres', () => {
    for (const size of [128, 256] as const) {
      const layers = anchorLayers(size, BLAZEFACE_STRIDES[size]);
      expect(layers).toEqual([
        { cells: 16, perCell: 2 },
        { cells: 8, perCell: 6 },
      ]);
      const a = generateAnchors(layers);
      expect(a).toHaveLength(896);
      expect(a[0]).toEqual({ x: 1 / 32, y: 1 / 32 });
      expect(a[1]).toEqual({ x: 1 / 32, y: 1 / 32 });
      expect(a[2]).toEqual({ x: 3 / 32, y: 1 / 32 });
      expect(a[512]).toEqual({ x: 1 / 16, y: 1 / 16 });
      expect(a[895]).toEqual({ x: 15 / 16, y: 15 / 16 });
    }
  });

  it('weighted NMS merges overlapping candidates into their score-weighted mean and keeps separate faces', () => {
    const d = (cx: number, score: number): Detection => ({ cx, cy: 0.5, w: 0.2, h: 0.2, score, keypoints: Array.from({ length: 6 }, () => ({ x: cx, y: 0.5 })) });
    const out = weightedNms([d(0.5, 0.9), d(0.52, 0.6), d(0.1, 0.7)]);
    expect(out).toHaveLength(2);
    expect(out[0].score).toBe(0.9);
    expect(out[0].cx).toBeCloseTo((0.5 * 0.9 + 0.52 * 0.6) / 1.5, 6);
    expect(out[0].keypoints[3].x).toBeCloseTo(out[0].cx, 6);
    expect(out[1].cx).toBeCloseTo(0.1, 9);
  });

  it('One Euro filter: follows a constant exactly, smooths jitter, resets', () => {
    const f = new OneEuroFilter();
    for (let i = 0; i < 10; i++) expect(f.filter([5, 7], 1 / 30)).toEqual([5, 7]);
    let maxDev = 0;
    for (let i = 0; i < 60; i++) maxDev = Math.max(maxDev, Math.abs(f.filter([100 + (i % 2 ? 3 : -3)], 1 / 30)[0] - 100));
    const g = new OneEuroFilter();
    g.filter([100], 1 / 30);
    expect(Math.abs(g.filter([103], 1 / 30)[0] - 100)).toBeLessThan(3);
    f.reset();
    expect(f.filter([1], 1 / 30)).toEqual([1]);
    expect(maxDev).toBeGreaterThan(0);
  });
});

describeWithMedia(['talking-head-480.mp4', 'talking-head-vertical.mp4'], 'face detection and tracking on real talking heads', () => {
  let dir: string;
  let head: string;
  let vertical: string;
  let noFace: string;
  const sessions = new SessionCache({ threads: 1 });
  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-face-'));
    [head, vertical, noFace] = await Promise.all([
      trim(TALKING_HEAD, path.join(dir, 'head.mp4'), 5, 3, '480:480'),
      trim(VERTICAL, path.join(dir, 'vertical.mp4'), 0.5, 2, '360:540'),
      testsrc(path.join(dir, 'testsrc.mp4'), 2),
    ]);
  });
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  async function firstFrame(file: string) {
    const info = await videoInfo(file);
    const frames = readFrames(file, { width: info.width, height: info.height });
    const f = (await frames.next()).value!;
    await frames.return(undefined);
    return f;
  }

  for (const range of ['full', 'short'] as const) {
    it(`finds the face of talking-head-480 (${range} range): box around the centre, mouth below the eyes`, async () => {
      const det = await BlazeFaceDetector.load({ range, sessions });
      const img = await firstFrame(head);
      const faces = await det.detect(img);
      expect(faces).toHaveLength(1);
      const f = faces[0];
      expect(f.score).toBeGreaterThan(0.7);
      const cx = f.box.x + f.box.w / 2;
      const cy = f.box.y + f.box.h / 2;
      expect(Math.abs(cx - 240)).toBeLessThan(40);
      expect(Math.abs(cy - 270)).toBeLessThan(60);
      expect(f.box.w).toBeGreaterThan(180);
      expect(f.box.w).toBeLessThan(340);
      const re = f.keypoints[KEYPOINT.rightEye];
      const le = f.keypoints[KEYPOINT.leftEye];
      const m = f.keypoints[KEYPOINT.mouth];
      expect(re.x).toBeLessThan(le.x); // the person's right eye is on the image's left
      expect(m.y).toBeGreaterThan(Math.max(re.y, le.y) + 60);
      expect(m.x).toBeGreaterThan(re.x);
      expect(m.x).toBeLessThan(le.x);
      expect(f.keypoints[KEYPOINT.nose].y).toBeGreaterThan(re.y);
      expect(f.keypoints[KEYPOINT.nose].y).toBeLessThan(m.y);
    });
  }

  it('finds the small face of the vertical clip (full range) near the top centre', async () => {
    const det = await BlazeFaceDetector.load({ range: 'full', sessions });
    const img = await firstFrame(vertical);
    const [f] = await det.detect(img);
    expect(f).toBeDefined();
    const cx = f.box.x + f.box.w / 2;
    const cy = f.box.y + f.box.h / 2;
    expect(cx / img.width).toBeGreaterThan(0.4);
    expect(cx / img.width).toBeLessThan(0.65);
    expect(cy / img.height).toBeLessThan(0.2);
    expect(f.keypoints[KEYPOINT.mouth].y).toBeGreaterThan(f.keypoints[KEYPOINT.rightEye].y);
  });

  it('finds no face in an ffmpeg testsrc clip; its track is all empty', async () => {
    const det = await BlazeFaceDetector.load({ range: 'full', sessions });
    expect(await det.detect(await firstFrame(noFace))).toEqual([]);
    const track = await trackFaces(await videoInfo(noFace), { detector: det, detectEvery: 5 });
    expect(track.frameCount).toBe(50);
    expect(track.facesFound).toBe(0);
    expect(track.frames.every((f) => f === null)).toBe(true);
  });

  it('tracks the talking head: a face in every frame, a stable mouth box, detection on every Nth frame', async () => {
    const info = await videoInfo(head);
    const full = await BlazeFaceDetector.load({ range: 'full', sessions });
    const short = await BlazeFaceDetector.load({ range: 'short', sessions });
    const track = await trackFaces(info, { detector: full, trackingDetector: short, detectEvery: 3, refine: false });
    expect(track.frameCount).toBe(90);
    expect(track.detectedFrames).toBe(30);
    expect(track.facesFound).toBe(30);
    expect(track.frames.every((f) => f !== null)).toBe(true);
    let maxJump = 0;
    for (let i = 1; i < track.frames.length; i++) {
      const a = track.frames[i - 1]!.mouthCenter;
      const b = track.frames[i]!.mouthCenter;
      maxJump = Math.max(maxJump, Math.hypot(a.x - b.x, a.y - b.y));
    }
    expect(maxJump).toBeLessThan(0.02 * info.width);
    const m = track.frames[45]!;
    expect(m.mouth.x).toBeGreaterThan(100);
    expect(m.mouth.x + m.mouth.w).toBeLessThan(400);
    expect(m.mouthCenter.y).toBeGreaterThan(m.face.y + m.face.h / 2);
  });

  it('on a stride of 8 frames, refined where the face moves: within 0.1 eye distance of detecting every frame, on fewer detections', async () => {
    const info = await videoInfo(head);
    const full = await BlazeFaceDetector.load({ range: 'full', sessions });
    const every = await trackFaces(info, { detector: full, detectEvery: 1, refine: false });
    const strided = await trackFaces(info, { detector: full, detectEvery: 8 });
    expect(strided.frameCount).toBe(90);
    // key frames 0, 8, ..., 88 and the frames refinement added between them
    expect(strided.detectedFrames - strided.refinedFrames!).toBe(12);
    expect(strided.detectedFrames).toBeLessThan(every.detectedFrames / 2);
    let sum = 0;
    for (let i = 0; i < 90; i++) {
      const a = every.frames[i]!;
      const b = strided.frames[i]!;
      sum += Math.hypot(a.mouthCenter.x - b.mouthCenter.x, a.mouthCenter.y - b.mouthCenter.y) / a.eyeDistance;
    }
    expect(sum / 90).toBeLessThan(0.1);
  });

  it('tracks the vertical clip with the turbo settings (short-range tracking, small analysis frames)', async () => {
    const info = await videoInfo(vertical);
    const full = await BlazeFaceDetector.load({ range: 'full', sessions });
    const short = await BlazeFaceDetector.load({ range: 'short', sessions });
    const track = await trackFaces(info, { detector: full, trackingDetector: short, detectEvery: 4, analysisMaxSide: 360 });
    expect(track.facesFound / track.detectedFrames).toBeGreaterThan(0.9);
    const f = track.frames[20]!;
    expect(f.mouthCenter.x / info.width).toBeGreaterThan(0.4);
    expect(f.mouthCenter.x / info.width).toBeLessThan(0.65);
  });
});
