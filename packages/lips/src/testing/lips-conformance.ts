/**
 * The checks every LipsEngine must pass. Framework-free: each check throws on failure, so a test
 * file runs them as `for (const c of LIPS_CONFORMANCE_CHECKS) it(c.name, () => c.run(makeEngine, fixture))`.
 * The fixture is a short clip with a face, its face track and a dubbed speech track that is loud
 * in some frames.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AbortedError, engineContractProblems, isDubError, resolveContext } from '@dub/core';
import { readFrames } from '../video/frame-reader.js';
import { videoInfo, type VideoInfo } from '../video/video-info.js';
import { clipRect, scaleRect } from '../image/rgb-image.js';
import type { DubbedSpeech, FaceTrack, LipsEngine, LipsRenderOptions } from '../types.js';

export interface LipsConformanceFixture {
  video: VideoInfo;
  speech: DubbedSpeech;
  faces: FaceTrack;
  /** Scratch folder parent (default the OS temp dir). */
  tmpDir?: string;
}

export interface LipsConformanceCheck {
  name: string;
  run(makeEngine: () => Promise<LipsEngine>, fx: LipsConformanceFixture): Promise<void>;
}

function fail(why: string): never {
  throw new Error(`lips conformance: ${why}`);
}

const ctx = resolveContext();

async function withRender<T>(make: () => Promise<LipsEngine>, fx: LipsConformanceFixture, faces: FaceTrack, fn: (out: string, frames: number, changed: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
  const dir = await mkdtemp(path.join(fx.tmpDir ?? os.tmpdir(), 'lips-conf-'));
  const engine = await make();
  try {
    const out = path.join(dir, 'out.mp4');
    const opts: LipsRenderOptions = { workScale: 1, encode: { crf: 10, preset: 'ultrafast' }, tmpDir: dir, media: {} };
    const r = await engine.render(fx.video, fx.speech, faces, out, opts, { ...ctx, ...(signal ? { signal } : {}) });
    return await fn(out, r.frames, r.changedFrames);
  } finally {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Mean absolute difference per pixel, inside and outside `keep` (pixels), of two frames. */
function diffStats(a: Uint8Array, b: Uint8Array, width: number, height: number, inside: (x: number, y: number) => boolean): { inside: number; outside: number; outsideMax: number } {
  let si = 0;
  let ni = 0;
  let so = 0;
  let no = 0;
  let mo = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      const d = (Math.abs(a[o] - b[o]) + Math.abs(a[o + 1] - b[o + 1]) + Math.abs(a[o + 2] - b[o + 2])) / 3;
      if (inside(x, y)) {
        si += d;
        ni++;
      } else {
        so += d;
        no++;
        if (d > mo) mo = d;
      }
    }
  }
  return { inside: ni ? si / ni : 0, outside: no ? so / no : 0, outsideMax: mo };
}

export const LIPS_CONFORMANCE_CHECKS: readonly LipsConformanceCheck[] = [
  {
    name: 'is an Engine: id, label, dispose()',
    async run(make) {
      const engine = await make();
      const problems = engineContractProblems(engine);
      await engine.dispose?.();
      if (problems.length) fail(problems.join('; '));
    },
  },
  {
    name: 'keeps frame count, size and frame rate',
    async run(make, fx) {
      await withRender(make, fx, fx.faces, async (out, frames) => {
        const info = await videoInfo(out);
        if (info.width !== fx.video.width || info.height !== fx.video.height) fail(`size ${info.width}x${info.height} != ${fx.video.width}x${fx.video.height}`);
        if (Math.abs(info.fps - fx.video.fps) > 1e-3) fail(`fps ${info.fps} != ${fx.video.fps}`);
        if (frames !== fx.faces.frameCount || info.frameCount !== frames) fail(`frames: rendered ${frames}, file ${info.frameCount}, source ${fx.faces.frameCount}`);
      });
    },
  },
  {
    name: 'changes frames with a face only inside the mouth box (dilated by the codec margin)',
    async run(make, fx) {
      await withRender(make, fx, fx.faces, async (out, _frames, changed) => {
        if (changed === 0) fail('no frame changed although the speech is loud in some');
        const src = readFrames(fx.video.file, { width: fx.video.width, height: fx.video.height });
        let i = 0;
        let worstInsideGain = 0;
        for await (const f of readFrames(out, { width: fx.video.width, height: fx.video.height })) {
          const s = (await src.next()).value;
          if (!s) break;
          const face = fx.faces.frames[i];
          const box = face ? clipRect(scaleRect(face.mouth, 1.25), f.width, f.height) : { x: 0, y: 0, w: 0, h: 0 };
          const d = diffStats(f.data, s.data, f.width, f.height, (x, y) => x >= box.x && x < box.x + box.w && y >= box.y && y < box.y + box.h);
          if (d.outside > 2.5) fail(`frame ${i}: mean change ${d.outside.toFixed(2)} outside the mouth box`);
          worstInsideGain = Math.max(worstInsideGain, d.inside - d.outside);
          i++;
        }
        await src.return(undefined);
        if (worstInsideGain < 2) fail(`the mouth box never changed visibly (best gain ${worstInsideGain.toFixed(2)})`);
      });
    },
  },
  {
    name: 'passes frames without a face through unchanged',
    async run(make, fx) {
      const none: FaceTrack = { ...fx.faces, frames: fx.faces.frames.map(() => null), facesFound: 0 };
      await withRender(make, fx, none, async (_out, frames, changed) => {
        if (changed !== 0) fail(`${changed} frames changed without a face`);
        if (frames !== fx.faces.frameCount) fail(`frames ${frames} != ${fx.faces.frameCount}`);
      });
    },
  },
  {
    name: 'stops with AbortedError when the signal has fired',
    async run(make, fx) {
      const ac = new AbortController();
      ac.abort('test');
      try {
        await withRender(make, fx, fx.faces, async () => undefined, ac.signal);
      } catch (e) {
        if (e instanceof AbortedError || (isDubError(e) && e.code === 'aborted')) return;
        fail(`expected AbortedError, got ${String(e)}`);
      }
      fail('rendering did not stop');
    },
  },
  {
    name: 'disposes idempotently',
    async run(make) {
      const e = await make();
      await e.dispose();
      await e.dispose();
    },
  },
];
