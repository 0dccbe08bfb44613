/** readFrames with spans: exactly the frames of the ranges asked for, equal to those of a full decode. */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '@dub/media';
import { readFrames } from './video/frame-reader.js';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'frame-reader-test-'));
  file = path.join(dir, 'clip.mp4');
  // a moving test pattern (every frame differs), 60 frames, keyframe every 25
  await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=25:duration=2.4', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', file]);
}, 60_000);

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function all(spans?: { start: number; end: number }[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const f of readFrames(file, { width: 64, height: 48, ...(spans ? { spans } : {}) })) out.push(Buffer.from(f.data));
  return out;
}

describe('readFrames spans', () => {
  it('delivers the frames of each range in order, the same pixels as a full decode', async () => {
    const full = await all();
    expect(full.length).toBe(60);
    const spans = [{ start: 3, end: 7 }, { start: 30, end: 31 }, { start: 55, end: 60 }];
    const some = await all(spans);
    const expected = spans.flatMap((s) => full.slice(s.start, s.end));
    expect(some.length).toBe(expected.length);
    for (let i = 0; i < some.length; i++) expect(some[i]!.equals(expected[i]!), `frame ${i}`).toBe(true);
    expect(await all([])).toEqual([]);
  }, 60_000);
});
