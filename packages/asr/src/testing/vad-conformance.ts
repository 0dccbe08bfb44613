/**
 * Conformance suite every VAD engine passes: `vadConformance('silero', () => factory(env))`.
 * Runs inside vitest (import from '@dub/asr/testing').
 */
import { describe, expect, it } from 'vitest';
import { engineContractProblems } from '@dub/core';
import type { VadEngine } from '../vad/types.js';

function tone(seconds: number, freq: number, amp: number): Float32Array {
  const x = new Float32Array(Math.round(seconds * 16000));
  for (let i = 0; i < x.length; i++) x[i] = amp * Math.sin((2 * Math.PI * freq * i) / 16000);
  return x;
}

export interface VadConformanceOptions {
  /** 16 kHz mono speech the engine must find (at least 30% of its frames above 0.5; pauses count as frames). */
  speech: () => Promise<Float32Array>;
}

export function vadConformance(name: string, create: () => Promise<VadEngine>, o: VadConformanceOptions): void {
  describe(`VAD engine conformance: ${name}`, () => {
    it('is an Engine: id, label, dispose()', async () => expect(engineContractProblems(await create())).toEqual([]));
    it('gives one probability in [0, 1] per frame', async () => {
      const e = await create();
      const n = e.frameSamples * 10;
      const p = await e.createStream().process(tone(n / 16000, 440, 0.1));
      expect(p.length).toBe(10);
      for (const v of p) expect(v >= 0 && v <= 1).toBe(true);
    });
    it('rejects input that is not whole frames', async () => {
      const e = await create();
      await expect(e.createStream().process(new Float32Array(e.frameSamples + 1))).rejects.toThrow(RangeError);
    });
    it('hears no speech in digital silence', async () => {
      const e = await create();
      const p = await e.createStream().process(new Float32Array(e.frameSamples * 30));
      expect(Math.max(...p)).toBeLessThan(0.5);
    });
    it('finds speech in speech', async () => {
      const e = await create();
      const x = await o.speech();
      const padded = new Float32Array(Math.ceil(x.length / e.frameSamples) * e.frameSamples);
      padded.set(x);
      const p = await e.createStream().process(padded);
      expect(p.filter((v) => v > 0.5).length / p.length).toBeGreaterThan(0.3);
    });
    it('is deterministic: two streams over the same audio agree', async () => {
      const e = await create();
      const x = (await o.speech()).subarray(0, e.frameSamples * 40);
      const a = await e.createStream().process(x);
      const b = await e.createStream().process(x);
      expect(Array.from(a)).toEqual(Array.from(b));
    });
    it('keeps state across calls: frame by frame equals all at once', async () => {
      const e = await create();
      const x = (await o.speech()).subarray(0, e.frameSamples * 20);
      const whole = await e.createStream().process(x);
      const s = e.createStream();
      const parts: number[] = [];
      for (let i = 0; i < 20; i += 5) parts.push(...(await s.process(x.subarray(i * e.frameSamples, (i + 5) * e.frameSamples))));
      for (let i = 0; i < 20; i++) expect(parts[i]).toBeCloseTo(whole[i]!, 4);
    });
  });
}
