import { beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { fitDuration, fitPredicted } from './fit-duration.js';
import { detectStretchers, timeStretch } from './stretch.js';
import { medianPitch } from './analysis/pitch.js';
import { speechExtent, trimSilence } from './analysis/activity.js';
import { DEFAULT_VOICE } from './types.js';

const ctx = resolveContext();
const engine = createEspeakEngine();
const TEXT = 'La reunión empieza a las nueve y media en la sala grande.';
const say = (speed: number): Promise<PlanarAudio> => engine.synthesize({ text: TEXT, locale: 'es-ES', voice: DEFAULT_VOICE, speed }, ctx);

/** Seconds of speech (first to last non-silent frame). */
function speechSeconds(a: PlanarAudio): number {
  const e = speechExtent(a.channels[0]!, a.sampleRate);
  return (e.end - e.start) / a.sampleRate;
}

describe('fitDuration', () => {
  let base: PlanarAudio;
  let natural: number;
  beforeAll(async () => {
    base = await say(1);
    natural = speechSeconds(base);
  });

  it('this ffmpeg offers rubberband, atempo as the fallback', async () => {
    expect(await detectStretchers()).toEqual(['rubberband', 'atempo']);
  });

  for (const ratio of [0.75, 0.9, 1.2, 1.4]) {
    it(`fits speech to ${ratio}x its length within 2 % (stretch only)`, async () => {
      const target = natural * ratio;
      const r = await fitDuration(base, target, {}, ctx);
      expect(r.audio.channels[0]!.length).toBe(Math.round(target * base.sampleRate));
      expect(r.speed).toBe(1);
      expect(r.tempo).toBeCloseTo(1 / ratio, 2);
      const got = speechSeconds(r.audio);
      expect(Math.abs(got - target)).toBeLessThanOrEqual(Math.max(0.02 * target, 0.02));
      expect(r.exceeded).toBe(false);
    });
  }

  it('re-synthesizes at an adjusted rate first, then stretches the rest', async () => {
    const target = natural * 0.7;
    const speeds: number[] = [];
    const r = await fitDuration(base, target, { resynthesize: (s) => (speeds.push(s), say(s)) }, ctx);
    expect(speeds).toHaveLength(1);
    expect(speeds[0]!).toBeCloseTo(1 / 0.7, 2);
    expect(Math.abs(speechSeconds(r.audio) - target)).toBeLessThanOrEqual(Math.max(0.02 * target, 0.02));
    // most of the change came from the rate: the remaining stretch is small
    expect(Math.abs(r.tempo - 1)).toBeLessThan(0.2);
  });

  it('keeps the pitch when stretching (rubberband and atempo)', async () => {
    const f0 = medianPitch(base.channels[0]!, base.sampleRate);
    for (const stretcher of ['rubberband', 'atempo'] as const) {
      const s = await timeStretch(base, 1.4, { stretcher }, ctx);
      expect(Math.abs(medianPitch(s.channels[0]!, s.sampleRate) / f0 - 1)).toBeLessThan(0.05);
      expect(s.channels[0]!.length / base.channels[0]!.length).toBeCloseTo(1 / 1.4, 1);
    }
  });

  it('overruns into the following silence beyond the fastest tempo, and reports when even that is not enough', async () => {
    const target = natural / 2; // would need tempo 2
    const ok = await fitDuration(base, target, { overrunSeconds: natural }, ctx);
    expect(ok.tempo).toBeCloseTo(1.5, 5);
    expect(ok.exceeded).toBe(false);
    expect(ok.overrunSeconds).toBeGreaterThan(0.1);
    expect(Math.abs(speechSeconds(ok.audio) - natural / 1.5)).toBeLessThanOrEqual(0.03 * natural);
    const tight = await fitDuration(base, target, { overrunSeconds: 0.05 }, ctx);
    expect(tight.exceeded).toBe(true);
    expect(tight.durationSeconds).toBeCloseTo(ok.durationSeconds, 2);
  });

  it('pads with silence beyond the slowest tempo', async () => {
    const target = natural * 2;
    const r = await fitDuration(base, target, {}, ctx);
    expect(r.tempo).toBeCloseTo(0.7, 5);
    expect(r.durationSeconds).toBeCloseTo(target, 3);
    expect(r.paddedSeconds).toBeGreaterThan(0.3 * natural);
    expect(Math.abs(speechSeconds(r.audio) - natural / 0.7)).toBeLessThanOrEqual(0.03 * natural);
  });

  it('trims edge silence before fitting', async () => {
    const sr = base.sampleRate;
    const padded = new Float32Array(base.channels[0]!.length + sr);
    padded.set(base.channels[0]!, sr / 2);
    const r = await fitDuration({ sampleRate: sr, channels: [padded] }, natural, {}, ctx);
    expect(r.sourceSeconds).toBeCloseTo(natural, 1);
    expect(r.tempo).toBe(1);
    expect(speechExtent(r.audio.channels[0]!, sr).start).toBeLessThan(0.02 * sr);
  });
});

describe('fitPredicted (a line spoken once at the speed its predicted length asks for)', () => {
  let trimmed: number;
  beforeAll(async () => {
    const a = await say(1);
    trimmed = trimSilence(a.channels[0]!, a.sampleRate).length / a.sampleRate;
  });
  const counted = () => {
    const speeds: number[] = [];
    return { speeds, speak: (s: number) => (speeds.push(s), say(s)) };
  };

  it('speaks a line once when the prediction is right, and its length at speed 1 is then measured', async () => {
    const { speeds, speak } = counted();
    // predicted 3 % long: within 5 % of the time, so spoken at speed 1 and stretched the rest
    const r = await fitPredicted(trimmed * 1.03, trimmed, speak, {}, ctx);
    expect(speeds).toEqual([1]);
    expect(r.passes).toBe(1);
    expect(r.natural).toBe('measured');
    expect(r.sourceSeconds).toBeCloseTo(trimmed, 6);
    expect(r.durationSeconds).toBeCloseTo(trimmed, 3);
  });

  it('speaks it a second time, at the speed its real length asks for, when the prediction missed', async () => {
    const { speeds, speak } = counted();
    const target = trimmed / 1.25;
    // predicted 60 % too long: the first pass at 2 (1.6 x 1.25, bounded to 1.8) ends far short of the time
    const r = await fitPredicted(trimmed * 1.6, target, speak, {}, ctx);
    expect(speeds).toHaveLength(2);
    expect(speeds[0]).toBeCloseTo(1.8, 6);
    // slower than the first pass (espeak-ng's length is not quite inversely proportional to its speed: 1.48 here)
    expect(speeds[1]!).toBeGreaterThan(1.1);
    expect(speeds[1]!).toBeLessThan(1.7);
    expect(r.passes).toBe(2);
    expect(r.firstSpeed).toBeCloseTo(1.8, 6);
    expect(r.speed).toBe(speeds[1]);
    expect(r.natural).toBe('predicted');
    expect(r.sourceSeconds).toBeCloseTo(trimmed * 1.6, 6);
    // the rest is stretched to the time
    expect(Math.abs(speechSeconds(r.audio) - target)).toBeLessThanOrEqual(Math.max(0.02 * target, 0.02));
    expect(Math.abs(r.tempo - 1)).toBeLessThan(0.3);
  });

  it('a miss within `missAbove` is left to the stretch', async () => {
    const { speeds, speak } = counted();
    const target = trimmed / 1.25;
    const r = await fitPredicted(trimmed * 1.6, target, speak, { missAbove: 0.5 }, ctx);
    expect(speeds).toEqual([1.8]);
    expect(r.passes).toBe(1);
    expect(r.tempo).toBeLessThan(1);
    expect(Math.abs(speechSeconds(r.audio) - target)).toBeLessThanOrEqual(Math.max(0.02 * target, 0.02));
  });

  it('a line already at its slowest speed is padded, not spoken again', async () => {
    const { speeds, speak } = counted();
    const r = await fitPredicted(trimmed, trimmed * 2, speak, { minSpeed: 1.2, minTempo: 1 }, ctx);
    expect(speeds).toEqual([1.2]);
    expect(r.passes).toBe(1);
    expect(r.tempo).toBe(1);
    expect(r.paddedSeconds).toBeGreaterThan(0.4 * trimmed);
    expect(r.durationSeconds).toBeCloseTo(trimmed * 2, 3);
  });
});
