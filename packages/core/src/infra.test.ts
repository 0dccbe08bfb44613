import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FsBlobStore, ModelMissingError, NotFoundError, ValidationError, checkBlobKey,
  loadConfig, resolveModelFile, resolveContext, subContext, reportProgress, type Progress,
} from './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-core-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('model resolver', () => {
  it('finds DUB_MODELS_DIR/<id>/<file> first', () => {
    const dir = path.join(tmp, 'models');
    fs.mkdirSync(path.join(dir, 'tiny'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'tiny', 'tiny.onnx'), 'model bytes');
    expect(resolveModelFile('tiny', 'tiny.onnx', { modelsDir: dir })).toBe(path.join(dir, 'tiny', 'tiny.onnx'));
  });
  it('fails with a message naming the model and the fetch command', () => {
    try {
      resolveModelFile('whisper-nope', 'encoder_model.onnx', { modelsDir: tmp });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ModelMissingError);
      expect((e as ModelMissingError).modelId).toBe('whisper-nope');
      expect((e as Error).message).toMatch(/whisper-nope/);
      expect((e as Error).message).toMatch(/dub models fetch whisper-nope/);
    }
  });
});

describe('FsBlobStore', () => {
  const store = new FsBlobStore(path.join(tmp, 'blobs'));
  it('puts and gets buffers, streams, files and ranges', async () => {
    await store.put('a/b/c.txt', Buffer.from('hello world'));
    expect((await store.getBuffer('a/b/c.txt')).toString()).toBe('hello world');
    await store.put('a/s.txt', Readable.from([Buffer.from('str'), Buffer.from('eam')]));
    expect((await store.getBuffer('a/s.txt')).toString()).toBe('stream');
    const chunks: Buffer[] = [];
    for await (const c of await store.getStream('a/b/c.txt', { start: 6, end: 10 })) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('world');
    const f = path.join(tmp, 'f.bin');
    fs.writeFileSync(f, Buffer.alloc(1000, 7));
    expect(await store.putFile('x/f.bin', f)).toEqual({ size: 1000 });
    expect(await store.list('a/')).toEqual(['a/b/c.txt', 'a/s.txt']);
    await store.deletePrefix('a/');
    expect(await store.has('a/b/c.txt')).toBe(false);
    expect(await store.has('x/f.bin')).toBe(true);
    await expect(store.getBuffer('nope/x')).rejects.toThrow(NotFoundError);
  });
  it('refuses keys that escape the root', () => {
    for (const k of ['../etc/passwd', 'a//b', '/abs', 'a/./b', '', 'a b']) expect(() => checkBlobKey(k)).toThrow(ValidationError);
    expect(checkBlobKey('assets/ast_1/source.mp4')).toBe('assets/ast_1/source.mp4');
  });
});

describe('config and context', () => {
  it('reads and validates the environment once', () => {
    const c = loadConfig({ DUB_DEVICE: 'cuda:1', DUB_ONNX_THREADS: '2', DUB_MODELS_DIR: '/m' });
    expect(c.device).toBe('cuda:1');
    expect(c.onnxThreads).toBe(2);
    expect(c.modelsDir).toBe('/m');
    expect(loadConfig({}).device).toBe('cpu');
    expect(() => loadConfig({ DUB_DEVICE: 'tpu' })).toThrow(/DUB_DEVICE/);
    expect(() => loadConfig({ DUB_ONNX_THREADS: '-1' })).toThrow(/DUB_ONNX_THREADS/);
  });
  it('maps sub-stage progress into the parent range', () => {
    const seen: Progress[] = [];
    const ctx = resolveContext({ onProgress: (p) => seen.push(p) });
    const sub = subContext(ctx, 'asr', 0.5, 1);
    reportProgress(sub, 'asr', 0.5);
    expect(seen).toEqual([{ stage: 'asr', fraction: 0.75 }]);
  });
});
