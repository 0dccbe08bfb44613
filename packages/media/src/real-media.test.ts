/** The same operations on real recordings from the shared media folder (skipped where absent). */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { extractAudio, probeSource, readWav, thumbnail, WavReader } from './index.js';
import { tempDir } from '../test-support/media-fixtures.js';
import { itWithMedia, media } from '../../../test/support/media.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp.cleanup();
});

describe('real recordings', () => {
  itWithMedia(['talking-head-480.mp4'], 'talking-head-480.mp4: probe, 16 kHz mono speech, poster frame', async () => {
    const file = media('talking-head-480.mp4');
    const info = await probeSource(file);
    expect(info.video).toMatchObject({ width: 480, height: 480 });
    expect(info.duration).toBeCloseTo(33.6, 0);
    const wav = await extractAudio(file, tmp.file('th.wav'), { sampleRate: 16000, channels: 1 });
    expect(Math.abs(wav.duration - info.duration)).toBeLessThan(0.1);
    const x = (await readWav(wav.file)).channels[0]!;
    let e = 0;
    for (const v of x) e += v * v;
    expect(Math.sqrt(e / x.length)).toBeGreaterThan(0.01);
    const thumb = await thumbnail(file, tmp.file('th.jpg'), { width: 240 });
    expect(thumb).toMatchObject({ width: 240, height: 240 });
    expect(thumb.time).toBeCloseTo(info.duration * 0.1, 3);
  });

  itWithMedia(['talking-head-vertical.mp4'], 'talking-head-vertical.mp4: portrait thumbnail', async () => {
    const thumb = await thumbnail(media('talking-head-vertical.mp4'), tmp.file('v.jpg'), { width: 360 });
    expect(thumb).toMatchObject({ width: 360, height: 540 });
  });

  itWithMedia(['jfk.wav'], 'jfk.wav: the streaming reader matches the whole-file read', async () => {
    const file = media('jfk.wav');
    const whole = await readWav(file);
    const r = await WavReader.open(file);
    expect(r.sampleRate).toBe(whole.sampleRate);
    expect(r.frames).toBe(whole.channels[0]!.length);
    const win = await r.read(40000, 3000);
    expect(win[0]).toEqual(whole.channels[0]!.subarray(40000, 43000));
    await r.close();
  });
});
