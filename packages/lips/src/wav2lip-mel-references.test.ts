/**
 * Wav2Lip's mel front-end against references computed offline by
 * scripts/make-wav2lip-mel-references.py (numpy/scipy, float64, Wav2Lip's audio.melspectrogram
 * with hparams.py under librosa 0.7.0, the version its requirements pin: reflect padding).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWav } from '@dub/media';
import { MelWindows, WAV2LIP_MEL } from './audio/mel.js';
import { makeSignal, type SignalSpec } from '../../../test/support/reference-signals.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

interface Case {
  name: string;
  signal: SignalSpec;
  checksum: { sum: number; sumAbs: number; sumSquares: number };
  melFrames: number;
  frames: number[];
  values: number[][];
  melMeans: number[];
  frameMeans: number[];
}
const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'wav2lip-mel-references.json'), 'utf8')) as { sampleRate: number; nMels: number; cases: Case[] };

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'wav2lip-mel-ref-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Every mel frame [frame][band], read through 16-frame windows as the lips engine reads them. */
async function allFrames(file: string): Promise<{ frames: number; mel: Float32Array[] }> {
  const mels = await MelWindows.open(file);
  try {
    const { windowFrames, nMels } = WAV2LIP_MEL;
    const mel: Float32Array[] = [];
    for (let f = 0; f < mels.frames; f++) {
      // fps 80: the window of video frame f starts at mel frame f (or at frames - 16 near the end)
      const w = await mels.windowFor(f, 80);
      const start = Math.min(f, mels.frames - windowFrames);
      mel.push(Float32Array.from({ length: nMels }, (_, m) => w[m * windowFrames + (f - start)]!));
    }
    return { frames: mels.frames, mel };
  } finally {
    await mels.close();
  }
}

describe('Wav2Lip mel against numpy references of Wav2Lip audio.py', () => {
  const differences: string[] = [];

  ref.cases.forEach((c, i) => {
    it(`${c.name}: every kept value within 1e-6 of the reference (float32 rounding)`, async () => {
      expect(ref.sampleRate).toBe(WAV2LIP_MEL.sampleRate);
      expect(ref.nMels).toBe(WAV2LIP_MEL.nMels);
      const x = makeSignal(c.signal);
      let sum = 0;
      let sumAbs = 0;
      let sumSquares = 0;
      for (const v of x) {
        sum += v;
        sumAbs += Math.abs(v);
        sumSquares += v * v;
      }
      expect(sum).toBeCloseTo(c.checksum.sum, 6);
      expect(sumAbs).toBeCloseTo(c.checksum.sumAbs, 6);
      expect(sumSquares).toBeCloseTo(c.checksum.sumSquares, 6);
      const file = path.join(dir, `case-${i}.wav`);
      await writeWav(file, { sampleRate: c.signal.rate, channels: [x] }, { format: 'float32' });
      const { frames, mel } = await allFrames(file);
      expect(frames).toBe(c.melFrames);
      let d = 0;
      c.frames.forEach((t, k) => {
        for (let m = 0; m < ref.nMels; m++) d = Math.max(d, Math.abs(mel[t]![m]! - c.values[k]![m]!));
      });
      for (let m = 0; m < ref.nMels; m++) {
        let s = 0;
        for (let t = 0; t < frames; t++) s += mel[t]![m]!;
        d = Math.max(d, Math.abs(s / frames - c.melMeans[m]!));
      }
      for (let t = 0; t < frames; t++) {
        let s = 0;
        for (let m = 0; m < ref.nMels; m++) s += mel[t]![m]!;
        d = Math.max(d, Math.abs(s / ref.nMels - c.frameMeans[t]!));
      }
      differences.push(`${c.name}: ${d.toExponential(2)}`);
      expect(d).toBeLessThan(1e-6);
    });
  });

  it('the references are not flat: neighbouring edge frames differ by far more than the tolerance', () => {
    const c = ref.cases[0]!;
    const gap = c.values[0]!.map((v, m) => Math.abs(v - c.values[1]![m]!));
    expect(Math.max(...gap)).toBeGreaterThan(0.05);
    console.info(`wav2lip mel max |ours - reference|: ${differences.join('; ')}`);
  });
});
