/**
 * Chunked lips rendering on a real talking head: a first render fills the chunk store; after the
 * dubbed speech changes near the end, a second render re-renders only the chunks whose frames are
 * driven by the changed speech (viseme-warp's level is taken over 5 s around each frame), and its
 * frames are bit-identical to a full render of the changed speech with an empty store.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionCache } from '@dub/onnx';
import { probe, writeWav } from '@dub/media';
import { detectFaces, lipSync } from './lip-sync.js';
import type { LipsChunkStore } from './engines/chunked.js';
import { LOCAL_LEVEL_SECONDS } from './engines/viseme-warp.js';
import { readFrames } from './video/frame-reader.js';
import type { FaceTrack } from './types.js';
import { requireBlazeFace, TALKING_HEAD, trim } from './media.test-helper.js';
import { describeWithMedia } from '../../../test/support/media.js';

const SECONDS = 20;
const FPS = 30;
const CHUNK = 60; // 2 s

/** A voiced buzz in 0.8 s bursts every 1.5 s; `quiet` spans are left silent. */
async function speech(file: string, quiet: [number, number][] = []): Promise<string> {
  const sr = 16000;
  const x = new Float32Array(SECONDS * sr);
  for (let i = 0; i < x.length; i++) {
    const t = i / sr;
    if (t % 1.5 > 0.8 || quiet.some(([a, b]) => t >= a && t < b)) continue;
    let v = 0;
    for (let h = 1; h <= 8; h++) v += Math.sin(2 * Math.PI * 120 * h * t) / h;
    x[i] = 0.25 * v * (0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * t));
  }
  await writeWav(file, { sampleRate: sr, channels: [x] }, { format: 'float32' });
  return file;
}

function dirStore(dir: string): LipsChunkStore & { puts: number } {
  fs.mkdirSync(dir, { recursive: true });
  const store = {
    puts: 0,
    get: async (key: string) => (fs.existsSync(path.join(dir, `${key}.mp4`)) ? path.join(dir, `${key}.mp4`) : undefined),
    put: async (key: string, file: string) => {
      store.puts++;
      await fsp.copyFile(file, path.join(dir, `${key}.mp4`));
    },
  };
  return store;
}

async function frames(file: string, width: number, height: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const f of readFrames(file, { width, height })) out.push(Buffer.from(f.data));
  return out;
}

describeWithMedia(['talking-head-480.mp4'], 'chunked lips rendering', () => {
  let dir: string;
  let clip: string;
  let faces: FaceTrack;
  const sessions = new SessionCache({ threads: 1 });

  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-chunked-'));
    clip = await trim(TALKING_HEAD, path.join(dir, 'head.mp4'), 5, SECONDS, '240:240');
    faces = await detectFaces(clip, { sessions, tmpDir: dir });
  }, 120_000);
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('an edit near the end re-renders only the chunks it drives; every frame equals a full render of the edited speech', async () => {
    expect(faces.facesFound).toBeGreaterThan(0);
    const before = await speech(path.join(dir, 'before.wav'));
    const after = await speech(path.join(dir, 'after.wav'), [[16.4, 17.4]]);
    const options = { sessions, tmpDir: dir, engine: 'viseme-warp' as const };
    const store = dirStore(path.join(dir, 'chunks'));
    const chunks = { store, identity: 'head', chunkFrames: CHUNK };

    const first = await lipSync({ video: clip, speech: { file: before }, output: path.join(dir, 'first.mp4'), faces, chunks }, options);
    expect(first.chunks).toEqual({ total: SECONDS * FPS / CHUNK, rendered: SECONDS * FPS / CHUNK, spans: [{ start: 0, end: SECONDS * FPS }] });
    expect(first.frames).toBe(SECONDS * FPS);
    const info = await probe(first.file);
    expect(info.video!.frames).toBe(SECONDS * FPS);

    const edited = await lipSync({ video: clip, speech: { file: after }, output: path.join(dir, 'edited.mp4'), faces, chunks }, options);
    // the change at 16.4-17.4 s reaches frames within LOCAL_LEVEL_SECONDS (+ a short smoothing tail): chunks from 10 s on
    const firstDirty = Math.floor(((16.4 - LOCAL_LEVEL_SECONDS - 1) * FPS) / CHUNK) * CHUNK;
    expect(edited.chunks!.rendered).toBeLessThan(edited.chunks!.total);
    expect(edited.chunks!.spans[0]!.start).toBeGreaterThanOrEqual(firstDirty);
    expect(edited.chunks!.spans.at(-1)!.end).toBe(SECONDS * FPS);

    const fresh = await lipSync({ video: clip, speech: { file: after }, output: path.join(dir, 'fresh.mp4'), faces, chunks: { ...chunks, store: dirStore(path.join(dir, 'chunks-fresh')) } }, options);
    expect(fresh.chunks!.rendered).toBe(fresh.chunks!.total);

    const [a, b, c] = await Promise.all([frames(first.file, 240, 240), frames(edited.file, 240, 240), frames(fresh.file, 240, 240)]);
    expect(b.length).toBe(SECONDS * FPS);
    expect(c.length).toBe(SECONDS * FPS);
    let differentFromFresh = 0;
    for (let i = 0; i < b.length; i++) if (!b[i]!.equals(c[i]!)) differentFromFresh++;
    expect(differentFromFresh).toBe(0);
    // outside the re-rendered span the edited video is the first one, frame for frame; inside, the mouth moved
    const start = edited.chunks!.spans[0]!.start;
    for (let i = 0; i < start; i++) expect(a[i]!.equals(b[i]!)).toBe(true);
    let changed = 0;
    for (let i = start; i < b.length; i++) if (!a[i]!.equals(b[i]!)) changed++;
    expect(changed).toBeGreaterThan(0);
  }, 300_000);
});
