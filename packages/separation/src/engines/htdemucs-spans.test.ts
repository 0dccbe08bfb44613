/**
 * HTDemucs on spans (a plan's `spans` mode) on a real mix: 12 s of music-coffee alone, then jfk
 * over it. The model runs on the speech span only: the separated speech there beats the mix by
 * several dB of SI-SDR, and before the span the background is the mix sample for sample and the
 * speech silence.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readWav, runFfmpeg, type PlanarAudio } from '@dub/media';
import { separate } from '../separate.js';
import { siSdr } from '../testing/metrics.js';
import { describeWithMedia, MEDIA_DIR } from '../../../../test/support/media.js';

const MEDIA = MEDIA_DIR;

describeWithMedia(['jfk.wav', 'music-coffee.wav'], 'htdemucs on spans', () => {
  let dir: string;
  let speech: PlanarAudio;
  let music: PlanarAudio;
  const lead = 12;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-htdemucs-spans-'));
    const conv = async (name: string, seconds: number, delay: number) => {
      const out = path.join(dir, `${name}.wav`);
      await runFfmpeg(['-i', path.join(MEDIA, name), '-t', String(seconds), '-af', `adelay=${delay * 1000}:all=1,apad`, '-t', String(lead + 9), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', out]);
      return readWav(out);
    };
    speech = await conv('jfk.wav', 9, lead);
    music = await conv('music-coffee.wav', lead + 9, 0);
  });
  afterAll(async () => {
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('separates the span, passes the mix through before it', async () => {
    const n = speech.channels[0]!.length;
    const gain = 0.5;
    const mix: PlanarAudio = { sampleRate: 44100, channels: [0, 1].map((c) => speech.channels[c]!.map((v, i) => v + gain * music.channels[c]![i]!)) };
    const out = await separate(mix, { plan: { mode: 'spans', background: true, spans: [{ start: lead - 1, end: n / 44100 }] } });
    const from = Math.round(lead * 44100);
    const part = (a: PlanarAudio | Float32Array[], s: number, e: number) => ('channels' in a ? a.channels : a).map((c) => c.subarray(s, e));
    const ref = part(speech, from, n);
    const gainDb = siSdr(part(out.speech, from, n), ref) - siSdr(part(mix, from, n), ref);
    expect(gainDb).toBeGreaterThan(6);
    const before = Math.round((lead - 1) * 44100);
    for (let c = 0; c < 2; c++) {
      expect(Array.from(out.background.channels[c]!.subarray(0, before))).toEqual(Array.from(mix.channels[c]!.subarray(0, before)));
      expect(out.speech.channels[c]!.subarray(0, before).every((v) => v === 0)).toBe(true);
    }
  }, 300_000);
});
