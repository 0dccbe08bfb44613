import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, writeWav, type PlanarAudio } from '@dub/media';
import { fromGivenTracks } from './given-tracks.js';
import { separate } from './separate.js';

function tone(n: number, f: number, rate = 44100): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => 0.3 * Math.sin((2 * Math.PI * f * i) / rate));
}

describe('fromGivenTracks', () => {
  let dir: string;
  const n = 20000;
  const speech: PlanarAudio = { sampleRate: 44100, channels: [tone(n, 220), tone(n, 230)] };
  const background: PlanarAudio = { sampleRate: 44100, channels: [tone(n, 50), tone(n, 60)] };
  const mix: PlanarAudio = { sampleRate: 44100, channels: [0, 1].map((c) => speech.channels[c]!.map((v, i) => v + background.channels[c]![i]!)) };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-given-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('uses both given tracks as they are', async () => {
    const out = await fromGivenTracks({ mix, speech, background });
    expect(out.speech).toBe(speech);
    expect(out.background).toBe(background);
  });

  it('derives background = mix - speech, and speech = mix - background', async () => {
    const a = await fromGivenTracks({ mix, speech });
    expect(a.speech).toBe(speech);
    const b = await fromGivenTracks({ mix, background });
    expect(b.background).toBe(background);
    for (let c = 0; c < 2; c++) {
      for (let i = 0; i < n; i += 97) {
        expect(a.background.channels[c]![i]).toBeCloseTo(background.channels[c]![i]!, 6);
        expect(b.speech.channels[c]![i]).toBeCloseTo(speech.channels[c]![i]!, 6);
      }
    }
  });

  it('maps a mono, shorter given track onto the mix (zero past its end)', async () => {
    const mono: PlanarAudio = { sampleRate: 44100, channels: [speech.channels[0]!.slice(0, n / 2)] };
    const out = await fromGivenTracks({ mix, speech: mono });
    expect(out.background.channels).toHaveLength(2);
    expect(out.background.channels[1]!.length).toBe(n);
    expect(out.background.channels[1]![100]).toBeCloseTo(mix.channels[1]![100]! - mono.channels[0]![100]!, 6);
    expect(out.background.channels[0]![n - 1]).toBeCloseTo(mix.channels[0]![n - 1]!, 6);
  });

  it('refuses no given track, a rate mismatch and mixed kinds', async () => {
    await expect(fromGivenTracks({ mix })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(fromGivenTracks({ mix, speech: { sampleRate: 16000, channels: [new Float32Array(10)] } })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(fromGivenTracks({ mix: 'x.wav', speech } as never)).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('derives a file track in windows; a given file at another rate is resampled first', async () => {
    const mixPath = path.join(dir, 'mix.wav');
    const bgPath = path.join(dir, 'bg-22k.wav');
    await writeWav(mixPath, mix, { format: 'float32' });
    // The background at 22.05 kHz: it is converted to the mix's rate before the subtraction.
    const bg22: PlanarAudio = { sampleRate: 22050, channels: [tone(n / 2, 50, 22050), tone(n / 2, 60, 22050)] };
    await writeWav(bgPath, bg22, { format: 'float32' });
    const progress: number[] = [];
    const out = await fromGivenTracks({ mix: mixPath, background: bgPath }, { speechPath: path.join(dir, 'speech.wav') }, { onProgress: (p) => progress.push(p.fraction) });
    expect(out).toEqual({ speech: path.join(dir, 'speech.wav'), background: bgPath });
    const derived = await readWav(out.speech);
    expect(derived.sampleRate).toBe(44100);
    expect(derived.channels[0]!.length).toBe(n);
    // Residue of the resampled 50 Hz tone is small next to the speech tone.
    let err = 0;
    let ref = 0;
    for (let i = 1000; i < n - 1000; i++) {
      err += (derived.channels[0]![i]! - speech.channels[0]![i]!) ** 2;
      ref += speech.channels[0]![i]! ** 2;
    }
    expect(10 * Math.log10(ref / err)).toBeGreaterThan(30);
    expect(progress.at(-1)).toBe(1);
  });

  it('separate() with given tracks runs no model and writes the derived track next to the mix', async () => {
    const mixPath = path.join(dir, 'clip.wav');
    const speechPath = path.join(dir, 'clip-speech.wav');
    await writeWav(mixPath, mix, { format: 'float32' });
    await writeWav(speechPath, speech, { format: 'float32' });
    const out = await separate(mixPath, { given: { speech: speechPath } });
    expect(out).toEqual({ speech: speechPath, background: path.join(dir, 'clip.background.wav') });
    const bg = await readWav(out.background);
    expect(bg.channels[0]![1234]).toBeCloseTo(background.channels[0]![1234]!, 6);
    const mem = await separate(mix, { given: { background } });
    expect(mem.speech.channels[1]![4321]).toBeCloseTo(speech.channels[1]![4321]!, 6);
  });
});
