/**
 * OpenVoice's linear spectrogram front-end against references computed offline by
 * scripts/make-openvoice-spectrogram-references.py (numpy, float64, OpenVoice's
 * mel_processing.py spectrogram_torch with the export's configuration).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openVoiceSpectrogram, readOpenVoiceConfig, type OpenVoiceConfig } from './engines/openvoice.js';
import { makeSignal, type SignalSpec } from '../../../test/support/reference-signals.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

interface Case {
  name: string;
  config: OpenVoiceConfig;
  signal: SignalSpec;
  checksum: { sum: number; sumAbs: number; sumSquares: number };
  spectrogramFrames: number;
  bins: number;
  frames: number[];
  values: number[][];
  binMeans: number[];
  frameMeans: number[];
}
const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'openvoice-spectrogram-references.json'), 'utf8')) as { cases: Case[] };

describe('OpenVoice spectrogram against numpy references of spectrogram_torch', () => {
  const differences: string[] = [];

  it("the first case uses the export's configuration", () => {
    expect(ref.cases[0]!.config).toEqual(readOpenVoiceConfig(path.join(FIXTURES, 'openvoice-tiny', 'configuration.json')));
  });

  for (const c of ref.cases) {
    it(`${c.name}: every kept value within 1e-6 relative of the reference (float32 rounding)`, () => {
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
      const s = openVoiceSpectrogram(x, c.config);
      expect(s.frames).toBe(c.spectrogramFrames);
      expect(s.bins).toBe(c.bins);
      let d = 0;
      const rel = (a: number, b: number) => {
        d = Math.max(d, Math.abs(a - b) / Math.abs(b));
      };
      c.frames.forEach((t, k) => {
        for (let b = 0; b < s.bins; b++) rel(s.data[t * s.bins + b]!, c.values[k]![b]!);
      });
      for (let b = 0; b < s.bins; b++) {
        let m = 0;
        for (let t = 0; t < s.frames; t++) m += s.data[t * s.bins + b]!;
        rel(m / s.frames, c.binMeans[b]!);
      }
      for (let t = 0; t < s.frames; t++) {
        let m = 0;
        for (let b = 0; b < s.bins; b++) m += s.data[t * s.bins + b]!;
        rel(m / s.bins, c.frameMeans[t]!);
      }
      differences.push(`${c.name}: ${d.toExponential(2)}`);
      expect(d).toBeLessThan(1e-6);
    });
  }

  it('the references are not flat: the silent stretch sits at the sqrt(1e-6) floor, neighbouring frames differ', () => {
    const c = ref.cases[1]!;
    expect(Math.min(...c.frameMeans)).toBeCloseTo(1e-3, 9);
    const a = ref.cases[0]!;
    const gap = a.values[0]!.map((v, b) => Math.abs(v - a.values[1]![b]!) / v);
    expect(Math.max(...gap)).toBeGreaterThan(0.1);
    console.info(`openvoice spectrogram max relative |ours - reference|: ${differences.join('; ')}`);
  });
});
