/**
 * Running a plan: spans with a model whose answer is known (speech = 0.25 x, background = 0.75 x
 * the window), the pass-through outside them and the cross-fades at their edges; no model at all
 * for the `none` plan (separate() must not even load one).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext, type Progress } from '@dub/core';
import { readWav, writeWav } from '@dub/media';
import { MemorySink, planarSource } from './audio-io.js';
import { passThrough, runSpans } from './plan-runner.js';
import { SegmentRunner } from './segment-runner.js';
import { separate } from './separate.js';
import { ScaledSegmentModel } from './testing/scaled-model.js';
import type { SeparationEngine } from './types.js';

const RATE = 1000;

function signal(n: number, k: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.013 * k) + 0.3 * Math.cos(i * 0.0071));
}

describe('runSpans', () => {
  const n = 20_000;
  const audio = { sampleRate: RATE, channels: [signal(n, 1), signal(n, 3)] };

  it('separates inside the spans, passes the mix through outside, cross-fades at inner edges', async () => {
    const model = new ScaledSegmentModel(1000, RATE, 0.25, false);
    const speech = new MemorySink(2, n);
    const background = new MemorySink(2, n);
    const progress: Progress[] = [];
    // spans in seconds: [3, 7) and [12, 20) (the second touches the end: no fade there)
    const modelled = await runSpans(new SegmentRunner(model), planarSource(audio), { speech, background }, [{ start: 12, end: 25 }, { start: 3, end: 7 }], 0.25, resolveContext({ onProgress: (p) => progress.push(p) }), { fade: 0.5 });
    expect(modelled).toBe(4000 + 8000);
    expect(speech.written).toBe(n);
    expect(background.written).toBe(n);
    const fade = 500;
    const w = (i: number): number => {
      const inSpan = (a: number, b: number, fadeIn: boolean, fadeOut: boolean) => {
        if (i < a || i >= b) return undefined;
        let x = 1;
        if (fadeIn && i - a < fade) x = Math.min(x, (i - a + 0.5) / fade);
        if (fadeOut && b - i <= fade) x = Math.min(x, (b - i - 0.5) / fade);
        return x;
      };
      return inSpan(3000, 7000, true, true) ?? inSpan(12000, 20000, true, false) ?? 0;
    };
    for (let c = 0; c < 2; c++) {
      const x = audio.channels[c]!;
      for (let i = 0; i < n; i++) {
        const wi = w(i);
        expect(speech.channels[c]![i]).toBeCloseTo(wi * 0.25 * x[i]!, 5);
        expect(background.channels[c]![i]).toBeCloseTo(wi * 0.75 * x[i]! + (1 - wi) * x[i]!, 5);
      }
    }
    // Fewer windows than the whole input would take, progress ends at 1 and never goes back.
    expect(model.runs).toBeLessThan(26);
    expect(progress.at(-1)!.fraction).toBeCloseTo(1, 6);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.fraction).toBeGreaterThanOrEqual(progress[i - 1]!.fraction);
  });

  it('no spans: the mix is the background, the speech silence, no window runs', async () => {
    const model = new ScaledSegmentModel(1000, RATE);
    const speech = new MemorySink(2, n);
    const background = new MemorySink(2, n);
    expect(await runSpans(new SegmentRunner(model), planarSource(audio), { speech, background }, [], 0.25, resolveContext())).toBe(0);
    expect(model.runs).toBe(0);
    expect(Array.from(background.channels[1]!)).toEqual(Array.from(audio.channels[1]!));
    expect(speech.channels[0]!.every((v) => v === 0)).toBe(true);
  });

  it('passThrough sends the mix to the track asked for (mono duplicated)', async () => {
    const mono = { sampleRate: RATE, channels: [signal(3000, 2)] };
    const speech = new MemorySink(2, 3000);
    const background = new MemorySink(2, 3000);
    await passThrough(planarSource(mono), { speech, background }, 'speech', resolveContext());
    for (let c = 0; c < 2; c++) expect(Array.from(speech.channels[c]!)).toEqual(Array.from(mono.channels[0]!));
    expect(background.channels[0]!.every((v) => v === 0)).toBe(true);
  });
});

describe('separate() with a plan', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-plan-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('mode none loads no model: speech = the source, background = silence, at 44.1 kHz stereo', async () => {
    const mix = path.join(dir, 'mix.wav');
    const x = signal(44100, 5);
    await writeWav(mix, { sampleRate: 44100, channels: [x] }, { format: 'float32' });
    // An engine that records any use of it.
    let used = 0;
    const engine = { id: 'spy', sampleRate: 44100, channels: 2, separate: () => (used++, Promise.reject(new Error('the model ran'))), dispose: async () => void used++ } as unknown as SeparationEngine;
    const out = await separate(mix, { plan: { mode: 'none', background: false, spans: [] }, engineInstance: engine, speechPath: path.join(dir, 's.wav'), backgroundPath: path.join(dir, 'b.wav') });
    expect(used).toBe(0);
    const s = await readWav(out.speech);
    const b = await readWav(out.background);
    expect(s.sampleRate).toBe(44100);
    expect(s.channels).toHaveLength(2);
    expect(Array.from(s.channels[1]!)).toEqual(Array.from(x));
    expect(b.channels[0]!.length).toBe(44100);
    expect(b.channels.every((c) => c.every((v) => v === 0))).toBe(true);
  });

  it('rejects a plan with a bad mode or span', async () => {
    const audio = { sampleRate: 44100, channels: [signal(100, 1)] };
    await expect(separate(audio, { plan: { mode: 'some' as 'none', background: false, spans: [] } })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(separate(audio, { plan: { mode: 'spans', background: true, spans: [{ start: 2, end: 1 }] } })).rejects.toMatchObject({ code: 'validation_error' });
  });
});
