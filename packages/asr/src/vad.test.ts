import { describe, expect, it } from 'vitest';
import { readWav } from '@dub/media';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { createEngineEnv } from './engine-env.js';
import { detectSpeech, resolveVadOptions } from './vad/detect-speech.js';
import { createEnergyVad } from './vad/energy.js';
import { speechRegions, speechSeconds } from './vad/regions.js';
import { createSileroVad } from './vad/silero.js';
import { vadConformance } from './testing/vad-conformance.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const jfk = media('jfk.wav');

describe('speechRegions (hysteresis)', () => {
  const o = { threshold: 0.5, negThreshold: 0.35, minSpeech: 0.1, minSilence: 0.1, padding: 0 };
  it('starts at the onset threshold and ends only after minSilence below the offset', () => {
    const p = Float32Array.from([0, 0.6, 0.4, 0.4, 0.6, 0.2, 0.1, 0.1, 0.1, 0, 0.9, 0.9, 0.9, 0.2, 0.2, 0.2]);
    // frame = 0.05 s: minSilence 0.1 s = 2 frames
    expect(speechRegions(p, 0.05, 0.8, o).map((r) => [r.start, r.end])).toEqual([
      [0.05, 0.25],
      [0.5, 0.65],
    ]);
  });
  it('drops regions shorter than minSpeech, pads and merges', () => {
    const p = Float32Array.from([0, 0.9, 0, 0, 0, 0.9, 0.9, 0.9, 0, 0, 0.9, 0.9, 0.9, 0, 0]);
    const r = speechRegions(p, 0.1, 1.5, { ...o, minSpeech: 0.25, padding: 0.1 });
    expect(r.map((x) => [x.start, x.end])).toEqual([[0.4, 1.4]]);
    expect(r[0]!.probability).toBeGreaterThan(0.5);
  });
  it('validates thresholds', () => {
    expect(() => resolveVadOptions({ threshold: 0.3, negThreshold: 0.4 })).toThrow(RangeError);
  });
});

describeWithMedia(['jfk.wav', 'music-coffee.wav', 'two-speakers-call.wav'], 'detectSpeech (silero v5)', () => {
  it('finds the speech of jfk.wav', async () => {
    const r = await detectSpeech(jfk);
    expect(r.engine).toBe('silero');
    expect(r.duration).toBeCloseTo(11, 1);
    expect(r.probabilities.length).toBe(Math.ceil((11 * 16000) / 512));
    const total = speechSeconds(r.regions);
    expect(total).toBeGreaterThan(7);
    expect(total).toBeLessThan(10.5);
    // "And so my fellow Americans" (~0.3-2.2 s) and "for your country" (~9.5-10.5 s) are speech.
    const inSpeech = (t: number) => r.regions.some((x) => t >= x.start && t <= x.end);
    for (const t of [0.5, 1.5, 6, 9.5]) expect(inSpeech(t)).toBe(true);
    // The pause after "Americans" is not.
    expect(inSpeech(2.8)).toBe(false);
  });

  it('finds little speech in instrumental music', async () => {
    const r = await detectSpeech(media('music-coffee.wav'));
    expect(r.duration).toBeGreaterThan(70);
    expect(speechSeconds(r.regions)).toBeLessThan(0.1 * r.duration);
  });

  it('reads non-16 kHz input through ffmpeg and samples in memory through the resampler', async () => {
    const viaFile = await detectSpeech(media('two-speakers-call.wav'));
    const w = await readWav(jfk);
    const mem = await detectSpeech({ sampleRate: 16000, channels: w.channels });
    const file = await detectSpeech(jfk);
    expect(mem.regions).toEqual(file.regions);
    expect(speechSeconds(viaFile.regions)).toBeGreaterThan(15);
  });

  it('reports progress and honours an AbortSignal', async () => {
    const seen: number[] = [];
    await detectSpeech(jfk, { windowSeconds: 2 }, { onProgress: (p) => seen.push(p.fraction) });
    expect(seen.length).toBeGreaterThan(3);
    expect(seen[seen.length - 1]).toBe(1);
    const ac = new AbortController();
    ac.abort();
    await expect(detectSpeech(jfk, {}, { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
  });

  it('uses a given session cache and leaves its sessions loaded', async () => {
    const sessions = new SessionCache();
    await detectSpeech(jfk, { sessions });
    expect(sessions.size).toBe(1);
    await sessions.disposeAll();
  });
});

const speech = async () => (await readWav(jfk)).channels[0]!.subarray(0, 16000 * 8);
const { env } = createEngineEnv({}, resolveContext().logger);
describeWithMedia(['jfk.wav'], 'VAD conformance on jfk.wav', () => {
  vadConformance('silero', () => createSileroVad(env), { speech });
  vadConformance('energy', () => createEnergyVad(env), { speech });
});
