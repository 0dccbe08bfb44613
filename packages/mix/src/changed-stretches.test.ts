/**
 * changedStretchesOfFiles: the comparison of two WAV files read in windows gives what
 * changedStretches gives on both decoded whole, with stretches merged across window boundaries.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, writeWav } from '@dub/media';
import { changedStretches, changedStretchesOfFiles } from './index.js';

let dir: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'changed-stretches-test-'));
});

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Both signals written as WAV files, and changedStretches over the files decoded whole. */
async function pair(name: string, a: Float32Array[], b: Float32Array[], format: 'float32' | 'pcm16', gap: number) {
  const fa = path.join(dir, `${name}-a.wav`);
  const fb = path.join(dir, `${name}-b.wav`);
  await writeWav(fa, { sampleRate: 16000, channels: a }, { format });
  await writeWav(fb, { sampleRate: 16000, channels: b }, { format });
  const whole = changedStretches((await readWav(fa)).channels, (await readWav(fb)).channels, gap);
  return { fa, fb, whole };
}

describe('changedStretchesOfFiles', () => {
  it('merges a change across a window boundary and changes closer than the gap on either side of one', async () => {
    const n = 100; // windows of 16: boundaries at 16, 32, 48, 64, 80, 96 (the last window is short)
    const a = [new Float32Array(n), new Float32Array(n)];
    const b = [new Float32Array(n), new Float32Array(n)];
    for (let i = 14; i < 19; i++) b[0]![i] = 0.5; // spans the boundary at 16
    b[1]![30] = 0.25; // two changes 4 frames apart (gap 10) on either side of the boundary at 32, in the other channel
    b[0]![34] = -0.25;
    b[0]![47] = 0.75; // a change on the last frame of one window and one on the first frame of the next, 16 apart (more than the gap)
    b[0]![63] = 0.75;
    b[1]![64] = 0.75; // first frame of the window after: merged with 63
    b[0]![99] = 0.1; // the last frame, in the short last window
    const { fa, fb, whole } = await pair('boundary', a, b, 'float32', 10);
    const expected = [
      { start: 14, end: 19 },
      { start: 30, end: 35 },
      { start: 47, end: 48 },
      { start: 63, end: 65 },
      { start: 99, end: 100 },
    ];
    expect(whole).toEqual(expected);
    for (const w of [1, 3, 16, 17, 64, 100, 1000]) expect(await changedStretchesOfFiles(fa, fb, 10, w), `windows of ${w}`).toEqual(expected);
    // a gap that joins everything across every window
    expect(await changedStretchesOfFiles(fa, fb, 100, 16)).toEqual([{ start: 14, end: 100 }]);
    expect(await changedStretchesOfFiles(fa, fa, 10, 16)).toEqual([]);
  });

  it('treats NaN as equal to NaN (and to nothing else), as changedStretches does', async () => {
    const a = [new Float32Array(40)];
    const b = [new Float32Array(40)];
    a[0]![5] = Number.NaN;
    b[0]![5] = Number.NaN; // same
    b[0]![20] = Number.NaN; // differs from 0
    const { fa, fb, whole } = await pair('nan', a, b, 'float32', 2);
    expect(whole).toEqual([{ start: 20, end: 21 }]);
    expect(await changedStretchesOfFiles(fa, fb, 2, 8)).toEqual(whole);
  });

  it('equals changedStretches on sparse random changes in float and 16-bit files, for any window', async () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
    const n = 5000;
    const a = [new Float32Array(n), new Float32Array(n)];
    for (const ch of a) for (let i = 0; i < n; i++) ch[i] = rnd() - 0.5;
    const b = a.map((ch) => ch.slice());
    for (let k = 0; k < 40; k++) {
      const at = Math.floor(rnd() * n);
      const len = 1 + Math.floor(rnd() * 30);
      const ch = b[Math.floor(rnd() * 2)]!;
      for (let i = at; i < Math.min(n, at + len); i++) ch[i] = rnd() - 0.5;
    }
    for (const format of ['float32', 'pcm16'] as const) {
      for (const gap of [1, 25, 200]) {
        const { fa, fb, whole } = await pair(`random-${format}-${gap}`, a, b, format, gap);
        expect(whole.length).toBeGreaterThan(gap === 200 ? 5 : 20);
        for (const w of [7, 64, 999, 4096]) expect(await changedStretchesOfFiles(fa, fb, gap, w), `${format}, gap ${gap}, windows of ${w}`).toEqual(whole);
        expect(await changedStretchesOfFiles(fa, fb, gap)).toEqual(whole);
      }
    }
  });
});
