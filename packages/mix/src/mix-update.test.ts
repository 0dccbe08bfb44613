/**
 * updateMixReplace: after a change of a few lines of the speech timeline, the previous mix with
 * only the frames near the change computed again is byte for byte the full mix of the new speech
 * with the previous gain; it refuses (fallback) when the gain would move past the tolerance.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg, runProcess, writeWav } from '@dub/media';
import { changedStretches, mixReplace, updateMixReplace } from './index.js';

let dir: string;
let background: string;
const SR = 22050;
const SECONDS = 20;

/** A speech timeline at 22.05 kHz mono: espeak-ng lines placed every 4 s; `edit` replaces the text of one line. */
async function timeline(file: string, edit?: { line: number; text: string }): Promise<void> {
  const texts = ['Hola a todos y bienvenidos.', 'Hoy hablamos de cine.', 'Es un placer estar aquí.', 'Empecemos con las noticias.', 'Gracias por escuchar.'];
  if (edit) texts[edit.line] = edit.text;
  const x = new Float32Array(SR * SECONDS);
  for (const [i, t] of texts.entries()) {
    const f = path.join(dir, `line-${i}-${edit?.line === i ? 'e' : 'o'}.wav`);
    await runProcess('espeak-ng', ['-v', 'es', '-w', f, '--stdin'], { input: t });
    const a = await readWav(f);
    const at = Math.round((0.5 + 4 * i) * SR);
    const src = a.channels[0]!;
    for (let k = 0; k < src.length && at + k < x.length; k++) x[at + k] = src[k]!;
  }
  await writeWav(file, { sampleRate: SR, channels: [x] }, { format: 'float32' });
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mix-update-test-'));
  background = path.join(dir, 'background.wav');
  await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${SECONDS}:c=pink:a=0.05:r=44100`, '-ac', '2', background]);
}, 60_000);

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('updateMixReplace', () => {
  it('writes exactly the full mix of the edited speech with the previous gain, touching only the frames near the edit', async () => {
    const s1 = path.join(dir, 's1.wav');
    const s2 = path.join(dir, 's2.wav');
    await timeline(s1);
    await timeline(s2, { line: 2, text: 'Es un gusto enorme estar aquí.' });
    const first = await mixReplace({ background, speech: s1, output: path.join(dir, 'm1.wav'), tmpDir: dir });
    expect(first.hops).toBeDefined();
    const full = await mixReplace({ background, speech: s2, output: path.join(dir, 'full.wav'), previousGainDb: first.gainDb, tmpDir: dir });
    expect(full.gainKept).toBe(true);
    const upd = await updateMixReplace({ background, speech: s2, output: path.join(dir, 'upd.wav'), previous: { output: first.output, speech: s1, gainDb: first.gainDb, hops: first.hops! }, tmpDir: dir });
    if ('fallback' in upd) throw new Error(upd.fallback);
    expect(Buffer.compare(await fsp.readFile(upd.output), await fsp.readFile(full.output))).toBe(0);
    expect(upd.gainDb).toBe(full.gainDb);
    // the integrated loudness from the updated hops is the full measurement's
    expect(upd.inputIntegrated).toBeCloseTo(full.inputIntegrated, 9);
    for (let h = 0; h < full.hops!.length; h++) expect(Math.abs(upd.hops[h]! - full.hops![h]!)).toBeLessThanOrEqual(1e-9 * Math.max(1, full.hops![h]!));
    // only line 3's span (8.5 s on) was computed again
    expect(upd.updated.length).toBe(1);
    expect(upd.updated[0]!.start / 48000).toBeGreaterThan(8.4);
    expect(upd.updated[0]!.end / 48000).toBeLessThan(12.5);
    // and the mix does differ there from the first one
    const [a, b] = [await readWav(first.output), await readWav(upd.output)];
    const diff = changedStretches(a.channels, b.channels, 48000);
    expect(diff.length).toBe(1);
    expect(diff[0]!.start).toBeGreaterThanOrEqual(upd.updated[0]!.start);
    expect(diff[0]!.end).toBeLessThanOrEqual(upd.updated[0]!.end);
  }, 120_000);

  it('edits of the first line and of the last one (running to the end of the timeline) also give the full mix byte for byte', async () => {
    const s1 = path.join(dir, 'e1.wav');
    await timeline(s1);
    const first = await mixReplace({ background, speech: s1, output: path.join(dir, 'em1.wav'), tmpDir: dir });
    for (const edit of [{ line: 0, text: 'Buenas tardes a todos.' }, { line: 4, text: 'Gracias por escuchar este programa hasta el final, y hasta la semana que viene.' }]) {
      const s2 = path.join(dir, `e2-${edit.line}.wav`);
      await timeline(s2, edit);
      const full = await mixReplace({ background, speech: s2, output: path.join(dir, `efull-${edit.line}.wav`), previousGainDb: first.gainDb, tmpDir: dir });
      const upd = await updateMixReplace({ background, speech: s2, output: path.join(dir, `eupd-${edit.line}.wav`), previous: { output: first.output, speech: s1, gainDb: first.gainDb, hops: first.hops! }, tmpDir: dir });
      if ('fallback' in upd) throw new Error(upd.fallback);
      expect(upd.updated.length, `line ${edit.line}`).toBe(1);
      if (edit.line === 0) expect(upd.updated[0]!.start).toBeLessThan(0.5 * 48000);
      else expect(upd.updated[0]!.end).toBe(SECONDS * 48000);
      expect(Buffer.compare(await fsp.readFile(upd.output), await fsp.readFile(full.output)), `line ${edit.line}`).toBe(0);
    }
  }, 120_000);

  it('a change inside continuous sound (the resampled window starts and ends in signal, not silence) gives the full mix byte for byte', async () => {
    const s1 = path.join(dir, 'n1.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${SECONDS}:c=pink:a=0.2:r=${SR}:seed=7`, '-c:a', 'pcm_f32le', s1]);
    const x = await readWav(s1);
    const o2 = path.join(dir, 'n-other.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=1:c=pink:a=0.2:r=${SR}:seed=8`, '-c:a', 'pcm_f32le', o2]);
    const other = await readWav(o2);
    const y = x.channels[0]!.slice();
    y.set(other.channels[0]!.subarray(0, SR), Math.round(9.3 * SR));
    const s2 = path.join(dir, 'n2.wav');
    await writeWav(s2, { sampleRate: SR, channels: [y] }, { format: 'float32' });
    const first = await mixReplace({ background, speech: s1, output: path.join(dir, 'nm1.wav'), tmpDir: dir });
    const full = await mixReplace({ background, speech: s2, output: path.join(dir, 'nfull.wav'), previousGainDb: first.gainDb, tmpDir: dir });
    const upd = await updateMixReplace({ background, speech: s2, output: path.join(dir, 'nupd.wav'), previous: { output: first.output, speech: s1, gainDb: first.gainDb, hops: first.hops! }, tmpDir: dir });
    if ('fallback' in upd) throw new Error(upd.fallback);
    expect(upd.updated.length).toBe(1);
    expect(upd.updated[0]!.start / 48000).toBeGreaterThan(9);
    expect(Buffer.compare(await fsp.readFile(upd.output), await fsp.readFile(full.output))).toBe(0);
  }, 120_000);

  it('the same speech gives the previous mix back; a gain that moves past the tolerance or another length falls back', async () => {
    const s1 = path.join(dir, 's1.wav');
    const first = await mixReplace({ background, speech: s1, output: path.join(dir, 'm1b.wav'), tmpDir: dir });
    const prev = { output: first.output, speech: s1, gainDb: first.gainDb, hops: first.hops! };
    const same = await updateMixReplace({ background, speech: s1, output: path.join(dir, 'same.wav'), previous: prev, tmpDir: dir });
    if ('fallback' in same) throw new Error(same.fallback);
    expect(same.updated).toEqual([]);
    expect(Buffer.compare(await fsp.readFile(same.output), await fsp.readFile(first.output))).toBe(0);

    const loud = path.join(dir, 'loud.wav');
    await timeline(loud, { line: 0, text: 'Hola a todos y bienvenidos a este programa largo de radio y de televisión, con muchas palabras más que antes.' });
    const strict = await updateMixReplace({ background, speech: loud, output: path.join(dir, 'strict.wav'), previous: prev, gainToleranceDb: 0, tmpDir: dir });
    expect(strict).toMatchObject({ fallback: expect.stringMatching(/not within the tolerance/) });
    await expect(fsp.access(path.join(dir, 'strict.wav'))).rejects.toThrow();

    const short = path.join(dir, 'short.wav');
    await writeWav(short, { sampleRate: SR, channels: [new Float32Array(SR * 5)] }, { format: 'float32' });
    expect(await updateMixReplace({ background, speech: short, output: path.join(dir, 'short-mix.wav'), previous: prev, tmpDir: dir })).toMatchObject({ fallback: expect.stringMatching(/length/) });
  }, 120_000);
});

describe('changedStretches', () => {
  it('finds the differing frames and merges stretches closer than the gap', () => {
    const a = [new Float32Array(100)];
    const b = [new Float32Array(100)];
    b[0]![10] = 1;
    b[0]![14] = 1;
    b[0]![60] = 1;
    expect(changedStretches(a, b, 10)).toEqual([{ start: 10, end: 15 }, { start: 60, end: 61 }]);
    expect(changedStretches(a, b, 100)).toEqual([{ start: 10, end: 61 }]);
    expect(changedStretches(a, a, 10)).toEqual([]);
  });
});
