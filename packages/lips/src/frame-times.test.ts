/**
 * The lips video keeps every frame where the source has it: on a file made like a camera makes it
 * (29.97 fps, B-frames; ../shared/media has no phone recording), lipSync's output, rendered in
 * chunks as the pipeline renders it and muxed with audio, has the source's frame count and every
 * frame's pts (ffprobe -show_entries frame=pts_time), to the microsecond ffprobe prints.
 * Not yet exact: the same picture in a 1/600 s time base (QuickTime's, frames 20 or 21 ticks
 * apart) came out up to 3.2 ms off (retimeLike states 0.5 ms; see the lips README).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionCache } from '@dub/onnx';
import { runFfmpeg, runFfprobe } from '@dub/media';
import { detectFaces, lipSync } from './lip-sync.js';
import type { LipsChunkStore } from './engines/chunked.js';
import { dubbedSpeech, requireBlazeFace, TALKING_HEAD } from './media.test-helper.js';
import { describeWithMedia } from '../../../test/support/media.js';

/** Every decoded frame's pts_time, in presentation order. */
async function framePts(file: string): Promise<string[]> {
  const text = await runFfprobe(['-select_streams', 'v:0', '-show_entries', 'frame=pts_time', '-of', 'csv=p=0', file]);
  return text.split('\n').map((l) => l.split(',')[0]!.trim()).filter(Boolean);
}

describeWithMedia(['talking-head-480.mp4'], 'lips output frame times equal the source', () => {
  let dir: string;
  let speech: string;
  const sessions = new SessionCache({ threads: 1 });
  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-times-'));
    speech = await dubbedSpeech(path.join(dir, 'dub.wav'), 3);
  });
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  for (const [name, extra] of [['29.97 fps, B-frames, 3 s in 30-frame chunks', []]] as const) {
    it(name, async () => {
      const src = path.join(dir, 'camera.mp4');
      await runFfmpeg(['-ss', '3', '-t', '3', '-i', TALKING_HEAD, '-vf', 'fps=30000/1001,scale=240:240', '-c:v', 'libx264', '-preset', 'veryfast', '-bf', '3', '-g', '45', '-c:a', 'aac', ...extra, src]);
      const before = await framePts(src);
      expect(before.length).toBeGreaterThan(80);
      const faces = await detectFaces(src, { sessions });
      const chunks = new Map<string, string>();
      const store: LipsChunkStore = {
        get: async (k) => chunks.get(k),
        put: async (k, f) => {
          const kept = path.join(dir, `chunk-${chunks.size}.mp4`);
          await fsp.copyFile(f, kept);
          chunks.set(k, kept);
        },
      };
      const out = path.join(dir, 'out.mp4');
      const r = await lipSync({ video: src, speech: { file: speech }, output: out, faces, audio: [{ file: speech, language: 'spa' }], chunks: { store, identity: src, chunkFrames: 30 } }, { sessions, tmpDir: dir });
      expect(r.changedFrames).toBeGreaterThan(20);
      expect(r.chunks!.total).toBe(Math.ceil(before.length / 30));
      const after = await framePts(out);
      expect(after.length).toBe(before.length);
      expect(after).toEqual(before);
    });
  }
});
