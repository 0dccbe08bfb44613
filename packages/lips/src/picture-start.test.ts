/**
 * The engines' speech starts with the picture: a video whose first frame is 0.3 s after the
 * timeline's origin gets the dubbed speech and its words from 0.3 s on, so the mouth of frame i
 * moves with the speech heard at i / fps after the first frame; at a variable frame rate, frame i
 * is driven by the speech at its own time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg } from '@dub/media';
import { speechFromPictureStart } from './audio/picture-start.js';
import { frameLevels } from './audio/speech-envelope.js';
import { visemeWeights } from './audio/phonemes.js';
import { videoInfo } from './video/video-info.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'lips-picture-start-'));
  // a picture 0.3 s after the sound (an empty edit), and a speech track with a click at 1.0 s
  await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=gray:s=64x64:r=25:d=2', '-f', 'lavfi', '-i', 'sine=f=440:d=2.3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', path.join(dir, 'plain.mp4')]);
  await runFfmpeg(['-itsoffset', '0.3', '-i', path.join(dir, 'plain.mp4'), '-i', path.join(dir, 'plain.mp4'), '-map', '0:v', '-map', '1:a', '-c', 'copy', path.join(dir, 'late.mp4')]);
  await runFfmpeg(['-f', 'lavfi', '-i', "aevalsrc='if(between(t\\,1\\,1.01)\\,0.9\\,0)':s=16000:d=2.3", '-c:a', 'pcm_f32le', path.join(dir, 'speech.wav')]);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('speechFromPictureStart', () => {
  it('takes the speech and the words from the picture start', async () => {
    const words = [{ text: 'hola', start: 1.0, end: 1.4 }, { text: 'ya', start: 0.1, end: 0.2 }];
    const r = await speechFromPictureStart(path.join(dir, 'late.mp4'), { file: path.join(dir, 'speech.wav'), words }, dir, {}, {});
    expect(r.offset).toBeCloseTo(0.3, 3);
    const x = (await readWav(r.speech.file)).channels[0]!;
    const onset = x.findIndex((v) => v > 0.5) / 16000;
    expect(Math.abs(onset - 0.7)).toBeLessThan(0.0005);
    // a word before the picture is gone, the others move with it
    expect(r.speech.words).toHaveLength(1);
    expect(r.speech.words![0]!.start).toBeCloseTo(0.7, 6);
    expect(r.speech.words![0]!.end).toBeCloseTo(1.1, 6);
  });

  it('leaves speech alone when the picture starts at the origin', async () => {
    const speech = { file: path.join(dir, 'speech.wav') };
    const r = await speechFromPictureStart(path.join(dir, 'plain.mp4'), speech, dir, {}, {});
    expect(r.offset).toBe(0);
    expect(r.speech).toBe(speech);
  });
});

describe('a variable frame rate drives each frame by the speech at its own time', () => {
  it('videoInfo has the frame times; frameLevels and visemeWeights read the speech there', async () => {
    // 25 fps for 1 s, then every third frame: frame 29 is frame 39 of the rate, at 1.56 s (at a constant rate it would be 1.16 s)
    const vfr = path.join(dir, 'vfr.mp4');
    await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=gray:s=64x64:r=25:d=2', '-vf', "select='lt(t\\,1)+not(mod(n\\,3))'", '-fps_mode', 'vfr', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', vfr]);
    const info = await videoInfo(vfr);
    expect(info.frameTimes).toBeDefined();
    expect(info.frameTimes![29]).toBeCloseTo(1.56, 6);
    // speech only in [1.55, 1.61)
    const wav = path.join(dir, 'burst.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', "aevalsrc='if(between(t\\,1.55\\,1.61)\\,0.5*sin(2*PI*300*t)\\,0)':s=16000:d=2", '-c:a', 'pcm_f32le', wav]);
    const timed = await frameLevels(wav, info.fps, info.frameTimes!.length, undefined, info.frameTimes);
    const constant = await frameLevels(wav, info.fps, info.frameTimes!.length);
    expect(timed[29]).toBeGreaterThan(-20);
    expect(constant[29]).toBeLessThan(-60);
    // a word over [1.53, 1.63) covers frame 29 (centre 1.58 s) only
    const w = visemeWeights([{ text: 'a', start: 1.53, end: 1.63 }], [['a']], info.fps, info.frameTimes!.length, info.frameTimes);
    expect(Number.isNaN(w[29]!)).toBe(false);
    expect([...w].filter((v) => !Number.isNaN(v))).toHaveLength(1);
    // a constant-rate video has none
    expect((await videoInfo(path.join(dir, 'plain.mp4'))).frameTimes).toBeUndefined();
  });
});
