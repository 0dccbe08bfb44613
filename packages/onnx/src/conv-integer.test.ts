import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { convIntegerAsMatMul, convIntegerModelFile, int8GemmExact } from './conv-integer.js';
import { ort, SessionCache, tensorF32 } from './onnx.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// made by scripts/make-conv-integer-fixture.py: eight ConvInteger nodes on one quantized input
const fixture = path.resolve(here, '..', 'fixtures', 'conv-integer.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-conv-integer-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A seeded signal with a wide range, so the dynamic quantization uses all 256 levels. */
function input(length: number, seed: number): Float32Array {
  const x = new Float32Array(8 * length);
  let s = seed;
  for (let i = 0; i < x.length; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    x[i] = (s / 2147483648 - 0.3) * 7 * Math.sin(i / 17);
  }
  return x;
}

describe('ConvInteger as MatMulInteger', () => {
  it('rewrites the 1-D group-1 nodes and leaves the others', () => {
    const r = convIntegerAsMatMul(new Uint8Array(fs.readFileSync(fixture)));
    // pointwise, k3, k5 dilation 3, k3 stride 2, k12 stride 6, k7 (zero point in raw_data); not group 2 nor one without the input zero point
    expect(r.rewritten).toBe(6);
    expect(r.kept).toBe(2);
    expect(r.bytes.length).toBeGreaterThan(0);
  });

  it('gives the same int32 outputs, bit for bit, at several lengths', async () => {
    const plain = new SessionCache({ threads: 1 });
    const rewritten = new SessionCache({ threads: 1 });
    const cacheHome = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tmp;
    try {
      const a = await plain.get(fixture);
      const b = await rewritten.get(fixture, { convIntegerAsMatMul: true });
      // the rewrite was kept in the cache folder, with its record
      const kept = fs.readdirSync(path.join(tmp, 'dub', 'derived'));
      expect(kept.some((f) => /\.conv-as-matmul-[su]8\.onnx$/.test(f))).toBe(true);
      // uint8 weights (exact on every CPU); int8 ones where this CPU's u8s8 GEMM is exact (VNNI, AMX)
      const variants: [string, { run(f: Record<string, ReturnType<typeof tensorF32>>): Promise<Record<string, { dims: readonly number[]; data: unknown }>> }][] = [['cache', b]];
      for (const int8Weights of int8GemmExact() ? [false, true] : [false]) {
        const made = await convIntegerModelFile(fixture, { dir: path.join(tmp, 'variants'), int8Weights });
        const s = await ort().InferenceSession.create(made.file!, { intraOpNumThreads: 1 });
        variants.push([int8Weights ? 'int8 weights' : 'uint8 weights', s]);
      }
      for (const [length, seed] of [[6, 3], [9, 5], [50, 11], [301, 13]] as const) {
        const feeds = { x: tensorF32(input(length, seed), [1, 8, length]) };
        const ya = await a.run(feeds);
        for (const [variant, model] of variants) {
          const yb = await model.run(feeds);
          for (const name of a.outputNames) {
            expect(yb[name]!.dims, `${variant}: ${name} at length ${length}`).toEqual(ya[name]!.dims);
            expect(Array.from(yb[name]!.data as Int32Array), `${variant}: ${name} at length ${length}`).toEqual(Array.from(ya[name]!.data as Int32Array));
          }
        }
      }
    } finally {
      if (cacheHome === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = cacheHome;
      await plain.disposeAll();
      await rewritten.disposeAll();
    }
  });

  it('takes the rewrite from the cache the second time, and makes it again when the model changes', async () => {
    const dir = path.join(tmp, 'cache');
    const model = path.join(tmp, 'model.onnx');
    await fsp.copyFile(fixture, model);
    const first = await convIntegerModelFile(model, { dir });
    expect(first).toMatchObject({ rewritten: 6, kept: 2, made: true });
    const second = await convIntegerModelFile(model, { dir });
    expect(second).toMatchObject({ file: first.file, rewritten: 6, made: false });
    // a new file at the same path (another size or time) is rewritten again
    await fsp.appendFile(model, new Uint8Array(0));
    await fsp.utimes(model, new Date(), new Date(Date.now() + 5000));
    const third = await convIntegerModelFile(model, { dir });
    expect(third.made).toBe(true);
    expect(third.file).not.toBe(first.file);
  });

  it('loads a model without ConvInteger as it is', async () => {
    const tiny = path.resolve(here, '..', 'fixtures', 'tiny.onnx');
    const r = await convIntegerModelFile(tiny, { dir: path.join(tmp, 'cache') });
    expect(r).toMatchObject({ file: tiny, rewritten: 0, kept: 0 });
    expect((await convIntegerModelFile(tiny, { dir: path.join(tmp, 'cache') })).made).toBe(false);
  });
});
