import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@dub/core';
import { applyTimbre, spectralEnvelope, TIMBRE_BANDS, timbreCorrection } from './matching/timbre.js';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { VoiceMatcher } from './matching/voice-matcher.js';
import { analyzeVoice } from './analysis/voice-profile.js';

/** Seeded white noise. */
function noise(n: number, seed = 7): Float32Array {
  let s = seed;
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    x[i] = (s / 2 ** 32 - 0.5) * 0.5;
  }
  return x;
}
const rms = (a: readonly number[], b: readonly number[]): number => Math.sqrt(a.reduce((t, v, i) => t + (v - b[i]!) ** 2, 0) / a.length);

describe('timbre match', () => {
  it('18 log-spaced bands from 100 Hz to 7 kHz', () => {
    expect(TIMBRE_BANDS).toHaveLength(18);
    expect(TIMBRE_BANDS[0]).toBeCloseTo(100, 6);
    expect(TIMBRE_BANDS.at(-1)).toBeCloseTo(7000, 6);
  });

  it('zero gains leave the signal as it is; gains shape white noise by the same amounts per band', () => {
    const x = noise(16000 * 4);
    expect(applyTimbre(x, 16000, new Array(18).fill(0))).toBe(x);
    const gains = TIMBRE_BANDS.map((_, i) => 6 * Math.sin(i / 3));
    const y = applyTimbre(x, 16000, gains);
    expect(y.length).toBe(x.length);
    const before = spectralEnvelope(x, 16000)!;
    const after = spectralEnvelope(y, 16000)!;
    const mean = gains.reduce((a, b) => a + b, 0) / gains.length;
    // interior bands (the ends blend with the flat extension): within 1 dB of the requested shape
    for (let b = 2; b < 16; b++) expect(Math.abs(after[b]! - before[b]! - (gains[b]! - mean))).toBeLessThan(1);
    expect(() => applyTimbre(x, 16000, [1, 2])).toThrow(RangeError);
  });

  it('the correction is the smoothed difference, without its mean, clamped', () => {
    const flat = new Array(18).fill(0);
    const tilt = TIMBRE_BANDS.map((_, i) => i - 8.5);
    const c = timbreCorrection(tilt, flat, { maxDb: 5 });
    expect(Math.max(...c)).toBe(5);
    expect(Math.min(...c)).toBe(-5);
    expect(c[9]).toBeCloseTo(0.5, 6);
    expect(timbreCorrection(tilt, flat, { strength: 0.5 })[12]).toBeCloseTo(1.75, 6);
    expect(spectralEnvelope(new Float32Array(100), 16000)).toBeNull();
    expect(spectralEnvelope(new Float32Array(16000), 16000)).toBeNull();
  });

  it('a matched espeak-ng voice with the correction is nearer the speaker envelope than without it', async () => {
    const engine = createEspeakEngine({ tmpDir: os.tmpdir() });
    const ctx = { logger: silentLogger };
    // the "speaker": another espeak-ng voice, filtered to a darker timbre
    const raw = await engine.synthesize({ text: 'This is the speaker whose voice the dub should take on, in every line.', locale: 'en-US', speed: 1, voice: { variant: 'm1', pitch: 30, wordsPerMinute: 160, amplitude: 100 } }, ctx);
    const speaker = applyTimbre(raw.channels[0]!, raw.sampleRate, TIMBRE_BANDS.map((_, i) => (i < 6 ? 6 : i > 12 ? -6 : 0)));
    const env = spectralEnvelope(speaker, raw.sampleRate)!;
    const profile = analyzeVoice({ sampleRate: raw.sampleRate, channels: [speaker] });
    const matcher = new VoiceMatcher(engine);
    const plain = await matcher.match(profile, { locale: 'es-ES' }, ctx);
    const matched = await matcher.match(profile, { locale: 'es-ES', referenceEnvelope: env }, ctx);
    expect(plain.settings.timbre).toBeUndefined();
    expect(matched.settings.timbre).toHaveLength(18);
    const anonymized = await matcher.match(profile, { locale: 'es-ES', referenceEnvelope: env, anonymization: 1 }, ctx);
    expect(anonymized.settings.timbre).toBeUndefined();
    const line = 'Buenas tardes a todos, gracias por venir hoy a la presentación.';
    const a = spectralEnvelope((await engine.synthesize({ text: line, locale: 'es-ES', speed: 1, voice: plain.settings }, ctx)).channels[0]!, raw.sampleRate)!;
    const b = spectralEnvelope((await engine.synthesize({ text: line, locale: 'es-ES', speed: 1, voice: matched.settings }, ctx)).channels[0]!, raw.sampleRate)!;
    expect(rms(b, env)).toBeLessThan(0.7 * rms(a, env));
    await engine.dispose();
  }, 60_000);
});
