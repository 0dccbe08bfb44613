/**
 * Whisper's log-mel front-end against references computed offline by
 * scripts/make-whisper-mel-references.py (numpy, float64, openai/whisper's log_mel_spectrogram of
 * pad_or_trim(audio) with librosa's mel bank, bit-identical to whisper's mel_filters.npz).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WHISPER_N_FRAMES, WhisperFeatureExtractor } from './dsp/whisper-mel.js';
import { makeSignal, type SignalSpec } from '../../../test/support/reference-signals.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

interface Case {
  name: string;
  nMels: number;
  signal: SignalSpec;
  checksum: { sum: number; sumAbs: number; sumSquares: number };
  frames: number[];
  values: number[][];
  melMeans: number[];
  frameMeans: number[];
  max: number;
  min: number;
  mean: number;
}
const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'whisper-mel-references.json'), 'utf8')) as { nFrames: number; cases: Case[] };

function sums(x: Float32Array): { sum: number; sumAbs: number; sumSquares: number } {
  let sum = 0;
  let sumAbs = 0;
  let sumSquares = 0;
  for (const v of x) {
    sum += v;
    sumAbs += Math.abs(v);
    sumSquares += v * v;
  }
  return { sum, sumAbs, sumSquares };
}

/** Largest difference between our features and the reference, over everything the fixture keeps. */
function compare(c: Case, f: Float32Array): number {
  const frames = WHISPER_N_FRAMES;
  let d = 0;
  const diff = (a: number, b: number) => {
    d = Math.max(d, Math.abs(a - b));
  };
  c.frames.forEach((t, k) => {
    for (let m = 0; m < c.nMels; m++) diff(f[m * frames + t]!, c.values[k]![m]!);
  });
  let max = -Infinity;
  let min = Infinity;
  let all = 0;
  for (let m = 0; m < c.nMels; m++) {
    let s = 0;
    for (let t = 0; t < frames; t++) {
      const v = f[m * frames + t]!;
      s += v;
      max = Math.max(max, v);
      min = Math.min(min, v);
    }
    all += s;
    diff(s / frames, c.melMeans[m]!);
  }
  c.frameMeans.forEach((mean, t) => {
    let s = 0;
    for (let m = 0; m < c.nMels; m++) s += f[m * frames + t]!;
    diff(s / c.nMels, mean);
  });
  diff(max, c.max);
  diff(min, c.min);
  diff(all / (frames * c.nMels), c.mean);
  return d;
}

describe('Whisper log-mel against numpy references of openai/whisper', () => {
  const extractors = new Map<number, WhisperFeatureExtractor>();
  const differences: string[] = [];

  for (const c of ref.cases) {
    it(`${c.name} (${c.nMels} mels): every kept value within 5e-7 of the reference (float32 rounding)`, () => {
      expect(ref.nFrames).toBe(WHISPER_N_FRAMES);
      const x = makeSignal(c.signal);
      const got = sums(x);
      expect(got.sum).toBeCloseTo(c.checksum.sum, 6);
      expect(got.sumAbs).toBeCloseTo(c.checksum.sumAbs, 6);
      expect(got.sumSquares).toBeCloseTo(c.checksum.sumSquares, 6);
      let fx = extractors.get(c.nMels);
      if (!fx) extractors.set(c.nMels, (fx = new WhisperFeatureExtractor(c.nMels)));
      const d = compare(c, fx.extract(x));
      differences.push(`${c.name}: ${d.toExponential(2)}`);
      expect(d).toBeLessThan(5e-7);
    });
  }

  it('the references tell the cases apart (a wrong band count or a shifted frame would fail)', () => {
    const [a, b] = ref.cases;
    expect(a!.signal).toEqual(b!.signal);
    expect(Math.abs(a!.max - b!.max)).toBeGreaterThan(1e-3);
    const first = ref.cases[0]!;
    const shifted = first.values[1]!.map((v, m) => Math.abs(v - first.values[2]![m]!));
    expect(Math.max(...shifted)).toBeGreaterThan(1e-2);
    console.info(`whisper log-mel max |ours - reference|: ${differences.join('; ')}`);
  });
});
