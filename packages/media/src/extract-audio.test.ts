import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Progress } from '@dub/core';
import { extractAudio, readWav, resample, WavReader } from './index.js';
import { makeSpeech, makeVideo, tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
  await makeVideo(tmp.file('av.mp4'), { duration: 4, freq: 1000, sampleRate: 48000, channels: 2 });
  await makeSpeech(tmp.file('speech.wav'), 'Ask not what your country can do for you.');
});
afterAll(async () => {
  await tmp.cleanup();
});

/** Dominant frequency estimate by zero crossings. */
function zeroCrossingHz(x: Float32Array, rate: number): number {
  let z = 0;
  for (let i = 1; i < x.length; i++) if ((x[i - 1]! < 0) !== (x[i]! < 0)) z++;
  return (z / 2) * (rate / x.length);
}

describe('extractAudio', () => {
  it('mono 16 kHz pcm16 for speech models, with progress', async () => {
    const seen: Progress[] = [];
    const info = await extractAudio(tmp.file('av.mp4'), tmp.file('mono16k.wav'), { sampleRate: 16000, channels: 1 }, { onProgress: (p) => seen.push(p) });
    expect(info).toMatchObject({ sampleRate: 16000, channels: 1 });
    expect(info.duration).toBeGreaterThan(3.95);
    expect(info.duration).toBeLessThan(4.1);
    const wav = await readWav(tmp.file('mono16k.wav'));
    expect(wav.format).toBe('pcm16');
    expect(zeroCrossingHz(wav.channels[0]!.subarray(1600, 60000), 16000)).toBeCloseTo(1000, -1);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[seen.length - 1]!.fraction).toBe(1);
    expect(seen[0]!.stage).toBe('extract_audio');
  });

  it('stereo 44.1 kHz float32 for separation', async () => {
    const info = await extractAudio(tmp.file('av.mp4'), tmp.file('st44.wav'), { sampleRate: 44100, channels: 2, format: 'float32' });
    expect(info).toMatchObject({ sampleRate: 44100, channels: 2 });
    const r = await WavReader.open(tmp.file('st44.wav'));
    expect(r.sampleFormat).toBe('float32');
    expect(r.frames).toBe(info.frames);
    await r.close();
  });

  it('only a window [start, end)', async () => {
    const info = await extractAudio(tmp.file('av.mp4'), tmp.file('window.wav'), { sampleRate: 16000, channels: 1, start: 1, end: 2.5 });
    expect(info.frames).toBeGreaterThanOrEqual(23990);
    expect(info.frames).toBeLessThanOrEqual(24010);
  });

  it('espeak-ng speech to 16 kHz mono', async () => {
    const src = await readWav(tmp.file('speech.wav'));
    const info = await extractAudio(tmp.file('speech.wav'), tmp.file('speech16k.wav'), { sampleRate: 16000, channels: 1 });
    expect(info.duration).toBeCloseTo(src.channels[0]!.length / src.sampleRate, 2);
    const wav = await readWav(tmp.file('speech16k.wav'));
    let energy = 0;
    for (const v of wav.channels[0]!) energy += v * v;
    expect(energy / wav.channels[0]!.length).toBeGreaterThan(1e-4);
  });
});

describe('extractAudio errors', () => {
  it('a video without audio -> missing_audio_track; not media -> unsupported_media', async () => {
    await makeVideo(tmp.file('silent.mp4'), { duration: 1, audio: false });
    await expect(extractAudio(tmp.file('silent.mp4'), tmp.file('x.wav'), { sampleRate: 16000, channels: 1 })).rejects.toMatchObject({ code: 'missing_audio_track' });
    await writeFile(tmp.file('junk.mp4'), 'not media at all');
    await expect(extractAudio(tmp.file('junk.mp4'), tmp.file('y.wav'), { sampleRate: 16000, channels: 1 })).rejects.toMatchObject({ code: 'unsupported_media' });
  });
});

describe('resample', () => {
  it('changes the rate and channel count of a WAV', async () => {
    const info = await resample(tmp.file('speech.wav'), tmp.file('speech-48k-st.wav'), { sampleRate: 48000, channels: 2, format: 'float32' });
    const src = await readWav(tmp.file('speech.wav'));
    expect(info).toMatchObject({ sampleRate: 48000, channels: 2 });
    expect(info.duration).toBeCloseTo(src.channels[0]!.length / src.sampleRate, 2);
  });
});
