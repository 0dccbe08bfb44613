import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext, type Manifest } from '@dub/core';
import { SessionCache, tensorF32 } from '@dub/onnx';
import { FbankExtractor, fbankWindow, type FbankWindow } from './dsp/kaldi-fbank.js';
import { createEngineEnv } from './engine-env.js';
import { createOnnxEmbedding, DEFAULT_EMBEDDING_WINDOW, embeddingWindowOf, resolveOnnxEmbeddingOptions } from './speakers/onnx-embedding.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

// Reference values from scripts/make-fbank-references.py (an independent numpy implementation).
const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fbank-references.json'), 'utf8')) as {
  sampleRate: number;
  nMels: number;
  frames: number;
  signal16: number[];
  povey: number[];
  hamming: number[];
};
const signal = Float32Array.from(ref.signal16, (v) => v / 32768);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

describe('Kaldi fbank against numpy references', () => {
  for (const window of ['povey', 'hamming'] as FbankWindow[]) {
    it(`${window} window: every log-mel value within 1e-3 of the reference`, () => {
      const f = new FbankExtractor({ window, nMels: ref.nMels, inputScale: 32768, cmn: false }).compute(signal);
      expect(f.frames).toBe(ref.frames);
      expect(maxAbsDiff(f.data, ref[window])).toBeLessThan(1e-3);
    });
  }

  it('the two windows give features that differ by far more than that', () => {
    expect(maxAbsDiff(ref.povey, ref.hamming)).toBeGreaterThan(0.1);
  });

  it("Kaldi's window shapes", () => {
    const h = fbankWindow('hamming', 400);
    expect(h[0]).toBeCloseTo(0.08, 12);
    expect(h[399]).toBeCloseTo(0.08, 12);
    expect(fbankWindow('povey', 400)[0]).toBe(0);
    expect(() => fbankWindow('blackman' as FbankWindow, 400)).toThrow(/unknown fbank window/);
  });
});

describe('speaker embeddings take the window of their model', () => {
  const sessions = new SessionCache();
  afterAll(() => sessions.disposeAll());

  it('WeSpeaker (the manifest says hamming); a model without the field gets the documented default; CAM++-style entries povey', () => {
    expect(embeddingWindowOf('wespeaker-resnet34')).toBe('hamming');
    expect(resolveOnnxEmbeddingOptions().fbank.window).toBe('hamming');
    expect(embeddingWindowOf('not-in-the-manifest')).toBe(DEFAULT_EMBEDDING_WINDOW);
    const manifest: Manifest = { models: [{ id: 'campplus', description: '', license: '', source: '', files: [], fbank: { window: 'povey' } }] };
    expect(resolveOnnxEmbeddingOptions({ model: 'campplus' }, manifest).fbank.window).toBe('povey');
    expect(resolveOnnxEmbeddingOptions({ model: 'campplus', fbank: { window: 'hamming' } }, manifest).fbank.window).toBe('hamming');
    const bad: Manifest = { models: [{ id: 'x', description: '', license: '', source: '', files: [], fbank: { window: 'blackman' as 'povey' } }] };
    expect(() => resolveOnnxEmbeddingOptions({ model: 'x' }, bad)).toThrow(/fbank.window "blackman"/);
  });

  it('the engine feeds the model the features of that window', async () => {
    const { env } = createEngineEnv({ sessions, models: { searchDirs: [FIXTURES] } }, resolveContext().logger);
    const opts = resolveOnnxEmbeddingOptions({ model: 'speaker-embedding-tiny-test', fileName: 'embedding.onnx' });
    expect(opts.fbank.window).toBe('hamming');
    const engine = await createOnnxEmbedding(opts, env);
    const got = await engine.embed(signal);
    const model = await sessions.get(path.join(FIXTURES, 'speaker-embedding-tiny-test', 'embedding.onnx'));
    const direct = async (window: FbankWindow) => {
      const f = new FbankExtractor({ window, nMels: 80, inputScale: 32768, cmn: true }).compute(signal);
      const out = await model.run({ feats: tensorF32(f.data, [1, f.frames, 80]) });
      return out.embs!.data as Float32Array;
    };
    expect(maxAbsDiff(got, await direct('hamming'))).toBeLessThan(1e-5);
    expect(maxAbsDiff(got, await direct('povey'))).toBeGreaterThan(1e-3);
  });
});
