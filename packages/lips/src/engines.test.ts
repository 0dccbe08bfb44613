import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { opennessFromLevels } from './audio/openness.js';
import { frameLevels, speechWav } from './audio/speech-envelope.js';
import { warpMouth } from './engines/mouth-warp.js';
import { VisemeWarpEngine } from './engines/viseme-warp.js';
import { faceTensor, Wav2LipEngine, WAV2LIP_SIZE } from './engines/wav2lip.js';
import { BlazeFaceDetector } from './face/blazeface.js';
import { trackFaces } from './face/face-track.js';
import { clipRect, cloneImage, createImage, scaleRect, type RgbImage } from './image/rgb-image.js';
import { LIPS_CONFORMANCE_CHECKS, type LipsConformanceFixture } from './testing/lips-conformance.js';
import { readFrames } from './video/frame-reader.js';
import { videoInfo, type VideoInfo } from './video/video-info.js';
import type { FaceTrack, LipsRenderOptions } from './types.js';
import { dubbedSpeech, isLoudAt, requireBlazeFace, TALKING_HEAD, TINY_WAV2LIP, trim } from './media.test-helper.js';
import { describeWithMedia } from '../../../test/support/media.js';

describeWithMedia(['talking-head-480.mp4'], 'lips engines on a real talking head', () => {
  let dir: string;
  let video: VideoInfo;
  let faces: FaceTrack;
  let speech: string;
  const sessions = new SessionCache({ threads: 1 });
  const ctx = resolveContext();

  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-engines-'));
    const clip = await trim(TALKING_HEAD, path.join(dir, 'head.mp4'), 8, 3, '240:240');
    speech = await dubbedSpeech(path.join(dir, 'dub.wav'), 3);
    video = await videoInfo(clip);
    const detector = await BlazeFaceDetector.load({ sessions });
    faces = await trackFaces(video, { detector, detectEvery: 2 });
  });
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  async function frameAt(file: string, index: number): Promise<RgbImage> {
    let i = 0;
    for await (const f of readFrames(file, { width: video.width, height: video.height })) if (i++ === index) return f;
    throw new Error(`no frame ${index}`);
  }

  function renderOpts(): LipsRenderOptions {
    return { workScale: 1, encode: { crf: 10, preset: 'ultrafast' }, tmpDir: dir, media: {} };
  }

  /** Mean absolute difference over `rect` of two frames. */
  function meanDiff(a: RgbImage, b: RgbImage, rect: { x: number; y: number; w: number; h: number }): number {
    const r = clipRect(rect, a.width, a.height);
    let s = 0;
    for (let y = r.y; y < r.y + r.h; y++) for (let x = r.x; x < r.x + r.w; x++) for (let c = 0; c < 3; c++) s += Math.abs(a.data[(y * a.width + x) * 3 + c] - b.data[(y * a.width + x) * 3 + c]);
    return s / (r.w * r.h * 3);
  }

  function pearson(a: number[], b: number[]): number {
    const n = a.length;
    const ma = a.reduce((s, v) => s + v, 0) / n;
    const mb = b.reduce((s, v) => s + v, 0) / n;
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < n; i++) {
      ab += (a[i] - ma) * (b[i] - mb);
      aa += (a[i] - ma) ** 2;
      bb += (b[i] - mb) ** 2;
    }
    return ab / Math.sqrt(aa * bb);
  }

  describe('viseme-warp', () => {
    it('warpMouth changes pixels only inside the mouth box, more when wider open, none at 0', async () => {
      const src = await frameAt(video.file, 10);
      const face = faces.frames[10]!;
      const box = clipRect(face.mouth, src.width, src.height);
      const changedBy = (amount: number, scale = 1): { outside: number; inside: number } => {
        const f = cloneImage(src);
        warpMouth(f, face, amount, scale);
        let outside = 0;
        let inside = 0;
        for (let y = 0; y < f.height; y++) {
          for (let x = 0; x < f.width; x++) {
            const o = (y * f.width + x) * 3;
            const d = Math.abs(f.data[o] - src.data[o]) + Math.abs(f.data[o + 1] - src.data[o + 1]) + Math.abs(f.data[o + 2] - src.data[o + 2]);
            if (x >= box.x && x < box.x + box.w && y >= box.y && y < box.y + box.h) inside += d;
            else outside += d;
          }
        }
        return { outside, inside };
      };
      expect(changedBy(0)).toEqual({ outside: 0, inside: 0 });
      const half = changedBy(0.5);
      const full = changedBy(1);
      expect(full.outside).toBe(0);
      expect(half.outside).toBe(0);
      expect(full.inside).toBeGreaterThan(half.inside * 1.3);
      expect(changedBy(-0.6).inside).toBeGreaterThan(0);
      expect(changedBy(-0.6).outside).toBe(0);
      const turbo = changedBy(1, 0.5);
      expect(turbo.outside).toBe(0);
      expect(turbo.inside).toBeGreaterThan(full.inside * 0.5);
      // opening darkens the middle of the mouth
      const f = cloneImage(src);
      warpMouth(f, face, 1);
      const mid = { x: face.mouthCenter.x - 0.15 * face.eyeDistance, y: face.mouthCenter.y, w: 0.3 * face.eyeDistance, h: 0.15 * face.eyeDistance };
      const lum = (img: RgbImage): number => meanDiff(img, createImage(img.width, img.height), mid);
      expect(lum(f)).toBeLessThan(lum(src) - 5);
    });

    it('renders a clip whose mouth-region change follows the dubbed speech: open when loud, unchanged when silent', async () => {
      const engine = new VisemeWarpEngine();
      const out = path.join(dir, 'warp.mp4');
      const r = await engine.render(video, { file: speech }, faces, out, renderOpts(), ctx);
      expect(r.frames).toBe(90);
      const info = await videoInfo(out);
      expect([info.width, info.height, info.fps, info.frameCount]).toEqual([video.width, video.height, video.fps, 90]);
      const levels = opennessFromLevels(await frameLevels(await speechWav(speech, dir, 'check', {}), video.fps, 90));
      const change: number[] = [];
      const outside: number[] = [];
      const src = readFrames(video.file, { width: video.width, height: video.height });
      let i = 0;
      for await (const f of readFrames(out, { width: video.width, height: video.height })) {
        const s = (await src.next()).value!;
        const face = faces.frames[i]!;
        change.push(meanDiff(f, s, face.mouth));
        // a band above the eyes: far from the mouth box
        outside.push(meanDiff(f, s, { x: face.face.x, y: face.face.y, w: face.face.w, h: face.face.h * 0.25 }));
        i++;
      }
      await src.return(undefined);
      expect(pearson(change, Array.from(levels))).toBeGreaterThan(0.8);
      const loud = change.filter((_, k) => isLoudAt((k + 0.5) / 30) && levels[k] > 0.5);
      const silent = change.filter((_, k) => !isLoudAt((k + 0.5) / 30) && levels[k] === 0);
      expect(loud.length).toBeGreaterThan(20);
      expect(silent.length).toBeGreaterThan(15);
      const mean = (x: number[]): number => x.reduce((s, v) => s + v, 0) / x.length;
      expect(mean(loud)).toBeGreaterThan(mean(silent) + 3);
      expect(Math.max(...silent)).toBeLessThan(1.5); // codec noise only
      expect(Math.max(...outside)).toBeLessThan(1.5);
    });

    const fixture = (): LipsConformanceFixture => ({ video, speech: { file: speech }, faces, tmpDir: dir });
    for (const c of LIPS_CONFORMANCE_CHECKS) it(`conformance: ${c.name}`, () => c.run(async () => new VisemeWarpEngine(), fixture()));
  });

  describe('wav2lip on a tiny model with the same inputs and output', () => {
    it('face tensor: BGR planes, lower half of the first three masked, reference after', () => {
      const crop = createImage(WAV2LIP_SIZE, WAV2LIP_SIZE);
      for (let p = 0; p < WAV2LIP_SIZE * WAV2LIP_SIZE; p++) crop.data.set([10, 20, 30], p * 3);
      const t = faceTensor(crop);
      const plane = WAV2LIP_SIZE * WAV2LIP_SIZE;
      expect(t).toHaveLength(6 * plane);
      const top = 10 * WAV2LIP_SIZE + 5;
      const bottom = 80 * WAV2LIP_SIZE + 5;
      expect([t[top], t[plane + top], t[2 * plane + top]].map((v) => Math.round(v * 255))).toEqual([30, 20, 10]);
      expect([t[bottom], t[plane + bottom], t[2 * plane + bottom]]).toEqual([0, 0, 0]);
      expect([t[3 * plane + bottom], t[4 * plane + bottom], t[5 * plane + bottom]].map((v) => Math.round(v * 255))).toEqual([30, 20, 10]);
    });

    it('runs the model per frame: mel window and face crop in, the lower face follows the audio', async () => {
      const engine = await Wav2LipEngine.load({ modelPath: TINY_WAV2LIP, sessions });
      const crop = createImage(WAV2LIP_SIZE, WAV2LIP_SIZE);
      crop.data.fill(128);
      const silent = await engine.infer(crop, new Float32Array(80 * 16).fill(-4), ctx);
      const loud = await engine.infer(crop, new Float32Array(80 * 16).fill(2), ctx);
      const plane = WAV2LIP_SIZE * WAV2LIP_SIZE;
      expect(silent).toHaveLength(3 * plane);
      expect(silent[10 * WAV2LIP_SIZE]).toBeCloseTo(128 / 255, 5); // upper half: the reference
      expect(loud[80 * WAV2LIP_SIZE]).toBeGreaterThan(silent[80 * WAV2LIP_SIZE] + 0.5);
      const out = path.join(dir, 'w2l.mp4');
      const r = await engine.render(video, { file: speech }, faces, out, renderOpts(), ctx);
      expect(r.frames).toBe(90);
      expect(r.changedFrames).toBeGreaterThan(80);
      // the mouth box is brighter in loud frames than in silent ones (the tiny model's rule)
      const lumOf = async (index: number): Promise<number> => meanDiff(await frameAt(out, index), createImage(video.width, video.height), scaleRect(faces.frames[index]!.mouth, 0.5));
      expect(await lumOf(20)).toBeGreaterThan((await lumOf(50)) + 10); // 0.7 s loud, 1.7 s silent
      await engine.dispose();
      await engine.dispose();
    });

    const fixture = (): LipsConformanceFixture => ({ video, speech: { file: speech }, faces, tmpDir: dir });
    for (const c of LIPS_CONFORMANCE_CHECKS) it(`conformance: ${c.name}`, () => c.run(() => Wav2LipEngine.load({ modelPath: TINY_WAV2LIP, sessions }), fixture()));
  });
});
