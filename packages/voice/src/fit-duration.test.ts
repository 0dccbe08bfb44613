import { beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { fitDuration } from './fit-duration.js';
import { detectStretchers, timeStretch } from './stretch.js';
import { medianPitch } from './analysis/pitch.js';
import { speechExtent } from './analysis/activity.js';
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
