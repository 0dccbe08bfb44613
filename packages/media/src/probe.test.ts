import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssetError } from '@dub/core';
import { assertDubbable, checkTrim, probe, probeSource } from './index.js';
import { ffmpeg, makeTone, makeVideo, tempDir } from '../test-support/media-fixtures.js';
import { itWithMedia, media } from '../../../test/support/media.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
  await makeVideo(tmp.file('av.mp4'), { duration: 3, width: 320, height: 240, fps: 25, sampleRate: 48000, channels: 2 });
  await makeVideo(tmp.file('video-only.mp4'), { duration: 2, audio: false });
  await makeTone(tmp.file('audio-only.m4a'), { duration: 2, codec: 'aac' });
  await writeFile(tmp.file('text.mp4'), 'this is not a video, just some text\n'.repeat(20));
  await ffmpeg(['-i', tmp.file('av.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', tmp.file('rotated.mp4')]);
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x48', '-frames:v', '1', tmp.file('still.png')]);
});
afterAll(async () => {
  await tmp.cleanup();
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  if (e === undefined) return undefined;
  expect(e).toBeInstanceOf(AssetError);
  return (e as AssetError).code;
}

describe('probe', () => {
  it('reports format, duration, size, video and audio streams', async () => {
    const info = await probe(tmp.file('av.mp4'));
    expect(info.format).toContain('mp4');
    expect(info.duration).toBeGreaterThan(2.9);
    expect(info.duration).toBeLessThan(3.2);
    expect(info.size).toBeGreaterThan(1000);
    expect(info.video).toMatchObject({ codec: 'h264', width: 320, height: 240, fps: 25, rotation: 0, displayWidth: 320, displayHeight: 240, frames: 75, pixelFormat: 'yuv420p' });
    expect(info.audio).toHaveLength(1);
    expect(info.audio[0]).toMatchObject({ codec: 'aac', channels: 2, sampleRate: 48000 });
  });

  it('reads the rotation', async () => {
    const info = await probe(tmp.file('rotated.mp4'));
    expect(info.video?.rotation).toBe(90);
    expect(info.video?.displayWidth).toBe(240);
    expect(info.video?.displayHeight).toBe(320);
  });

  itWithMedia(['talking-head-vertical.mp4'], 'probes a real recording', async () => {
    const info = await probeSource(media('talking-head-vertical.mp4'));
    expect(info.video).toMatchObject({ codec: 'h264', width: 720, height: 1080, fps: 25 });
    expect(info.audio[0]).toMatchObject({ codec: 'aac', sampleRate: 44100, channels: 2 });
    expect(info.duration).toBeCloseTo(4.1, 0);
  });
});

describe('classification into asset error codes', () => {
  it('a good video passes', async () => {
    await expect(probeSource(tmp.file('av.mp4'))).resolves.toBeTruthy();
  });
  it('a video without audio -> missing_audio_track', async () => {
    expect(await codeOf(probeSource(tmp.file('video-only.mp4')))).toBe('missing_audio_track');
  });
  it('an audio-only file -> unsupported_media', async () => {
    const info = await probe(tmp.file('audio-only.m4a'));
    expect(info.video).toBeUndefined();
    expect(info.audio).toHaveLength(1);
    expect(() => assertDubbable(info)).toThrow(AssetError);
    expect(await codeOf(probeSource(tmp.file('audio-only.m4a')))).toBe('unsupported_media');
  });
  it('a text file renamed .mp4 -> unsupported_media', async () => {
    expect(await codeOf(probe(tmp.file('text.mp4')))).toBe('unsupported_media');
  });
  it('a missing file -> unsupported_media', async () => {
    expect(await codeOf(probe(tmp.file('nope.mp4')))).toBe('unsupported_media');
  });
  it('a still image -> unsupported_media', async () => {
    expect(await codeOf(probeSource(tmp.file('still.png')))).toBe('unsupported_media');
  });
});

describe('checkTrim', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
      return undefined;
    } catch (e) {
      expect(e).toBeInstanceOf(AssetError);
      return (e as AssetError).code;
    }
  };
  it('defaults to the whole duration', () => {
    expect(checkTrim(10)).toEqual({ start: 0, end: 10 });
    expect(checkTrim(10, 2)).toEqual({ start: 2, end: 10 });
    expect(checkTrim(10, undefined, 4)).toEqual({ start: 0, end: 4 });
    expect(checkTrim(10, 1.5, 10)).toEqual({ start: 1.5, end: 10 });
  });
  it('start or end outside the duration -> time_out_of_range', () => {
    expect(code(() => checkTrim(10, 12))).toBe('time_out_of_range');
    expect(code(() => checkTrim(10, 10))).toBe('time_out_of_range');
    expect(code(() => checkTrim(10, 2, 11))).toBe('time_out_of_range');
    expect(code(() => checkTrim(10, undefined, 10.5))).toBe('time_out_of_range');
  });
  it('end <= start or negative values -> invalid_input', () => {
    expect(code(() => checkTrim(10, 5, 5))).toBe('invalid_input');
    expect(code(() => checkTrim(10, 6, 3))).toBe('invalid_input');
    expect(code(() => checkTrim(10, -1))).toBe('invalid_input');
    expect(code(() => checkTrim(10, undefined, -2))).toBe('invalid_input');
    expect(code(() => checkTrim(10, Number.NaN))).toBe('invalid_input');
    // The order rule is checked before the range: it needs no media.
    expect(code(() => checkTrim(10, 20, 15))).toBe('invalid_input');
  });
  it('tolerates an end a hair past a rounded duration', () => {
    expect(checkTrim(9.9995, 0, 10)).toEqual({ start: 0, end: 9.9995 });
  });
});
