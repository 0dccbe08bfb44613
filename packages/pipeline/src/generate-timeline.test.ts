import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { readWav, writeWav } from '@dub/media';
import { renderSpeechTimeline, timelineSampleRate } from './generate-timeline.js';

const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'timeline-rates-'));
afterAll(() => fsp.rm(dir, { recursive: true, force: true }));

function tone(rate: number, hz: number, seconds: number): Float32Array {
  const x = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < x.length; i++) x[i] = 0.5 * Math.sin((2 * Math.PI * hz * i) / rate);
  return x;
}

/** Where the signal is louder than -30 dBFS (in seconds), and its frequency from zero crossings there. */
function measure(x: Float32Array, rate: number, from: number, to: number): { start: number; end: number; hz: number } {
  let first = -1;
  let last = -1;
  for (let i = Math.round(from * rate); i < Math.round(to * rate); i++) {
    if (Math.abs(x[i]!) > 0.0316) {
      if (first < 0) first = i;
      last = i;
    }
  }
  let crossings = 0;
  for (let i = first + 1; i <= last; i++) if (x[i - 1]! < 0 !== x[i]! < 0) crossings++;
  return { start: first / rate, end: last / rate, hz: crossings / 2 / ((last - first) / rate) };
}

describe('speech timeline with segments at several sample rates', () => {
  it('runs at the highest rate of the job', () => {
    expect(timelineSampleRate([22050, 16000, 22050], 44100)).toBe(22050);
    expect(timelineSampleRate([], 22050)).toBe(22050);
  });

  it('resamples a 16 kHz segment beside a 22.05 kHz one: both keep their place, length and pitch', async () => {
    const a = path.join(dir, 'a-16k.wav');
    const b = path.join(dir, 'b-22k.wav');
    await writeWav(a, { sampleRate: 16000, channels: [tone(16000, 1000, 0.5)] }, { format: 'float32' });
    await writeWav(b, { sampleRate: 22050, channels: [tone(22050, 500, 0.5)] }, { format: 'float32' });
    const rate = timelineSampleRate([16000, 22050], 0);
    const out = path.join(dir, 'speech.wav');
    const frames = await renderSpeechTimeline(
      out,
      [
        { file: a, start: 0.2, frames: 8000, sampleRate: 16000 },
        { file: b, start: 1.2, frames: 11025, sampleRate: 22050 },
      ],
      rate,
      2,
      resolveContext(),
    );
    expect(frames).toBe(44100);
    const w = await readWav(out);
    expect(w.sampleRate).toBe(22050);
    const x = w.channels[0]!;
    const first = measure(x, 22050, 0, 1);
    expect(first.start).toBeCloseTo(0.2, 2);
    expect(first.end - first.start).toBeCloseTo(0.5, 2);
    expect(Math.abs(first.hz - 1000)).toBeLessThan(10);
    const second = measure(x, 22050, 1, 2);
    expect(second.start).toBeCloseTo(1.2, 2);
    expect(Math.abs(second.hz - 500)).toBeLessThan(5);
    // the resampled copies are gone
    expect((await fsp.readdir(dir)).filter((f) => f.startsWith('rates-'))).toEqual([]);
  });
});
