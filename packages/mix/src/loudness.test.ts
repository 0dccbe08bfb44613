import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg, writeWav } from '@dub/media';
import { measureLoudness, measureLoudnessFrames, updateLoudnessFrames } from './loudness.js';
import { itWithMedia, media } from '../../../test/support/media.js';

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'loudness-test-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function render(name: string, args: readonly string[]): Promise<string> {
  const file = path.join(dir, name);
  await runFfmpeg([...args, file]);
  return file;
}

// Speech-like level changes: noise whose level moves in 2 s steps over 30 dB, with pauses.
const STEPS = "anoisesrc=d=40:c=pink:a=0.2:r=48000,volume='(0.03+0.97*abs(sin(t*0.15)))*gte(mod(t\\,7)\\,1.2)':eval=frame";

describe('measureLoudnessFrames: integrated loudness and range from the hop energies', () => {
  it('agrees with ebur128 on an AAC track (integrated within 0.1 LU, range within 0.2 LU, the same true peak)', async () => {
    const m4a = await render('steps.m4a', ['-f', 'lavfi', '-i', STEPS, '-ac', '2', '-c:a', 'aac', '-b:a', '160k']);
    const frames = await measureLoudnessFrames(m4a);
    const ff = await measureLoudness(m4a);
    expect(frames.hop).toBe(4800);
    expect(frames.hopEnergies.length).toBe(400);
    expect(Math.abs(frames.integrated - ff.integrated)).toBeLessThanOrEqual(0.1);
    expect(ff.range).toBeGreaterThan(5);
    expect(Math.abs(frames.range - ff.range)).toBeLessThanOrEqual(0.2);
    expect(frames.truePeak).toBeCloseTo(ff.truePeak, 1);
  });

  itWithMedia(['jfk.wav', 'chinese-news.wav'], 'agrees with ebur128 on real speech', async () => {
    for (const name of ['jfk.wav', 'chinese-news.wav']) {
      const frames = await measureLoudnessFrames(media(name));
      const ff = await measureLoudness(media(name));
      expect(Math.abs(frames.integrated - ff.integrated), name).toBeLessThanOrEqual(0.1);
      expect(Math.abs(frames.range - ff.range), name).toBeLessThanOrEqual(0.2);
    }
  });
});

describe('updateLoudnessFrames', () => {
  it('measures only the changed span again and gives what a whole measurement of the new file gives', async () => {
    const a = await render('a.wav', ['-f', 'lavfi', '-i', STEPS, '-ac', '2', '-c:a', 'pcm_f32le']);
    const x = await readWav(a);
    // the new file: 17.0-18.5 s replaced by a loud tone (a louder, longer line)
    for (const c of x.channels) for (let i = 17 * 48000; i < 18.5 * 48000; i++) c[i] = 0.9 * Math.sin((2 * Math.PI * 440 * i) / 48000);
    const b = path.join(dir, 'b.wav');
    await writeWav(b, x, { format: 'float32' });
    const before = await measureLoudnessFrames(a);
    const whole = await measureLoudnessFrames(b);
    const updated = await updateLoudnessFrames(b, before, [{ start: 16.9, end: 18.6 }]);
    expect(whole.truePeak).toBeGreaterThan(before.truePeak);
    expect(updated.truePeak).toBe(whole.truePeak);
    expect(updated.framePeaks).toEqual(whole.framePeaks);
    expect(updated.hopEnergies.length).toBe(whole.hopEnergies.length);
    for (let k = 0; k < whole.hopEnergies.length; k++) expect(Math.abs(updated.hopEnergies[k]! - whole.hopEnergies[k]!), `hop ${k}`).toBeLessThanOrEqual(1e-9 * Math.max(1, whole.hopEnergies[k]!));
    expect(Math.abs(updated.integrated - whole.integrated)).toBeLessThan(1e-6);
    expect(Math.abs(updated.range - whole.range)).toBeLessThan(1e-6);
    // and the figures did move: the update is not the earlier measurement
    expect(Math.abs(updated.integrated - before.integrated)).toBeGreaterThan(0.05);
    // a span that misses the change leaves the earlier figures
    const wrong = await updateLoudnessFrames(b, before, [{ start: 30, end: 31 }]);
    expect(wrong.truePeak).toBe(before.truePeak);
  });

  it('measures the whole file when the earlier measurement has no hop energies', async () => {
    const a = await render('c.wav', ['-f', 'lavfi', '-i', 'anoisesrc=d=6:c=pink:a=0.1:r=44100', '-ac', '1', '-c:a', 'pcm_f32le']);
    const whole = await measureLoudnessFrames(a);
    const r = await updateLoudnessFrames(a, { framePeaks: whole.framePeaks.map(() => -90) }, [{ start: 1, end: 2 }]);
    expect(r).toEqual(whole);
    expect(whole.hop).toBe(4410);
  });
});
