import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dequantizedMatMulAsDynamic, dequantizedMatMulDynamic, dequantizedMatMulModelFile } from './dequant-matmul.js';
import { ort, SessionCache, tensorF32 } from './onnx.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// made by scripts/make-dequant-matmul-fixture.py: the q8 Whisper decoders' output projection in an If, and two MatMuls to leave alone
const fixture = path.resolve(here, '..', 'fixtures', 'dequant-matmul.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-dqmm-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const feeds = (cache: boolean) => ({
  a: tensorF32(Float32Array.from({ length: 16 }, (_, i) => Math.sin(i * 1.7) * 3 - 0.4), [1, 16]),
  use_cache: new (ort().Tensor)('bool', Uint8Array.from([cache ? 1 : 0]), [1]),
});
const data = (t: { data: unknown } | undefined): number[] => Array.from(t!.data as Float32Array);

describe('MatMul on dequantized weights as DynamicQuantizeMatMul', () => {
  it('rewrites the one MatMul that alone reads a per-tensor dequantized table, inside the If', () => {
    const model = new Uint8Array(fs.readFileSync(fixture));
    const r = dequantizedMatMulAsDynamic(model);
    // not the else branch's (its table is also an output), nor the per-column one at the top
    expect(r.rewritten).toEqual(['then_proj']);
    // once rewritten, nothing is left to rewrite
    expect(dequantizedMatMulAsDynamic(r.bytes).rewritten).toEqual([]);
  });

  it('computes the product from the 8-bit table; everything else is bit for bit as before', async () => {
    const plain = new SessionCache({ threads: 1 });
    const dq = new SessionCache({ threads: 1 });
    const cacheHome = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tmp;
    try {
      const a = await plain.get(fixture);
      const b = await dq.get(fixture, { dequantizedMatMul: true });
      expect(fs.readdirSync(path.join(tmp, 'dub', 'derived')).some((f) => f.endsWith('.dqmm.onnx'))).toBe(true);
      // the rewrite is said (for the engine record); the model as shipped says nothing
      expect(b.runAs).toEqual([expect.stringMatching(/^1 MatMul on dequantized weights run as DynamicQuantizeMatMul .*not bit for bit.*DUB_ONNX_DEQUANT_MATMUL=float/)]);
      expect(dq.runAs.get(fixture)).toEqual(b.runAs);
      expect(a.runAs).toBeUndefined();
      expect(plain.runAs.has(fixture)).toBe(false);
      const [ya, yb] = [await a.run(feeds(true)), await b.run(feeds(true))];
      for (const name of ['row_f', 'table_f', 'per_column']) expect(data(yb[name]), name).toEqual(data(ya[name]));
      // the logits: `a` quantized to 8 bits per run, so within a few steps of its scale of the float product
      const [la, lb] = [data(ya.logits), data(yb.logits)];
      const range = Math.max(...la.map(Math.abs));
      const err = Math.max(...la.map((x, i) => Math.abs(x - lb[i]!)));
      expect(err).toBeGreaterThan(0); // another computation, not the float one
      expect(err).toBeLessThan(0.02 * range);
      expect(lb.indexOf(Math.max(...lb))).toBe(la.indexOf(Math.max(...la)));
      // the other branch is untouched
      const [za, zb] = [await a.run(feeds(false)), await b.run(feeds(false))];
      for (const name of ['logits', 'row_f', 'table_f', 'per_column']) expect(data(zb[name]), name).toEqual(data(za[name]));
    } finally {
      if (cacheHome === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = cacheHome;
      await plain.disposeAll();
      await dq.disposeAll();
    }
  });

  it('keeps the rewrite; a model without such a MatMul loads as it is', async () => {
    const dir = path.join(tmp, 'cache');
    const first = await dequantizedMatMulModelFile(fixture, { dir });
    expect(first).toMatchObject({ rewritten: ['then_proj'], made: true });
    expect(await dequantizedMatMulModelFile(fixture, { dir })).toMatchObject({ file: first.file, made: false });
    const tiny = path.resolve(here, '..', 'fixtures', 'tiny.onnx');
    expect(await dequantizedMatMulModelFile(tiny, { dir })).toMatchObject({ file: tiny, rewritten: [] });
    // asked for, nothing rewritten: it runs as shipped and says nothing
    const cache = new SessionCache({ threads: 1 });
    try {
      expect((await cache.get(tiny, { dequantizedMatMul: true })).runAs).toBeUndefined();
      expect(cache.runAs.size).toBe(0);
    } finally {
      await cache.disposeAll();
    }
  });

  it('DUB_ONNX_DEQUANT_MATMUL: dynamic by default, float as shipped, anything else an error', () => {
    expect(dequantizedMatMulDynamic({})).toBe(true);
    expect(dequantizedMatMulDynamic({ DUB_ONNX_DEQUANT_MATMUL: 'dynamic' })).toBe(true);
    expect(dequantizedMatMulDynamic({ DUB_ONNX_DEQUANT_MATMUL: 'float' })).toBe(false);
    expect(() => dequantizedMatMulDynamic({ DUB_ONNX_DEQUANT_MATMUL: 'int4' })).toThrow(/dynamic or float/);
  });
});
