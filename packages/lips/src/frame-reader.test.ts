/** readFrames with spans: exactly the frames of the ranges asked for, equal to those of a full decode. */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '@dub/media';
import { MAX_SELECT_SPANS, mergeSpans, readFrames, selectExpression } from './video/frame-reader.js';

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

  it('hundreds of ranges (a flat sum ffmpeg would refuse): a tree of if(lt(n)) for the decoder, exactly the frames asked for', async () => {
    const full = await all();
    const spans = Array.from({ length: 29 }, (_, i) => ({ start: 2 * i + 1, end: 2 * i + 2 })).concat([{ start: 59, end: 60 }]);
    // 30 ranges; 200 single frames of a longer clip (a flat sum of 200 fails to parse in ffmpeg)
    const some = await all(spans);
    expect(some.length).toBe(30);
    for (let i = 0; i < 30; i++) expect(some[i]!.equals(full[spans[i]!.start]!), `frame ${i}`).toBe(true);
    const long = path.join(dir, 'long.mp4');
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=32x24:rate=25:duration=24', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', long]);
    const every: Buffer[] = [];
    for await (const f of readFrames(long, { width: 32, height: 24 })) every.push(Buffer.from(f.data));
    expect(every.length).toBe(600);
    const many = Array.from({ length: 200 }, (_, i) => ({ start: 3 * i + (i % 2), end: 3 * i + (i % 2) + 1 }));
    const got: Buffer[] = [];
    for await (const f of readFrames(long, { width: 32, height: 24, spans: many })) got.push(Buffer.from(f.data));
    expect(got.length).toBe(200);
    for (let i = 0; i < 200; i++) expect(got[i]!.equals(every[many[i]!.start]!), `frame ${many[i]!.start}`).toBe(true);
  }, 120_000);

  it('the select expression: a flat sum up to 8 ranges, a balanced tree above; ranges merged only past MAX_SELECT_SPANS', () => {
    expect(selectExpression([])).toBe('0');
    expect(selectExpression([{ start: 3, end: 7 }, { start: 30, end: 31 }])).toBe('between(n\\,3\\,6)+between(n\\,30\\,30)');
    const spans = Array.from({ length: 20 }, (_, i) => ({ start: 10 * i, end: 10 * i + 2 }));
    const e = selectExpression(spans);
    expect(e.startsWith('if(lt(n\\,100)\\,')).toBe(true);
    expect(e.match(/between/g)!.length).toBe(20);
    expect(MAX_SELECT_SPANS).toBeGreaterThanOrEqual(1000);
    expect(mergeSpans([{ start: 0, end: 1 }, { start: 2, end: 3 }, { start: 10, end: 11 }], 2)).toEqual([{ start: 0, end: 3 }, { start: 10, end: 11 }]);
  });

  it("yuv420p: the decoder's planes, half the bytes of rgb24", async () => {
    const frames: Buffer[] = [];
    for await (const f of readFrames(file, { width: 64, height: 48, pixelFormat: 'yuv420p', spans: [{ start: 10, end: 12 }] })) frames.push(Buffer.from(f.data));
    expect(frames.map((f) => f.length)).toEqual([64 * 48 * 1.5, 64 * 48 * 1.5]);
    expect(frames[0]!.equals(frames[1]!)).toBe(false);
  }, 60_000);
});
