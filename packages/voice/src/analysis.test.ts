import { describe, expect, it } from 'vitest';
import { trackPitch, medianPitch, semitones } from './analysis/pitch.js';
import { speechExtent, syllableRate, trimSilence } from './analysis/activity.js';

/** A harmonic tone (like a voiced sound): fundamental plus two weaker harmonics. */
function tone(f0: number, seconds: number, sr: number, amp = 0.5): Float32Array {
  const x = new Float32Array(Math.round(seconds * sr));
  for (let i = 0; i < x.length; i++) {
    const t = i / sr;
    x[i] = amp * (Math.sin(2 * Math.PI * f0 * t) + 0.5 * Math.sin(4 * Math.PI * f0 * t) + 0.25 * Math.sin(6 * Math.PI * f0 * t)) / 1.75;
  }
  return x;
}

describe('YIN pitch', () => {
  for (const [f0, sr] of [[85, 16000], [120, 22050], [220, 44100], [310, 22050]] as const) {
    it(`finds ${f0} Hz at ${sr} Hz within 1 %`, () => {
      expect(Math.abs(medianPitch(tone(f0, 0.5, sr), sr) - f0) / f0).toBeLessThan(0.01);
    });
  }

  it('leaves silence and noise-floor frames unvoiced', () => {
    const sr = 16000;
    const x = new Float32Array(sr);
    x.set(tone(150, 0.4, sr), sr * 0.3);
    const tr = trackPitch(x, sr);
    const voicedSeconds = tr.voicedFrames * tr.hopSeconds;
    expect(voicedSeconds).toBeGreaterThan(0.3);
    expect(voicedSeconds).toBeLessThan(0.45);
    expect(Math.abs(tr.medianHz - 150)).toBeLessThan(2);
  });

  it('measures semitones', () => {
    expect(semitones(110, 220)).toBeCloseTo(12, 6);
  });
});

describe('activity', () => {
  it('trims leading and trailing silence to the sound', () => {
    const sr = 16000;
    const x = new Float32Array(sr * 2);
    x.set(tone(200, 1, sr), sr / 2);
    const ext = speechExtent(x, sr);
    expect(Math.abs(ext.start - sr / 2)).toBeLessThanOrEqual(160);
    expect(Math.abs(ext.end - sr * 1.5)).toBeLessThanOrEqual(160);
    expect(trimSilence(x, sr).length).toBe(ext.end - ext.start);
    expect(speechExtent(new Float32Array(100), sr)).toEqual({ start: 0, end: 0 });
  });

  it('counts syllable-like bursts', () => {
    const sr = 16000;
    const x = new Float32Array(sr * 2);
    // 8 bursts of 120 ms every 250 ms
    for (let k = 0; k < 8; k++) x.set(tone(150, 0.12, sr), Math.round(k * 0.25 * sr));
    expect(syllableRate(x, sr).syllables).toBe(8);
  });
});
