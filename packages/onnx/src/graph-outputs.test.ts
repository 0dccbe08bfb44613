import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelError } from '@dub/core';
import { graphOutputsModelFile, graphOutputsTrimmed, keepGraphOutputs, ort, SessionCache, tensorF32 } from './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// x [2, 4] -> y (an affine map of x), z (y's rows summed): y is both an output and z's input
const tiny = path.resolve(here, '..', 'fixtures', 'tiny.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-onnx-outputs-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const x = () => ({ x: tensorF32(new Float32Array([1, 2, 3, 4, -1, 0.5, 7, 0]), [2, 4]) });

describe('a model loaded with only the graph outputs read', () => {
  it('DUB_ONNX_GRAPH_OUTPUTS: trim (default) or all', () => {
    expect(graphOutputsTrimmed({})).toBe(true);
    expect(graphOutputsTrimmed({ DUB_ONNX_GRAPH_OUTPUTS: 'trim' })).toBe(true);
    expect(graphOutputsTrimmed({ DUB_ONNX_GRAPH_OUTPUTS: 'ALL' })).toBe(false);
    expect(() => graphOutputsTrimmed({ DUB_ONNX_GRAPH_OUTPUTS: 'some' })).toThrow(/trim or all/);
  });

  it('drops the other outputs from the list; the kept one computes the same', async () => {
    const bytes = new Uint8Array(fs.readFileSync(tiny));
    const onlyZ = keepGraphOutputs(bytes, ['z']);
    expect(onlyZ.dropped).toEqual(['y']);
    expect(onlyZ.bytes.length).toBeLessThan(bytes.length);
    const full = await ort().InferenceSession.create(bytes);
    const trimmed = await ort().InferenceSession.create(onlyZ.bytes);
    // y is still computed (z reads it), no longer an output
    expect(trimmed.outputNames).toEqual(['z']);
    expect(Array.from((await trimmed.run(x())).z!.data as Float32Array)).toEqual(Array.from((await full.run(x())).z!.data as Float32Array));
    const onlyY = keepGraphOutputs(bytes, ['y']);
    expect(onlyY.dropped).toEqual(['z']);
    const y = await ort().InferenceSession.create(onlyY.bytes);
    expect(y.outputNames).toEqual(['y']);
    expect(Array.from((await y.run(x())).y!.data as Float32Array)).toEqual(Array.from((await full.run(x())).y!.data as Float32Array));
    // all kept: the model itself, not a copy
    const both = keepGraphOutputs(bytes, ['z', 'y']);
    expect(both.dropped).toEqual([]);
    expect(both.bytes).toBe(bytes);
    for (const s of [full, trimmed, y]) await s.release();
  });

  it('refuses an output the model does not have, and an empty list', () => {
    const bytes = new Uint8Array(fs.readFileSync(tiny));
    expect(() => keepGraphOutputs(bytes, ['y', 'attentions'])).toThrow(ModelError);
    expect(() => keepGraphOutputs(bytes, ['y', 'attentions'])).toThrow(/no graph output "attentions"/);
    expect(() => keepGraphOutputs(bytes, [])).toThrow(/at least one/);
  });

  it('is made once per model file and outputs, then taken from the folder', async () => {
    const dir = path.join(tmp, 'derived');
    const first = await graphOutputsModelFile(tiny, ['z'], { dir });
    expect(first).toMatchObject({ made: true, dropped: ['y'] });
    expect(path.dirname(first.file!)).toBe(dir);
    const again = await graphOutputsModelFile(tiny, ['z'], { dir });
    expect(again).toEqual({ file: first.file, dropped: ['y'], made: false });
    // other outputs, another file
    const y = await graphOutputsModelFile(tiny, ['y'], { dir });
    expect(y.file).not.toBe(first.file);
    // nothing to drop: the model itself, and nothing written but the record
    const all = await graphOutputsModelFile(tiny, ['y', 'z'], { dir });
    expect(all).toMatchObject({ file: tiny, dropped: [] });
    expect((await graphOutputsModelFile(tiny, ['y', 'z'], { dir })).made).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.onnx')).length).toBe(2);
  });

  it('SessionCache: `outputs` is its own session of the file, released with the file', async () => {
    const cacheHome = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tmp;
    const cache = new SessionCache();
    try {
      const full = await cache.get(tiny);
      const onlyZ = await cache.get(tiny, { outputs: ['z'] });
      expect(onlyZ).not.toBe(full);
      expect(await cache.get(tiny, { outputs: ['z'] })).toBe(onlyZ);
      expect(onlyZ.path).toBe(tiny);
      expect(onlyZ.outputNames).toEqual(['z']);
      expect(full.outputNames).toEqual(['y', 'z']);
      expect(Array.from((await onlyZ.run(x())).z!.data as Float32Array)).toEqual([22.5, 15.5]);
      await expect(cache.get(tiny, { outputs: ['w'] })).rejects.toThrow(/cannot load ONNX model .*no graph output "w"/);
      expect(cache.size).toBe(2);
      await cache.release(tiny);
      expect(cache.size).toBe(0);
      // DUB_ONNX_GRAPH_OUTPUTS=all: the model as shipped, whatever the caller asks
      process.env.DUB_ONNX_GRAPH_OUTPUTS = 'all';
      expect((await cache.get(tiny, { outputs: ['z'] })).outputNames).toEqual(['y', 'z']);
    } finally {
      delete process.env.DUB_ONNX_GRAPH_OUTPUTS;
      await cache.disposeAll();
      if (cacheHome === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = cacheHome;
    }
  });
});
