/**
 * probe and streamStarts ask ffprobe once per file while it stays the same file (issue #27: each
 * ffprobe ~0.2 CPU s here); a rewritten file is asked again, and callers get copies.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from './probe.js';
import { streamStarts } from './timing.js';
import { makeTone, makeVideo, tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let ffprobePath: string;
let calls: string;
beforeAll(async () => {
  tmp = await tempDir('dub-file-memo-');
  calls = tmp.file('calls.log');
  ffprobePath = tmp.file('ffprobe');
  // ffprobe that logs each call, then runs the real one
  await writeFile(ffprobePath, `#!/bin/sh\necho x >> '${calls}'\nexec ffprobe "$@"\n`);
  await chmod(ffprobePath, 0o755);
}, 60_000);
afterAll(async () => {
  await tmp.cleanup();
});

const count = async () => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

describe('ffprobe answers kept per file', () => {
  it('probe: once while the file is the same, again once it is rewritten; copies out', async () => {
    const f = tmp.file('a.mp4');
    await makeVideo(f, { duration: 1 });
    const before = await count();
    const a = await probe(f, { ffprobePath });
    const b = await probe(f, { ffprobePath });
    expect(await count()).toBe(before + 1);
    expect(b).toEqual(a);
    b.audio.pop();
    expect((await probe(f, { ffprobePath })).audio).toHaveLength(a.audio.length);
    await makeVideo(f, { duration: 2 });
    const c = await probe(f, { ffprobePath });
    expect(await count()).toBe(before + 2);
    expect(c.duration).toBeGreaterThan(a.duration + 0.5);
  }, 120_000);

  it('streamStarts: once per file and question; a WAV asks nothing', async () => {
    const v = tmp.file('b.mp4');
    await makeVideo(v, { duration: 1 });
    const before = await count();
    const s = await streamStarts(v, { ffprobePath });
    expect(await count()).toBe(before + 3);
    expect(await streamStarts(v, { ffprobePath })).toEqual(s);
    expect(await count()).toBe(before + 3);
    await streamStarts(v, { ffprobePath, only: 'video' });
    expect(await count()).toBe(before + 5);
    // asked twice at once (trim and audio run together): still one ffprobe per question
    const v2 = tmp.file('d.mp4');
    await makeVideo(v2, { duration: 1 });
    const [x, y] = await Promise.all([streamStarts(v2, { ffprobePath }), streamStarts(v2, { ffprobePath, audioStream: 0 })]);
    expect(y).toEqual(x);
    expect(await count()).toBe(before + 8);
    const w = tmp.file('c.wav');
    await makeTone(w, { duration: 0.5 });
    expect(await streamStarts(w, { ffprobePath })).toEqual({ video: undefined, audio: 0, origin: 0, formatStart: 0 });
    expect(await count()).toBe(before + 8);
  }, 120_000);
});
