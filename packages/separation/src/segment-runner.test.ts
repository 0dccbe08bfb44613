import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext, type Progress } from '@dub/core';
import { readWav, WavReader, WavWriter, writeWav } from '@dub/media';
import { MemorySink, planarSource } from './audio-io.js';
import { SegmentRunner } from './segment-runner.js';
import { ScaledSegmentModel } from './testing/scaled-model.js';

function ramp(n: number, k: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.013 * k) + i / n);
}

describe('SegmentRunner', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-runner-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  for (const [total, segment, overlap] of [
    [10000, 1000, 0.25],
    [10001, 1000, 0.5],
    [999, 1000, 0.25],
    [1000, 1000, 0],
    [12345, 777, 0.9],
  ] as const) {
    it(`reassembles ${total} samples from segments of ${segment} (overlap ${overlap}) exactly`, async () => {
      const model = new ScaledSegmentModel(segment);
      const runner = new SegmentRunner(model);
      const audio = { sampleRate: 44100, channels: [ramp(total, 1), ramp(total, 3)] };
      const speech = new MemorySink(2, total);
      const background = new MemorySink(2, total);
      const progress: Progress[] = [];
      const n = await runner.run(planarSource(audio), { speech, background }, overlap, resolveContext({ onProgress: (p) => progress.push(p) }));
      expect(n).toBe(total);
      expect(speech.written).toBe(total);
      expect(background.written).toBe(total);
      for (let c = 0; c < 2; c++) {
        for (let i = 0; i < total; i++) {
          expect(speech.channels[c]![i]).toBeCloseTo(0.25 * audio.channels[c]![i]!, 5);
          expect(background.channels[c]![i]).toBeCloseTo(0.75 * audio.channels[c]![i]!, 5);
        }
      }
      expect(progress.length).toBe(model.runs);
      expect(progress.at(-1)!.fraction).toBe(1);
      expect(progress.every((p) => p.stage === 'separation')).toBe(true);
    });
  }

  it('an empty input runs no window and gives empty tracks', async () => {
    const model = new ScaledSegmentModel(100);
    const speech = new MemorySink(2, 0);
    const progress: number[] = [];
    const n = await new SegmentRunner(model).run(planarSource({ sampleRate: 44100, channels: [new Float32Array(0)] }), { speech, background: new MemorySink(2, 0) }, 0.25, resolveContext({ onProgress: (p) => progress.push(p.fraction) }));
    expect(n).toBe(0);
    expect(model.runs).toBe(0);
    expect(speech.channels[0]!.length).toBe(0);
    expect(progress).toEqual([1]);
  });

  it('feeds the model full windows centred with zeros past the ends', async () => {
    const model = new ScaledSegmentModel(100);
    const audio = { sampleRate: 44100, channels: [Float32Array.from({ length: 40 }, (_, i) => i + 1)] };
    await new SegmentRunner(model).run(planarSource(audio), { speech: new MemorySink(2, 40), background: new MemorySink(2, 40) }, 0.25, resolveContext());
    const w = model.windows[0]!;
    expect(w.length).toBe(100);
    expect(Array.from(w.subarray(0, 30))).toEqual(new Array(30).fill(0));
    expect(Array.from(w.subarray(30, 70))).toEqual(Array.from(audio.channels[0]!));
    expect(Array.from(w.subarray(70))).toEqual(new Array(30).fill(0));
  });

  it('mono input feeds both channels; the same runner serves a WAV source window by window', async () => {
    const total = 5000;
    const file = path.join(dir, 'mono.wav');
    const mono = ramp(total, 2);
    await writeWav(file, { sampleRate: 44100, channels: [mono] }, { format: 'float32' });
    const reader = await WavReader.open(file);
    const model = new ScaledSegmentModel(600);
    const speech = new MemorySink(2, total);
    const background = new MemorySink(2, total);
    try {
      await new SegmentRunner(model).run(reader, { speech, background }, 0.25, resolveContext());
    } finally {
      await reader.close();
    }
    const back = (await readWav(file)).channels[0]!;
    for (let i = 0; i < total; i++) {
      expect(speech.channels[0]![i]).toBeCloseTo(0.25 * back[i]!, 5);
      expect(speech.channels[1]![i]).toBeCloseTo(0.25 * back[i]!, 5);
    }
  });

  it('checks the signal between windows', async () => {
    const model = new ScaledSegmentModel(100);
    const controller = new AbortController();
    const audio = { sampleRate: 44100, channels: [ramp(1000, 1), ramp(1000, 2)] };
    const run = new SegmentRunner(model).run(
      planarSource(audio),
      { speech: new MemorySink(2, 1000), background: new MemorySink(2, 1000) },
      0.25,
      resolveContext({ signal: controller.signal, onProgress: (p) => p.fraction > 0.2 && controller.abort() }),
    );
    await expect(run).rejects.toMatchObject({ code: 'aborted' });
    expect(model.runs).toBeLessThan(5);
  });

  it('streams a long WAV through the runner in bounded memory', async () => {
    // 10 minutes of stereo 44.1 kHz: 212 MB as float samples, written and read in windows.
    const rate = 44100;
    const total = 600 * rate;
    const input = path.join(dir, 'long.wav');
    const writer = await WavWriter.create(input, { sampleRate: rate, channels: 2, format: 'pcm16' });
    const block = 1 << 16;
    for (let s = 0; s < total; s += block) {
      const n = Math.min(block, total - s);
      const l = Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin((s + i) * 0.001));
      await writer.write([l, l.map((v) => -v)]);
    }
    await writer.close();

    const model = new ScaledSegmentModel(343980, 44100, 0.25, false);
    const reader = await WavReader.open(input);
    const speech = await WavWriter.create(path.join(dir, 'long-speech.wav'), { sampleRate: rate, channels: 2, format: 'pcm16' });
    const background = await WavWriter.create(path.join(dir, 'long-background.wav'), { sampleRate: rate, channels: 2, format: 'pcm16' });
    const base = process.memoryUsage().rss;
    const samples: [number, number][] = [];
    try {
      await new SegmentRunner(model).run(reader, { speech, background }, 0.25, resolveContext({ onProgress: (p) => samples.push([p.fraction, process.memoryUsage().rss - base]) }));
      await Promise.all([speech.close(), background.close()]);
    } finally {
      await reader.close();
    }
    // Garbage from the reader and writer comes and goes; what is held does not grow with the input.
    const inputBytes = total * 2 * 4;
    const peakOf = (from: number, to: number): number => Math.max(...samples.filter(([f]) => f > from && f <= to).map(([, r]) => r));
    expect(peakOf(0, 1)).toBeLessThan(inputBytes / 2);
    expect(peakOf(2 / 3, 1)).toBeLessThan(peakOf(0, 1 / 3) + 32e6);
    const out = await WavReader.open(path.join(dir, 'long-background.wav'));
    try {
      expect(out.frames).toBe(total);
      const [l] = await out.read(total - 1000, 1000);
      for (let i = 0; i < 1000; i += 50) expect(l![i]).toBeCloseTo(0.75 * 0.5 * Math.sin((total - 1000 + i) * 0.001), 3);
    } finally {
      await out.close();
    }
  }, 300_000);
});
