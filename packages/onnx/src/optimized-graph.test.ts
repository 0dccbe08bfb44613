import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createThroughOptimizedGraph, optimizedGraphFile, optimizedGraphsOn, ort, tensorF32 } from './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const tiny = path.resolve(here, '..', 'fixtures', 'tiny.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-onnx-graph-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Session = Awaited<ReturnType<ReturnType<typeof ort>['InferenceSession']['create']>>;
const calls: { file: string; extra: Record<string, unknown> }[] = [];
const create = (file: string, extra: Record<string, unknown>): Promise<Session> => {
  calls.push({ file, extra });
  return ort().InferenceSession.create(file, { graphOptimizationLevel: 'all', executionProviders: ['cpu'], logSeverityLevel: 3, ...extra });
};
const outputs = async (s: Session): Promise<number[][]> => {
  const out = await s.run({ x: tensorF32(new Float32Array([1, 2, 3, 4, -1, 0.5, 7, 0]), [2, 4]) });
  return s.outputNames.map((n) => Array.from(out[n]!.data as Float32Array));
};

describe('optimized graphs kept per model, onnxruntime and CPU', () => {
  it('writes the graph once, then loads it with optimizations off: the same outputs as the model itself', async () => {
    const dir = path.join(tmp, 'a');
    const plain = await create(tiny, {});
    const first = await createThroughOptimizedGraph(tiny, '1.0.0', dir, create, 0);
    expect(first.wrote).toBeDefined();
    expect(fs.existsSync(first.wrote!)).toBe(true);
    expect(calls.at(-1)!.extra.optimizedModelFilePath).toMatch(/\.part\.onnx$/);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.part'))).toEqual([]);
    const second = await createThroughOptimizedGraph(tiny, '1.0.0', dir, create, 0);
    expect(second.loadedFrom).toBe(first.wrote);
    expect(calls.at(-1)).toEqual({ file: first.wrote, extra: { graphOptimizationLevel: 'disabled' } });
    expect(await outputs(second.session)).toEqual(await outputs(plain));
    expect(await outputs(first.session)).toEqual(await outputs(plain));
    // another onnxruntime is another graph
    expect((await optimizedGraphFile(tiny, '1.0.1', dir)).cached).toBe(false);
    for (const s of [plain, first.session, second.session]) await s.release();
  });
  it('replaces a damaged graph, and loads the model as it is where nothing can be written or it is small', async () => {
    const dir = path.join(tmp, 'b');
    const { target } = await optimizedGraphFile(tiny, '1.0.0', dir);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(target, 'not a model');
    const r = await createThroughOptimizedGraph(tiny, '1.0.0', dir, create, 0);
    expect(r.wrote).toBe(target);
    expect(fs.statSync(target).size).toBeGreaterThan(100);
    await r.session.release();
    const blocked = path.join(tmp, 'file-not-dir');
    fs.writeFileSync(blocked, '');
    const n = calls.length;
    const s = await createThroughOptimizedGraph(tiny, '1.0.0', path.join(blocked, 'sub'), create, 0);
    expect(s.wrote ?? s.loadedFrom).toBeUndefined();
    expect(calls.at(-1)).toEqual({ file: tiny, extra: {} });
    await s.session.release();
    const small = await createThroughOptimizedGraph(tiny, '1.0.0', path.join(tmp, 'c'), create);
    expect(small.wrote ?? small.loadedFrom).toBeUndefined();
    expect(fs.existsSync(path.join(tmp, 'c'))).toBe(false);
    expect(calls.length).toBe(n + 2);
    await small.session.release();
  });
  it("records the graph's model, and a new graph of an updated model removes the old one", async () => {
    const dir = path.join(tmp, 'd');
    const model = path.join(tmp, 'model-d.onnx');
    fs.copyFileSync(tiny, model);
    const first = await createThroughOptimizedGraph(model, '1.0.0', dir, create, 0);
    const stat = fs.statSync(model);
    expect(JSON.parse(fs.readFileSync(`${first.wrote!}.json`, 'utf8'))).toEqual({ source: model, size: stat.size, mtimeMs: stat.mtimeMs, ort: '1.0.0' });
    // a graph kept without a record (as before records) gets one when it is loaded
    fs.rmSync(`${first.wrote!}.json`);
    const again = await createThroughOptimizedGraph(model, '1.0.0', dir, create, 0);
    expect(again.loadedFrom).toBe(first.wrote);
    expect(fs.existsSync(`${first.wrote!}.json`)).toBe(true);
    // the model is updated: its new graph is written, the old one and its record go
    const later = (stat.mtimeMs + 5000) / 1000;
    fs.utimesSync(model, later, later);
    const updated = await createThroughOptimizedGraph(model, '1.0.0', dir, create, 0);
    expect(updated.wrote).not.toBe(first.wrote);
    expect(fs.readdirSync(dir).sort()).toEqual([path.basename(updated.wrote!), `${path.basename(updated.wrote!)}.json`].sort());
    for (const s of [first.session, again.session, updated.session]) await s.release();
  });
  it('DUB_ONNX_OPTIMIZED_GRAPHS turns it off, and refuses what it does not know', () => {
    expect(optimizedGraphsOn({})).toBe(true);
    expect(optimizedGraphsOn({ DUB_ONNX_OPTIMIZED_GRAPHS: 'off' })).toBe(false);
    expect(optimizedGraphsOn({ DUB_ONNX_OPTIMIZED_GRAPHS: '0' })).toBe(false);
    expect(() => optimizedGraphsOn({ DUB_ONNX_OPTIMIZED_GRAPHS: 'maybe' })).toThrow(/1\/on or 0\/off/);
  });
});
