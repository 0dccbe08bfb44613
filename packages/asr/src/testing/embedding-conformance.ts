/**
 * Conformance suite every speaker-embedding engine passes: fixed dimension, finite values,
 * deterministic, and different voices give different vectors.
 */
import { describe, expect, it } from 'vitest';
import { engineContractProblems } from '@dub/core';
import type { SpeakerEmbeddingEngine } from '../speakers/types.js';

export interface EmbeddingConformanceOptions {
  /** Two 16 kHz mono clips of different speakers, at least 1.5 s each. */
  voices: () => Promise<[Float32Array, Float32Array]>;
}

export function embeddingConformance(name: string, create: () => Promise<SpeakerEmbeddingEngine>, o: EmbeddingConformanceOptions): void {
  describe(`speaker embedding conformance: ${name}`, () => {
    it('is an Engine: id, label, dispose()', async () => expect(engineContractProblems(await create())).toEqual([]));
    it('gives finite vectors of one dimension, deterministically', async () => {
      const e = await create();
      const [a, b] = await o.voices();
      const va = await e.embed(a);
      const vb = await e.embed(b.subarray(0, 24000));
      expect(va.length).toBeGreaterThan(0);
      expect(vb.length).toBe(va.length);
      expect(e.dimension).toBe(va.length);
      for (const v of [...va, ...vb]) expect(Number.isFinite(v)).toBe(true);
      expect(Array.from(await e.embed(a))).toEqual(Array.from(va));
    });
    it('separates two voices', async () => {
      const e = await create();
      const [a, b] = await o.voices();
      const va = await e.embed(a);
      const vb = await e.embed(b);
      let diff = 0;
      for (let i = 0; i < va.length; i++) diff += Math.abs(va[i]! - vb[i]!);
      expect(diff).toBeGreaterThan(1e-3);
    });
  });
}
