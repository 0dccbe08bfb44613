/**
 * The engines' speech starts with the picture: a video whose first frame is 0.3 s after the
 * timeline's origin gets the dubbed speech and its words from 0.3 s on, so the mouth of frame i
 * moves with the speech heard at i / fps after the first frame.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg } from '@dub/media';
import { speechFromPictureStart } from './audio/picture-start.js';

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
