import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelError } from '@dub/core';
import { onnxSpinning, SessionCache, sessionCacheOf, tensorF32 } from './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const tiny = path.resolve(here, '..', 'fixtures', 'tiny.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-onnx-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('SessionCache on a tiny generated model', () => {
  it('runs the model and checks feeds against input names', async () => {
    const cache = new SessionCache();
    const m = await cache.get(tiny);
    expect(m.provider).toBe('cpu');
    expect(m.inputNames).toEqual(['x']);
    expect(m.outputNames).toEqual(['y', 'z']);
    const out = await m.run({ x: tensorF32(new Float32Array([1, 2, 3, 4, 0, 0, 0, 0]), [2, 4]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([2.5, 3, 6, 11, 0.5, -1, 0, 3]);
    expect(Array.from(out.z!.data as Float32Array)).toEqual([22.5, 2.5]);
    await expect(m.run({ input: tensorF32(new Float32Array(4), [1, 4]) })).rejects.toThrow(/missing \[x\].*unexpected \[input\].*input: float32\[1,4\]/);
    await expect(m.run({ x: tensorF32(new Float32Array(3), [1, 3]) })).rejects.toThrow(ModelError);
    await expect(m.run({ x: tensorF32(new Float32Array(3), [1, 3]) })).rejects.toThrow(/x: float32\[1,3\]/);
    await cache.disposeAll();
  });
  it('memoizes concurrent loads, releases idempotently, evicts failures', async () => {
    const cache = new SessionCache();
    const [a, b] = await Promise.all([cache.get(tiny), cache.get(tiny)]);
    expect(a).toBe(b);
    expect(cache.size).toBe(1);
    expect(cache.providers.get(tiny)).toBe('cpu');
    await cache.release(tiny);
    await cache.release(tiny);
    expect(cache.size).toBe(0);
    const c = await cache.get(tiny);
    expect(c).not.toBe(a);
    const bad = path.join(tmp, 'bad.onnx');
    fs.writeFileSync(bad, 'not a model');
    await expect(cache.get(bad)).rejects.toThrow(ModelError);
    await new Promise((r) => setTimeout(r, 0));
    expect(cache.size).toBe(1);
    await cache.disposeAll();
    await cache.disposeAll();
    expect(cache.size).toBe(0);
  });
  it('falls back to CPU when CUDA is asked for but not loadable', async () => {
    const cache = new SessionCache({ device: 'cuda' });
    const m = await cache.get(tiny);
    // On hosts with the CUDA provider installed this is 'cuda'; CI machines have no GPU.
    expect(['cpu', 'cuda']).toContain(m.provider);
    const out = await m.run({ x: tensorF32(new Float32Array([0, 0, 0, 0]), [1, 4]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([0.5, -1, 0, 3]);
    await cache.disposeAll();
  });
});

describe('DUB_ONNX_SPINNING', () => {
  it('spins by default (onnxruntime\'s own), parks on 0/off, and refuses anything else', () => {
    expect(onnxSpinning({})).toBe(true);
    expect(onnxSpinning({ DUB_ONNX_SPINNING: '' })).toBe(true);
    for (const v of ['1', 'on', 'ON', 'true', 'yes']) expect(onnxSpinning({ DUB_ONNX_SPINNING: v }), v).toBe(true);
    for (const v of ['0', 'off', ' Off ', 'false', 'no']) expect(onnxSpinning({ DUB_ONNX_SPINNING: v }), v).toBe(false);
    expect(() => onnxSpinning({ DUB_ONNX_SPINNING: 'sometimes' })).toThrow(/DUB_ONNX_SPINNING must be 1\/on or 0\/off, got "sometimes"/);
  });
  it('off, sessions are made with the pools parked and compute the same', async () => {
    const before = process.env.DUB_ONNX_SPINNING;
    process.env.DUB_ONNX_SPINNING = '0';
    try {
      const cache = new SessionCache();
      const out = await (await cache.get(tiny)).run({ x: tensorF32(new Float32Array([1, 2, 3, 4, 0, 0, 0, 0]), [2, 4]) });
      expect(Array.from(out.y!.data as Float32Array)).toEqual([2.5, 3, 6, 11, 0.5, -1, 0, 3]);
      await cache.disposeAll();
    } finally {
      if (before === undefined) delete process.env.DUB_ONNX_SPINNING;
      else process.env.DUB_ONNX_SPINNING = before;
    }
  });
});

describe('sessionCacheOf', () => {
  it('gives back the runtime\'s SessionCache and refuses any other store', () => {
    const cache = new SessionCache();
    expect(sessionCacheOf(cache)).toBe(cache);
    expect(() => sessionCacheOf({ providers: new Map(), size: 0, release: async () => undefined, disposeAll: async () => undefined })).toThrow(TypeError);
  });
});
