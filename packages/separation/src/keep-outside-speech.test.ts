/**
 * Only speech is replaced: the background outside the speech regions is the mix itself, sample
 * for sample, cross-faded into the model's background (or silence) at the regions' padded edges,
 * with and without a model, in memory and in files (a mix at another rate is converted).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, writeWav, type PlanarAudio } from '@dub/media';
import { MemorySink, planarSource } from './audio-io.js';
import { keepOutsideSpeech, keptOutsideSpeech, replacedRegions, SpeechWeight } from './keep-outside-speech.js';
import { separate } from './separate.js';
import { isWavInput, type SeparationEngine, type SeparationInput, type SeparationOutput } from './types.js';

const RATE = 44100;

/** Noise-like but deterministic stereo "mix" of `seconds`. */
function mixOf(seconds: number, rate = RATE): PlanarAudio {
  const n = Math.round(seconds * rate);
  let x = 12345;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0), x / 2 ** 32 - 0.5);
  const l = Float32Array.from({ length: n }, () => 0.3 * next());
  const r = Float32Array.from({ length: n }, () => 0.3 * next());
  return { sampleRate: rate, channels: [l, r] };
}

/** Bit-equal (a plain loop: vitest's deep equality is slow on long arrays). */
function same(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** An engine whose background is half the mix and speech the other half: enough to tell the tracks apart. */
function halfEngine(): SeparationEngine {
  return {
    id: 'half',
    sampleRate: RATE,
    channels: 2,
    async separate<I extends SeparationInput>(input: I): Promise<SeparationOutput<I>> {
      if (isWavInput(input)) {
        const a = await readWav(input.path);
        const half = { sampleRate: RATE, channels: [0, 1].map((c) => a.channels[Math.min(c, a.channels.length - 1)]!.map((v) => v / 2)) };
        await writeWav(input.speechPath, half, { format: 'float32' });
        await writeWav(input.backgroundPath, half, { format: input.format ?? 'float32' });
        return { speech: input.speechPath, background: input.backgroundPath } as SeparationOutput<I>;
      }
      const a = input as PlanarAudio;
      const half = { sampleRate: RATE, channels: a.channels.map((c) => c.map((v) => v / 2)) };
      return { speech: half, background: half } as SeparationOutput<I>;
    },
    async dispose() {},
  };
}

describe('keep outside speech', () => {
  it('replaced regions are padded, joined across short gaps and clipped', () => {
    expect(replacedRegions([{ start: 1, end: 2 }, { start: 3, end: 4 }], 10)).toEqual([
      { start: 0.9, end: 2.1 },
      { start: 2.9, end: 4.1 },
    ]);
    expect(replacedRegions([{ start: 3, end: 4 }, { start: 1, end: 2 }, { start: 2.3, end: 2.5 }, { start: 9.95, end: 12 }], 10)).toEqual([
      { start: 0.9, end: 4.1 },
      { start: 9.85, end: 10 },
    ]);
    const k = keptOutsideSpeech([{ start: 1, end: 2 }], 10);
    expect(k).toMatchObject({ replacedSeconds: 1.2, fadeSeconds: 0.2, keptSeconds: 8.6, pad: 0.1, fade: 0.1 });
  });

  it('the weight is 1 in a region, 0 a fade beyond it, linear between', () => {
    const w = new Float32Array(100);
    new SpeechWeight([[40, 60]], 10).fill(0, w);
    expect(w[29]).toBe(0);
    expect(w[30]).toBeCloseTo(0.05, 6);
    expect(w[35]).toBeCloseTo(0.55, 6);
    expect(w.subarray(40, 60).every((v) => v === 1)).toBe(true);
    expect(w[69]).toBeCloseTo(0.05, 6);
    expect(w[70]).toBe(0);
  });

  it('no model (engine none): speech track = the mix, background = the mix outside speech, silence in it', async () => {
    const mix = mixOf(3);
    const speech = [{ start: 1, end: 2 }];
    const r = await separate(mix, { engine: 'none', plan: { mode: 'none', background: false, spans: [], speech } });
    expect(same(r.speech.channels[0]!, mix.channels[0]!)).toBe(true);
    const bg = r.background.channels;
    const at = (t: number) => Math.round(t * RATE);
    for (let c = 0; c < 2; c++) {
      // outside the padded region and its fade: the mix, bit for bit
      expect(same(bg[c]!.subarray(0, at(0.8)), mix.channels[c]!.subarray(0, at(0.8)))).toBe(true);
      expect(same(bg[c]!.subarray(at(2.2)), mix.channels[c]!.subarray(at(2.2)))).toBe(true);
      // in the padded region: silence
      expect(bg[c]!.subarray(at(0.9), at(2.1)).every((v) => v === 0)).toBe(true);
      // in the fade: a fraction of the mix
      const i = at(0.85);
      expect(bg[c]![i]! / mix.channels[c]![i]!).toBeCloseTo(0.5, 2);
    }
  });

  it('with a model: its background in speech, the mix outside, cross-faded', async () => {
    const mix = mixOf(3);
    const r = await separate(mix, { engineInstance: halfEngine(), plan: { mode: 'full', background: true, spans: [{ start: 0, end: 3 }], speech: [{ start: 1, end: 2 }] } });
    const at = (t: number) => Math.round(t * RATE);
    const m = mix.channels[1]!;
    const b = r.background.channels[1]!;
    expect(b[at(0.5)]).toBe(m[at(0.5)]);
    expect(b[at(1.5)]).toBeCloseTo(m[at(1.5)]! / 2, 7);
    expect(b[at(2.15)]! / m[at(2.15)]!).toBeCloseTo(0.75, 2);
    expect(b[at(2.5)]).toBe(m[at(2.5)]);
    // the speech track is the model's
    expect(r.speech.channels[1]![at(0.5)]).toBeCloseTo(m[at(0.5)]! / 2, 7);
  });

  it('without speech regions the background is the mix; a plan without `speech` keeps the old tracks', async () => {
    const mix = mixOf(1);
    const sink = new MemorySink(2, RATE);
    const k = await keepOutsideSpeech(planarSource(mix), null, [], sink);
    expect(same(sink.channels[0]!, mix.channels[0]!)).toBe(true);
    expect(k).toMatchObject({ keptSeconds: 1, replacedSeconds: 0, replaced: [] });
    const r = await separate(mix, { engine: 'none', plan: { mode: 'none', background: false, spans: [] } });
    expect(r.background.channels[0]!.every((v) => v === 0)).toBe(true);
  });

  describe('files', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-keep-'));
    });
    afterAll(async () => {
      await fsp.rm(dir, { recursive: true, force: true });
    });

    it('a 16 kHz mono WAV without a model: the background outside speech is the mix at 44.1 kHz, at its level', async () => {
      const input = path.join(dir, 'mix.wav');
      // a 440 Hz tone at -20 dBFS RMS: its level survives the conversion exactly enough to compare
      const n = 3 * 16000;
      const tone = Float32Array.from({ length: n }, (_, i) => 0.1 * Math.SQRT2 * Math.sin((2 * Math.PI * 440 * i) / 16000));
      await writeWav(input, { sampleRate: 16000, channels: [tone] }, { format: 'float32' });
      const out = await separate(input, { engine: 'none', tmpDir: dir, plan: { mode: 'none', background: false, spans: [], speech: [{ start: 1, end: 2 }] } });
      const bg = await readWav(out.background);
      expect(bg.sampleRate).toBe(RATE);
      expect(bg.channels.length).toBe(2);
      const rmsDb = (a: number, b: number) => {
        const x = bg.channels[0]!.subarray(Math.round(a * RATE), Math.round(b * RATE));
        return 10 * Math.log10(x.reduce((s, v) => s + v * v, 0) / x.length);
      };
      expect(rmsDb(0.1, 0.75)).toBeCloseTo(-20, 1);
      expect(rmsDb(2.3, 2.9)).toBeCloseTo(-20, 1);
      expect(rmsDb(0.95, 2.05)).toBe(-Infinity);
      expect((await fsp.readdir(dir)).filter((f) => f.includes('.keep-'))).toEqual([]);
    });

    it("a 44.1 kHz stereo WAV through an engine (spans plan): the engine's background in speech, the file's samples outside, pcm16 kept", async () => {
      const input = path.join(dir, 'mix44.wav');
      const mix = mixOf(4);
      await writeWav(input, mix, { format: 'float32' });
      const speechPath = path.join(dir, 's.wav');
      const backgroundPath = path.join(dir, 'b.wav');
      await separate(input, { engineInstance: halfEngine(), speechPath, backgroundPath, format: 'pcm16', plan: { mode: 'spans', background: true, spans: [{ start: 0.5, end: 3.5 }], speech: [{ start: 1.5, end: 2.5 }] } });
      const bg = await readWav(backgroundPath);
      const at = (t: number) => Math.round(t * RATE);
      const q = 1 / 32768;
      for (const t of [0.2, 1.2, 3.0]) expect(Math.abs(bg.channels[0]![at(t)]! - mix.channels[0]![at(t)]!)).toBeLessThanOrEqual(q);
      for (const t of [1.5, 2.0, 2.5]) expect(Math.abs(bg.channels[1]![at(t)]! - mix.channels[1]![at(t)]! / 2)).toBeLessThanOrEqual(q);
    });
  });
});
