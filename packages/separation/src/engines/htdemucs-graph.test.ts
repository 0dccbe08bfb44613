/**
 * Which HTDemucs graph form runs: the split parts only when their plan names this model's sha256
 * and every part matches; otherwise the whole graph, with the reason. No ONNX runs here (the
 * numerical equality of the two forms is in htdemucs-signature.test.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelMissingError } from '@dub/core';
import { HTDEMUCS_SPLIT_FORMAT, resolveHtdemucsGraph, splitChoiceFromEnv } from './htdemucs-graph.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-htdemucs-graph-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let n = 0;
/** A models dir with a stand-in model file and a split plan over two part files. */
function setup(edit: (plan: Record<string, unknown>, dir: string) => void = () => undefined): { modelsDir: string; model: string } {
  const modelsDir = path.join(root, `m${n++}`);
  const splitDir = path.join(modelsDir, 'htdemucs', 'split');
  fs.mkdirSync(splitDir, { recursive: true });
  const modelBytes = Buffer.from(`model ${n}`);
  const model = path.join(modelsDir, 'htdemucs', 'htdemucs.onnx');
  fs.writeFileSync(model, modelBytes);
  const parts = ['a', 'b'].map((x, i) => {
    const bytes = Buffer.from(`part ${x}`);
    fs.writeFileSync(path.join(splitDir, `part-0${i}.onnx`), bytes);
    return { file: `part-0${i}.onnx`, sha256: sha(bytes), size: bytes.length, nodes: 1, inputs: i === 0 ? ['input', 'spec'] : ['t'], outputs: i === 0 ? ['t'] : ['output', 'time'] };
  });
  const plan: Record<string, unknown> = {
    format: HTDEMUCS_SPLIT_FORMAT,
    source: { file: 'htdemucs.onnx', sha256: sha(modelBytes), size: modelBytes.length },
    inputs: [{ name: 'input', shape: [1, 2, 343980] }, { name: 'spec', shape: [1, 4, 2048, 336] }],
    outputs: [{ name: 'output', shape: [1, 4, 4, 2048, 336] }, { name: 'time', shape: [1, 4, 2, 343980] }],
    parts,
  };
  edit(plan, splitDir);
  fs.writeFileSync(path.join(splitDir, 'plan.json'), JSON.stringify(plan));
  return { modelsDir, model };
}

describe('resolveHtdemucsGraph', () => {
  it('uses the parts on CPU when the plan matches the model and every part', async () => {
    const { modelsDir, model } = setup();
    const g = await resolveHtdemucsGraph(model, { modelsDir, device: 'cpu', split: undefined });
    expect(g.split?.parts.map((p) => path.basename(p.file))).toEqual(['part-00.onnx', 'part-01.onnx']);
    expect(g.sessionFile).toBe(path.join(modelsDir, 'htdemucs', 'split', 'part-00.onnx'));
    expect(g.reason).toMatch(/^2 consecutive parts of this graph/);
  });

  it('runs the whole graph, saying why, when the parts were made from another model', async () => {
    const { modelsDir, model } = setup((plan) => {
      (plan.source as { sha256: string }).sha256 = 'f'.repeat(64);
    });
    const g = await resolveHtdemucsGraph(model, { modelsDir, device: 'cpu', split: undefined });
    expect(g.split).toBeUndefined();
    expect(g.sessionFile).toBe(model);
    expect(g.reason).toMatch(/made from another htdemucs\.onnx.*fetch-npm-models/);
  });

  it('runs the whole graph when a part is missing or altered, and when there is no plan', async () => {
    const altered = setup((_plan, dir) => fs.appendFileSync(path.join(dir, 'part-01.onnx'), 'x'));
    expect((await resolveHtdemucsGraph(altered.model, { modelsDir: altered.modelsDir, device: 'cpu', split: undefined })).reason).toMatch(/part-01\.onnx does not match its plan/);
    const missing = setup((_plan, dir) => fs.rmSync(path.join(dir, 'part-00.onnx')));
    expect((await resolveHtdemucsGraph(missing.model, { modelsDir: missing.modelsDir, device: 'cpu', split: undefined })).reason).toMatch(/part-00\.onnx is missing/);
    const bad = setup((plan) => {
      plan.format = 'something/else';
    });
    expect((await resolveHtdemucsGraph(bad.model, { modelsDir: bad.modelsDir, device: 'cpu', split: undefined })).reason).toMatch(/is not a dub\.htdemucs-split\/1 plan/);
    const none = path.join(root, 'empty');
    fs.mkdirSync(path.join(none, 'htdemucs'), { recursive: true });
    const model = path.join(none, 'htdemucs', 'htdemucs.onnx');
    fs.writeFileSync(model, 'm');
    // The repository's own models/ folder may hold real parts (made for another file): still the whole graph here.
    const g = await resolveHtdemucsGraph(model, { modelsDir: none, device: 'cpu', split: undefined });
    expect(g.split).toBeUndefined();
  });

  it('an explicit choice wins: false runs the whole graph, true fails naming the fix when the parts cannot run', async () => {
    const ok = setup();
    expect((await resolveHtdemucsGraph(ok.model, { modelsDir: ok.modelsDir, device: 'cpu', split: false })).split).toBeUndefined();
    const broken = setup((plan) => {
      (plan.source as { sha256: string }).sha256 = '0'.repeat(64);
    });
    const err = await resolveHtdemucsGraph(broken.model, { modelsDir: broken.modelsDir, device: 'cpu', split: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelMissingError);
    expect((err as Error).message).toMatch(/DUB_HTDEMUCS_SPLIT=1.*fetch-npm-models/);
  });

  it('on CUDA runs the whole graph unless the parts are asked for', async () => {
    const { modelsDir, model } = setup();
    const g = await resolveHtdemucsGraph(model, { modelsDir, device: 'cuda', split: undefined });
    expect(g.split).toBeUndefined();
    expect(g.reason).toMatch(/device cuda/);
    expect((await resolveHtdemucsGraph(model, { modelsDir, device: 'cuda', split: true })).split).toBeDefined();
  });

  it('reads DUB_HTDEMUCS_SPLIT', () => {
    expect(splitChoiceFromEnv({ DUB_HTDEMUCS_SPLIT: '0' })).toBe(false);
    expect(splitChoiceFromEnv({ DUB_HTDEMUCS_SPLIT: '1' })).toBe(true);
    expect(splitChoiceFromEnv({ DUB_HTDEMUCS_SPLIT: 'auto' })).toBeUndefined();
    expect(splitChoiceFromEnv({})).toBeUndefined();
  });
});
