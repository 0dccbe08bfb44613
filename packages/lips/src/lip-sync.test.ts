import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '@dub/media';
import { engineLabel, silentLogger, ValidationError } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { lipSync } from './lip-sync.js';
import { detectStride, resolveLipsOptions, LIPS_PROFILES } from './options.js';
import { LIPS_ENGINES, LIPS_ENGINE_IDS, lipsEngineHost } from './registry.js';
import { dubbedSpeech, requireBlazeFace, TALKING_HEAD, TINY_WAV2LIP, trim } from './media.test-helper.js';
import { describeWithMedia } from '../../../test/support/media.js';

describeWithMedia(['talking-head-480.mp4'], 'lipSync on a real talking head', () => {
  let dir: string;
  let clip: string;
  let speech: string;
  const sessions = new SessionCache({ threads: 1 });

  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-sync-'));
    clip = await trim(TALKING_HEAD, path.join(dir, 'head.mp4'), 12, 3, '320:320');
    speech = await dubbedSpeech(path.join(dir, 'dub.wav'), 3);
  });
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  describe('options and engine choice', () => {
    it('resolves the two contract models into profiles; rejects bad values', () => {
      const rf = resolveLipsOptions();
      expect(rf.model).toBe('real_face');
      expect(rf.detectSeconds).toBe(LIPS_PROFILES.real_face.detectSeconds);
      expect(rf.detectEvery).toBeUndefined();
      expect(detectStride(rf, 30)).toBe(8);
      expect(detectStride(rf, 30000 / 1001)).toBe(7);
      const turbo = resolveLipsOptions({ model: 'real_face_turbo' });
      expect(turbo.detectSeconds).toBe(2 * rf.detectSeconds);
      expect(turbo.workScale).toBe(0.5);
      expect(turbo.trackingRange).toBe('short');
      expect(detectStride(resolveLipsOptions({ model: 'real_face_turbo', detectEvery: 1 }), 30)).toBe(1);
      expect(() => resolveLipsOptions({ detectSeconds: 0 })).toThrow(ValidationError);
      expect(() => resolveLipsOptions({ model: 'fast' as never })).toThrow(ValidationError);
      expect(() => resolveLipsOptions({ workScale: 2 })).toThrow(ValidationError);
      expect(LIPS_ENGINE_IDS).toEqual(['wav2lip', 'musetalk', 'viseme-warp']);
    });

    it('real_face picks wav2lip when its model resolves, viseme-warp otherwise; unknown engines are refused', async () => {
      const choose = async (o: Parameters<typeof resolveLipsOptions>[0]) => {
        const r = resolveLipsOptions(o);
        return LIPS_ENGINES.resolve(r.engine, 'es-ES', lipsEngineHost(r));
      };
      expect((await choose({ searchDirs: [dir] })).record).toEqual({ id: 'viseme-warp', label: 'viseme warp', selected: 'auto', reason: 'auto: no Wav2Lip model here (classical mouth warp)' });
      expect((await choose({ wav2lip: { modelPath: TINY_WAV2LIP } })).record).toMatchObject({ id: 'wav2lip', label: 'Wav2Lip (tiny-wav2lip.onnx)', selected: 'auto', reason: 'auto: the Wav2Lip model is installed', model: path.basename(TINY_WAV2LIP) });
      // the manifest's model is named by what it is; another file given as modelPath by its name
      expect(engineLabel(LIPS_ENGINES.get('wav2lip'), [path.join(dir, 'wav2lip-gan-96', 'wav2lip_gan_96.onnx')])).toBe('Wav2Lip GAN 96');
      expect((await choose({ engine: 'viseme-warp', wav2lip: { modelPath: TINY_WAV2LIP } })).id).toBe('viseme-warp');
      await expect(choose({ engine: 'wav2lip', searchDirs: [dir] })).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch wav2lip-gan-96/) });
      await expect(LIPS_ENGINES.create('nope', {}, lipsEngineHost({}))).rejects.toBeInstanceOf(ValidationError);
    });
  });

  describe('lipSync end to end', () => {
    it('real_face: tracked faces, re-rendered mouth, same size/fps/frames, the given audio muxed in', async () => {
      const out = path.join(dir, 'out.mp4');
      const progress: number[] = [];
      const stages: string[] = [];
      const r = await lipSync({ video: clip, speech: { file: speech }, output: out, audio: [{ file: speech, language: 'spa' }] }, { sessions, tmpDir: dir }, { onProgress: (p) => { progress.push(p.fraction); stages.push(`${p.stage}:${p.fraction.toFixed(3)}`); } });
      expect(r.engine).toBe('viseme-warp');
      expect(r.frames).toBe(90);
      expect(r.facesFound).toBe(r.detectedFrames);
      expect(r.changedFrames).toBeGreaterThan(30);
      expect(r.detectionMsPerFrame).toBeGreaterThan(0);
      const [src, res] = await Promise.all([probe(clip), probe(out)]);
      expect(res.video!.width).toBe(src.video!.width);
      expect(res.video!.height).toBe(src.video!.height);
      expect(res.video!.fps).toBe(src.video!.fps);
      expect(res.video!.frames).toBe(90);
      expect(res.audio).toHaveLength(1);
      expect(Math.abs(res.duration - src.video!.duration!)).toBeLessThan(0.1);
      expect(progress.at(-1)).toBe(1);
      for (let i = 1; i < progress.length; i++) expect(progress[i], stages.join(" ")).toBeGreaterThanOrEqual(progress[i - 1] - 1e-9);
    });

    it('real_face_turbo runs the same engine with half the detections; wav2lip when asked', async () => {
      const fast = await lipSync({ video: clip, speech: { file: speech }, output: path.join(dir, 'turbo.mp4') }, { model: 'real_face_turbo', sessions, tmpDir: dir });
      expect(fast.engine).toBe('viseme-warp');
      expect(fast.frames).toBe(90);
      // key frames every 0.5 s (15 frames), and the frames refinement added where the face moved
      expect(fast.detectedFrames).toBeGreaterThanOrEqual(Math.ceil(90 / 15));
      expect(fast.detectedFrames).toBeLessThan(45);
      expect(fast.changedFrames).toBeGreaterThan(30);
      const info = await probe(path.join(dir, 'turbo.mp4'));
      expect(info.audio).toHaveLength(0);
      expect(info.video!.frames).toBe(90);
      const w2l = await lipSync({ video: clip, speech: { file: speech }, output: path.join(dir, 'w2l.mp4') }, { model: 'real_face_turbo', sessions, tmpDir: dir, wav2lip: { modelPath: TINY_WAV2LIP } });
      expect(w2l.engine).toBe('wav2lip');
      expect(w2l.changedFrames).toBeGreaterThan(80);
    });

    it('an aborted signal stops it', async () => {
      const ac = new AbortController();
      ac.abort('test');
      await expect(lipSync({ video: clip, speech: { file: speech }, output: path.join(dir, 'x.mp4') }, { sessions, tmpDir: dir }, { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
    });
  });
});
