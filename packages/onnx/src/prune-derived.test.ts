import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedModelFile, type Derivation } from './derived-model.js';
import { PART_FILE_MAX_AGE_MS, pruneDerivedModels } from './prune-derived.js';

let tmp: string;
let models: string;
let derived: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-prune-'));
  models = path.join(tmp, 'models');
  derived = path.join(tmp, 'derived');
  fs.mkdirSync(models);
  fs.mkdirSync(derived);
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A derivation that changes every model: its bytes reversed. */
const reversed: Derivation<{ n: number }> = {
  suffix: 'rev',
  key: 'rev 1',
  derive: (b) => ({ bytes: b.slice().reverse(), changed: true, facts: { n: b.length } }),
};

function model(name: string, bytes: number[]): string {
  const f = path.join(models, name);
  fs.writeFileSync(f, Buffer.from(bytes));
  return f;
}

/** A derived file and its record, as derived-model.ts and optimized-graph.ts write them. */
function kept(name: string, source: string, size: number, mtimeMs: number): string {
  const f = path.join(derived, name);
  fs.writeFileSync(f, 'graph');
  fs.writeFileSync(`${f}.json`, JSON.stringify({ source, size, mtimeMs }));
  return f;
}

describe('pruning the derived-models folder', () => {
  it('removes the files of changed and removed models, keeps the rest', async () => {
    const a = model('a.onnx', [1, 2, 3]);
    const b = model('b.onnx', [4, 5]);
    const stA = fs.statSync(a);
    const stB = fs.statSync(b);
    const current = kept('a.1111.optimized.onnx', a, stA.size, stA.mtimeMs);
    const changed = kept('b.2222.optimized.onnx', b, stB.size + 1, stB.mtimeMs);
    const removed = kept('c.3333.optimized.onnx', path.join(models, 'c.onnx'), 10, 1);
    const unrecorded = path.join(derived, 'd.4444.optimized.onnx');
    fs.writeFileSync(unrecorded, 'graph');
    const recordBytes = fs.statSync(`${changed}.json`).size + fs.statSync(`${removed}.json`).size;
    const r = await pruneDerivedModels(derived);
    expect(r.removed.sort()).toEqual([changed, `${changed}.json`, removed, `${removed}.json`].sort());
    expect(r.bytes).toBe(2 * 'graph'.length + recordBytes);
    expect(fs.existsSync(current) && fs.existsSync(`${current}.json`)).toBe(true);
    expect(fs.existsSync(unrecorded)).toBe(true);
  });

  it('removes part files only once they are old', async () => {
    const young = path.join(derived, 'e.5555.optimized.onnx.123.ab12cd34.part.onnx');
    const old = path.join(derived, 'f.6666.rev.onnx.456.part');
    fs.writeFileSync(young, 'x');
    fs.writeFileSync(old, 'x');
    const past = (Date.now() - PART_FILE_MAX_AGE_MS - 60_000) / 1000;
    fs.utimesSync(old, past, past);
    const r = await pruneDerivedModels(derived);
    expect(r.removed).toEqual([old]);
    expect(fs.existsSync(young)).toBe(true);
  });

  it('follows a chain: the graph of a derived file goes with it', async () => {
    const a = model('a.onnx', [1, 2, 3]);
    const first = kept('a.1111.rev.onnx', a, 99, 1); // a changed since
    const stFirst = fs.statSync(first);
    // sorted before its source in the folder's listing, so it is found stale in the second pass
    const graph = kept('0-a.1111.rev.7777.optimized.onnx', first, stFirst.size, stFirst.mtimeMs);
    const r = await pruneDerivedModels(derived);
    expect(r.removed).toContain(first);
    expect(r.removed).toContain(graph);
    expect(fs.readdirSync(derived)).toEqual([]);
  });

  it('is what a new derived file does: the file of the model before its update goes', async () => {
    const a = model('a.onnx', [1, 2, 3]);
    const before = await derivedModelFile(a, reversed, derived);
    expect(before.made).toBe(true);
    expect(fs.readFileSync(before.file!)).toEqual(Buffer.from([3, 2, 1]));
    fs.writeFileSync(a, Buffer.from([1, 2, 3, 4]));
    const after = await derivedModelFile(a, reversed, derived);
    expect(after.made).toBe(true);
    expect(after.file).not.toBe(before.file);
    expect(fs.existsSync(before.file!)).toBe(false);
    expect(fs.existsSync(`${before.file!}.json`)).toBe(false);
    expect(fs.readdirSync(derived).sort()).toEqual([path.basename(after.file!), `${path.basename(after.file!)}.json`].sort());
  });

  it('prunes nothing in a folder that is not there', async () => {
    expect(await pruneDerivedModels(path.join(tmp, 'absent'))).toEqual({ removed: [], bytes: 0 });
  });
});
