import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@dub/core';
import { readWav, resample, writeWav } from '@dub/media';
import { resolveEngineOptions } from './options.js';
import { SegmentedSeparationEngine } from './segmented-engine.js';
import { ScaledSegmentModel } from './testing/scaled-model.js';

describe('SegmentedSeparationEngine', () => {
  let dir: string;
  let released = 0;
  const options = () => resolveEngineOptions({ config: loadConfig({}), tmpDir: dir });
  const make = (segment = 4410) => new SegmentedSeparationEngine('scaled', new ScaledSegmentModel(segment), options(), async () => void released++);

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-engine-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('converts a WAV at another rate with ffmpeg, writes stereo tracks at its own rate and removes the temporary file', async () => {
    const input = path.join(dir, 'mono-22k.wav');
    const n = 22050 * 2;
    await writeWav(input, { sampleRate: 22050, channels: [Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin(i * 0.05))] }, { format: 'float32' });
    const reference = path.join(dir, 'reference-44k.wav');
    await resample(input, reference, { sampleRate: 44100, format: 'float32' });
    const engine = make();
    const before = await fs.readdir(dir);
    const out = await engine.separate({ path: input, speechPath: path.join(dir, 's.wav'), backgroundPath: path.join(dir, 'b.wav') });
    const speech = await readWav(out.speech);
    const background = await readWav(out.background);
    const ref = (await readWav(reference)).channels[0]!;
    expect(speech.sampleRate).toBe(44100);
    expect(speech.channels).toHaveLength(2);
    expect(speech.channels[0]!.length).toBe(ref.length);
    for (let i = 0; i < ref.length; i += 101) {
      expect(speech.channels[1]![i]).toBeCloseTo(0.25 * ref[i]!, 5);
      expect(background.channels[0]![i]).toBeCloseTo(0.75 * ref[i]!, 5);
    }
    expect((await fs.readdir(dir)).sort()).toEqual([...before, 's.wav', 'b.wav'].sort());
    await engine.dispose();
  });

  it('runs calls one at a time and refuses work once disposed', async () => {
    const engine = make(1000);
    const audio = { sampleRate: 44100, channels: [Float32Array.from({ length: 5000 }, (_, i) => i / 5000)] };
    const order: string[] = [];
    const a = engine.separate(audio, { onProgress: (p) => p.fraction === 1 && order.push('a') });
    const b = engine.separate(audio, { onProgress: (p) => p.fraction === 1 && order.push('b') });
    const [ra, rb] = await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect(ra.speech.channels[0]![2500]).toBeCloseTo(0.125, 6);
    expect(rb.background.channels[1]![2500]).toBeCloseTo(0.375, 6);
    const before = released;
    await engine.dispose();
    await engine.dispose();
    expect(released).toBe(before + 1);
    await expect(engine.separate(audio)).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('refuses a file that is not a WAV', async () => {
    const bogus = path.join(dir, 'bogus.wav');
    await fs.writeFile(bogus, 'not a wav');
    await expect(make().separate({ path: bogus, speechPath: path.join(dir, 'x.wav'), backgroundPath: path.join(dir, 'y.wav') })).rejects.toMatchObject({ code: 'unsupported_media' });
  });
});
