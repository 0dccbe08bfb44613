import { describe, expect, it } from 'vitest';
import { FbankExtractor, mfccFromLogMel } from './dsp/kaldi-fbank.js';
import { hzToMelSlaney, kaldiMelBank, melToHzSlaney, slaneyMelBank } from './dsp/mel.js';
import { resampleSinc } from './dsp/resample.js';
import { WHISPER_N_FRAMES, WhisperFeatureExtractor } from './dsp/whisper-mel.js';

function tone(seconds: number, freq: number, amp = 0.5, rate = 16000): Float32Array {
  const x = new Float32Array(Math.round(seconds * rate));
  for (let i = 0; i < x.length; i++) x[i] = amp * Math.sin((2 * Math.PI * freq * i) / rate);
  return x;
}

describe('mel banks', () => {
  it('Slaney scale round-trips and is linear below 1 kHz', () => {
    expect(hzToMelSlaney(500)).toBeCloseTo(7.5, 6);
    for (const f of [60, 999, 1000, 4321, 7999]) expect(melToHzSlaney(hzToMelSlaney(f))).toBeCloseTo(f, 6);
  });
  it('Whisper bank: 80 filters over 201 bins, each a single triangle, Slaney-normalized', () => {
    const b = slaneyMelBank(16000, 400, 80);
    expect(b.weights.length).toBe(80 * 201);
    for (let i = 0; i < 80; i++) expect(b.ranges[2 * i + 1]!).toBeGreaterThanOrEqual(b.ranges[2 * i]!);
    // First filter: from 0 Hz peaking near 40 Hz; its peak weight is 2 / (f[2] - f[0]).
    const lastCenter = Array.from({ length: 80 }, (_, i) => i).map((i) => b.ranges[2 * i]!);
    expect(lastCenter[79]).toBeGreaterThan(lastCenter[0]!);
  });
  it('Kaldi bank gives the Nyquist bin no weight', () => {
    const b = kaldiMelBank(16000, 512, 80);
    for (let i = 0; i < 80; i++) expect(b.weights[i * 257 + 256]).toBe(0);
  });
});

describe('WhisperFeatureExtractor', () => {
  it('makes 80 x 3000 features for 30 s and pads shorter audio', () => {
    const fx = new WhisperFeatureExtractor(80);
    expect(fx.extract(tone(30, 440)).length).toBe(80 * 3000);
    expect(fx.extract(tone(3, 440)).length).toBe(80 * WHISPER_N_FRAMES);
    expect(new WhisperFeatureExtractor(128).extract(tone(1, 440)).length).toBe(128 * 3000);
  });
  it('puts a pure tone in the mel bin whose centre is nearest its frequency, and normalizes to [-1, 1.5]', () => {
    const fx = new WhisperFeatureExtractor(80);
    for (const f of [440, 1000, 3000]) {
      const feats = fx.extract(tone(30, f));
      const frame = 1500;
      let best = 0;
      for (let m = 0; m < 80; m++) if (feats[m * 3000 + frame]! > feats[best * 3000 + frame]!) best = m;
      // Centre of mel filter m: melToHz(mel(0) + (m + 1) * (mel(8000) - mel(0)) / 81).
      const centre = (m: number) => melToHzSlaney(((m + 1) * hzToMelSlaney(8000)) / 81);
      let expected = 0;
      for (let m = 0; m < 80; m++) if (Math.abs(centre(m) - f) < Math.abs(centre(expected) - f)) expected = m;
      expect(Math.abs(best - expected)).toBeLessThanOrEqual(1);
      let max = -Infinity;
      let min = Infinity;
      for (const v of feats) {
        max = Math.max(max, v);
        min = Math.min(min, v);
      }
      expect(max - min).toBeLessThanOrEqual(2 + 1e-6); // floored at max - 8 in log10, then / 4
    }
  });
});

describe('FbankExtractor (Kaldi-compatible)', () => {
  it('frames 25 ms every 10 ms with snip_edges', () => {
    const fb = new FbankExtractor();
    expect(fb.frameCount(16000)).toBe(98);
    expect(fb.frameCount(399)).toBe(0);
    const f = fb.compute(tone(1, 1000));
    expect(f.frames).toBe(98);
    expect(f.nMels).toBe(80);
  });
  it('mean-normalizes each bin when cmn is on', () => {
    const f = new FbankExtractor({ cmn: true }).compute(tone(1, 1000));
    for (let m = 0; m < 80; m += 13) {
      let s = 0;
      for (let t = 0; t < f.frames; t++) s += f.data[t * 80 + m]!;
      expect(Math.abs(s / f.frames)).toBeLessThan(1e-4);
    }
  });
  it('a 1 kHz tone peaks in the bin around 1 kHz', () => {
    const f = new FbankExtractor({ cmn: false, nMels: 40 }).compute(tone(0.5, 1000));
    let best = 0;
    for (let m = 0; m < 40; m++) if (f.data[10 * 40 + m]! > f.data[10 * 40 + best]!) best = m;
    const mel = (hz: number) => 1127 * Math.log(1 + hz / 700);
    const delta = (mel(8000) - mel(20)) / 41;
    const expected = Math.round((mel(1000) - mel(20)) / delta - 1);
    expect(Math.abs(best - expected)).toBeLessThanOrEqual(1);
  });
  it('MFCC c0 follows loudness', () => {
    const fb = new FbankExtractor({ cmn: false, nMels: 40 });
    const loud = mfccFromLogMel(fb.compute(tone(0.3, 500, 0.5)), 13);
    const soft = mfccFromLogMel(fb.compute(tone(0.3, 500, 0.05)), 13);
    expect(loud.data[5 * 13]!).toBeGreaterThan(soft.data[5 * 13]!);
  });
});

describe('resampleSinc', () => {
  it('keeps a tone below Nyquist and its length ratio', () => {
    const x = tone(1, 440, 0.5, 44100);
    const y = resampleSinc(x, 44100, 16000);
    expect(y.length).toBe(16000);
    let peak = 0;
    for (let i = 1000; i < 15000; i++) peak = Math.max(peak, Math.abs(y[i]!));
    expect(peak).toBeGreaterThan(0.45);
    expect(peak).toBeLessThan(0.55);
  });
});
