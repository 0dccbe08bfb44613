import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg, WavReader } from '@dub/media';
import { kWeightingFilters, LoudnessMeter, measureBs1770, measureWavBs1770 } from './bs1770.js';
import { measureLoudness } from './loudness.js';
import { itWithMedia, media } from '../../../test/support/media.js';

const SPEECH = ['jfk.wav', 'japanese.wav', 'chinese-news.wav'];
let dir: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bs1770-test-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Render an ffmpeg lavfi source into a float32 WAV. */
async function lavfi(name: string, source: string, channels: number): Promise<string> {
  const file = path.join(dir, `${name}.wav`);
  await runFfmpeg(['-f', 'lavfi', '-i', source, '-ac', String(channels), '-c:a', 'pcm_f32le', file]);
  return file;
}

async function jsLoudness(file: string): Promise<{ integrated: number; samplePeak: number }> {
  const r = await WavReader.open(file);
  try {
    return await measureWavBs1770(r, r.frames, 10007); // an odd window: hops straddle the reads
  } finally {
    await r.close();
  }
}

describe('K-weighting', () => {
  it('gives the coefficients BS.1770 prints for 48 kHz', () => {
    const [shelf, hp] = kWeightingFilters(48000);
    expect(shelf.b0).toBeCloseTo(1.53512485958697, 8);
    expect(shelf.b1).toBeCloseTo(-2.69169618940638, 8);
    expect(shelf.b2).toBeCloseTo(1.19839281085285, 8);
    expect(shelf.a1).toBeCloseTo(-1.69065929318241, 8);
    expect(shelf.a2).toBeCloseTo(0.73248077421585, 8);
    expect(hp.a1).toBeCloseTo(-1.99004745483398, 8);
    expect(hp.a2).toBeCloseTo(0.99007225036621, 8);
  });

  it('reads a full-scale 1 kHz sine in one channel at -3.01 LUFS at 44.1 and 48 kHz', () => {
    for (const sr of [44100, 48000]) {
      const x = new Float32Array(sr * 5);
      for (let i = 0; i < x.length; i++) x[i] = Math.sin((2 * Math.PI * 1000 * i) / sr);
      const m = measureBs1770([x], sr);
      expect(Math.abs(m.integrated - -3.01)).toBeLessThan(0.02);
      expect(m.samplePeak).toBeCloseTo(1, 3);
    }
  });

  it('is silence (-Infinity) under the absolute gate, and the same pushed in pieces or at once', () => {
    const sr = 48000;
    expect(measureBs1770([new Float32Array(sr * 2)], sr).integrated).toBe(Number.NEGATIVE_INFINITY);
    const x = [new Float32Array(sr * 3), new Float32Array(sr * 3)];
    let seed = 7;
    for (const c of x) for (let i = 0; i < c.length; i++) c[i] = ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.3;
    const whole = measureBs1770(x, sr);
    const m = new LoudnessMeter(sr, 2);
    for (let s = 0; s < x[0]!.length; s += 777) m.push(x.map((c) => c.subarray(s, Math.min(c.length, s + 777))));
    expect(m.result().integrated).toBeCloseTo(whole.integrated, 9);
    expect(m.result().samplePeak).toBe(whole.samplePeak);
    expect(whole.blocks).toBe(27); // 3 s: 30 hops of 100 ms, 400 ms blocks
  });
});

describe('BS.1770 integrated loudness against ffmpeg ebur128', () => {
  // ffmpeg prints one decimal: a difference of 0.05 is its rounding alone.
  const cases: Array<[string, string, number]> = [
    ['pink noise, stereo, 48 kHz', 'anoisesrc=d=8:c=pink:a=0.1:r=48000', 2],
    ['white noise, mono, 44.1 kHz', 'anoisesrc=d=8:c=white:a=0.05:r=44100', 1],
    // 1 s of tone every 5 s: most blocks are silent or partly silent, both gates decide the result
    ['tone bursts with long silences, stereo, 44.1 kHz', "sine=f=1000:d=20:r=44100,volume=enable='gte(mod(t\\,5)\\,1)':volume=0", 2],
    ['tone bursts at two levels, mono, 48 kHz', "sine=f=440:d=24:r=48000,volume=enable='gte(mod(t\\,6)\\,2)':volume=0.05,volume=enable='gte(mod(t\\,12)\\,6)':volume=0", 1],
    ['low tone with quiet noise, stereo, 48 kHz (RLB high-pass)', 'sine=f=50:d=8:r=48000[a];anoisesrc=d=8:a=0.001:r=48000[b];[a][b]amix=inputs=2', 2],
  ];
  for (const [name, source, channels] of cases) {
    it(name, async () => {
      const file = await lavfi(name.replace(/[^a-z0-9]+/gi, '-'), source, channels);
      const js = await jsLoudness(file);
      const ff = await measureLoudness(file);
      expect(Number.isFinite(ff.integrated)).toBe(true);
      expect(Math.abs(js.integrated - ff.integrated)).toBeLessThanOrEqual(0.1);
      const x = await readWav(file);
      let peak = 0;
      for (const c of x.channels) for (const v of c) peak = Math.max(peak, Math.abs(v));
      expect(js.samplePeak).toBe(peak);
    });
  }

  itWithMedia(SPEECH, 'real speech (16 kHz mono, 48 kHz stereo)', async () => {
    for (const file of SPEECH.map(media)) {
      const js = await jsLoudness(file);
      const ff = await measureLoudness(file);
      expect(Math.abs(js.integrated - ff.integrated), file).toBeLessThanOrEqual(0.1);
    }
  });
});
