import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWaveform, dbToLevel, levelToDb, WaveformBuilder, writeWav, WAVEFORM_FLOOR_DB } from './index.js';
import { makeVideo, tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir('dub-waveform-');
  // 1 s of a 440 Hz sine at amplitude 0.5, 1 s of digital silence, 1 s at amplitude 0.05 (48 kHz stereo).
  const rate = 48_000;
  const ch = new Float32Array(rate * 3);
  for (let i = 0; i < rate; i++) ch[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate);
  for (let i = 2 * rate; i < 3 * rate; i++) ch[i] = 0.05 * Math.sin((2 * Math.PI * 440 * i) / rate);
  await writeWav(tmp.file('steps.wav'), { sampleRate: rate, channels: [ch, ch.slice()] }, { format: 'float32' });
  await makeVideo(tmp.file('silent-video.mp4'), { duration: 1, audio: false });
  await makeVideo(tmp.file('av.mp4'), { duration: 2.5, freq: 1000 });
});
afterAll(async () => {
  await tmp.cleanup();
});

describe('level bytes', () => {
  it('map dBFS linearly onto 1..255 above the floor and back', () => {
    expect(dbToLevel(0)).toBe(255);
    expect(dbToLevel(3)).toBe(255);
    expect(dbToLevel(WAVEFORM_FLOOR_DB)).toBe(0);
    expect(dbToLevel(-Infinity)).toBe(0);
    expect(dbToLevel(Number.NaN)).toBe(0);
    expect(dbToLevel(-89.99)).toBe(1);
    for (const db of [-60, -30.5, -6.02, -1]) expect(Math.abs(levelToDb(dbToLevel(db)) - db)).toBeLessThanOrEqual(90 / 255 / 2 + 1e-9);
  });
});

describe('computeWaveform', () => {
  it('keeps the peak and RMS level of every 20 ms window of a file', async () => {
    const w = await computeWaveform(tmp.file('steps.wav'));
    expect(w.rate).toBe(50);
    expect(w.duration).toBeCloseTo(3, 3);
    expect(w.peak.length).toBe(150);
    expect(w.rms.length).toBe(150);
    const db = (a: Uint8Array, from: number, to: number) => Array.from(a.slice(from, to), levelToDb);
    // loud part: peak -6.0 dBFS, RMS 3 dB lower (a sine); quiet part 20 dB lower; silence at the floor
    for (const v of db(w.peak, 1, 49)) expect(v).toBeCloseTo(-6.02, 0);
    for (const v of db(w.rms, 1, 49)) expect(v).toBeCloseTo(-9.03, 0);
    for (const v of db(w.peak, 101, 149)) expect(v).toBeCloseTo(-26.02, 0);
    for (const v of db(w.rms, 101, 149)) expect(v).toBeCloseTo(-29.03, 0);
    expect(Array.from(w.peak.slice(52, 98))).toEqual(new Array(46).fill(0));
  });

  it('reads the audio of a video and other window rates', async () => {
    const w = await computeWaveform(tmp.file('av.mp4'), { rate: 7 });
    expect(w.rate).toBe(7);
    expect(w.duration).toBeGreaterThan(2.4);
    expect(w.duration).toBeLessThan(2.6);
    expect(w.peak.length).toBe(Math.ceil(w.duration * 7 - 1e-9));
    expect(levelToDb(w.peak[5]!)).toBeGreaterThan(-40);
  });

  it('names a missing audio track', async () => {
    await expect(computeWaveform(tmp.file('silent-video.mp4'))).rejects.toMatchObject({ code: 'missing_audio_track' });
  });

  it('refuses a window rate outside 1..1000', () => {
    expect(() => new WaveformBuilder(0)).toThrow(RangeError);
    expect(() => new WaveformBuilder(1001)).toThrow(RangeError);
    expect(() => new WaveformBuilder(2.5)).toThrow(RangeError);
  });
});

describe('WaveformBuilder', () => {
  it('gives the same windows whether a sample is split across chunks or not', () => {
    const bytes = new Uint8Array(16_000 * 2 + 7 * 2);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < bytes.length / 2; i++) view.setInt16(i * 2, Math.round(20_000 * Math.sin(i / 10) * (i % 3000 < 1500 ? 1 : 0.01)), true);
    const whole = new WaveformBuilder(50);
    whole.push(bytes);
    const split = new WaveformBuilder(50);
    for (let i = 0; i < bytes.length; i += 3) split.push(bytes.subarray(i, i + 3));
    const a = whole.finish();
    const b = split.finish();
    expect(b).toEqual(a);
    // 16007 samples: 50 full windows of 320 and one of 7
    expect(a.peak.length).toBe(51);
    expect(a.duration).toBeCloseTo(16_007 / 16_000, 9);
  });

  it('places window edges at exact multiples of sampleRate/rate', () => {
    const b = new WaveformBuilder(3); // 5333.33 samples per window
    b.push(new Uint8Array(16_000 * 2));
    expect(b.finish().peak.length).toBe(3);
  });
});
