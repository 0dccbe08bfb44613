import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript test support (no types)
import { installDiskFaults } from '../../../test/support/disk-faults.mjs';
import {
  FsBlobStore, ModelMissingError, NotFoundError, StorageError, ValidationError, checkBlobKey,
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
    expect(fs.existsSync(f)).toBe(true);
    // move: the file is taken as it is (renamed into the store), replacing the blob
    const g = path.join(tmp, 'g.bin');
    fs.writeFileSync(g, Buffer.alloc(10, 9));
    expect(await store.putFile('x/f.bin', g, { move: true })).toEqual({ size: 10 });
    expect(fs.existsSync(g)).toBe(false);
    expect(await store.getBuffer('x/f.bin')).toEqual(Buffer.alloc(10, 9));
    expect(await store.putFile('x/f.bin', f)).toEqual({ size: 1000 });
    expect(await store.list('a/')).toEqual(['a/b/c.txt', 'a/s.txt']);
    await store.deletePrefix('a/');
    expect(await store.has('a/b/c.txt')).toBe(false);
    expect(await store.has('x/f.bin')).toBe(true);
    await expect(store.getBuffer('nope/x')).rejects.toThrow(NotFoundError);
  });
  it('reports a failing disk as a StorageError (503, retryable), only ENOENT/ENOTDIR as missing', async () => {
    const root = path.join(tmp, 'faulty');
    const s = new FsBlobStore(root);
    await s.put('a/blob', 'bytes');
    const faults = installDiskFaults();
    try {
      // Missing: the file is absent, or a path goes through a file (ENOTDIR).
      expect(await s.stat('a/none')).toBeUndefined();
      expect(await s.stat('a/blob/below')).toBeUndefined();
      expect(await s.has('a/blob/below')).toBe(false);
      await expect(s.getBuffer('a/blob/below')).rejects.toThrow(NotFoundError);
      for (const code of ['EIO', 'EACCES']) {
        faults.set({ under: [root], code });
        const storage = { code: 'storage_unavailable', status: 503, retryable: true, errno: code };
        await expect(s.stat('a/blob')).rejects.toMatchObject(storage);
        await expect(s.stat('a/none')).rejects.toMatchObject(storage);
        await expect(s.has('a/blob')).rejects.toBeInstanceOf(StorageError);
        await expect(s.getStream('a/blob')).rejects.toMatchObject(storage);
        await expect(s.getBuffer('a/blob')).rejects.toMatchObject(storage);
        await expect(s.getToFile('a/blob', path.join(tmp, 'copy'))).rejects.toMatchObject(storage);
        await expect(s.list('a/')).rejects.toMatchObject(storage);
        // The detail names the blob and the errno, not the server's path.
        await expect(s.stat('a/blob')).rejects.toThrow(/^storage unavailable: blob store: reading a\/blob failed: .*\((EIO|EACCES)\); retry later$/);
        faults.clear();
      }
      for (const code of ['ENOSPC', 'EROFS']) {
        faults.set({ under: [root], code });
        await expect(s.put('a/new', 'x')).rejects.toMatchObject({ code: 'storage_unavailable', status: 503, errno: code });
        await expect(s.put('a/new', Readable.from([Buffer.from('x')]))).rejects.toMatchObject({ code: 'storage_unavailable', errno: code });
        await expect(s.putFile('a/new', path.join(tmp, 'f.bin'))).rejects.toMatchObject({ code: 'storage_unavailable', errno: code });
        // Reading still works on a full or read-only disk.
        expect(await s.stat('a/blob')).toEqual({ size: 5 });
        faults.clear();
      }
      faults.set({ under: [root], code: 'EROFS' });
      await expect(s.delete('a/blob')).rejects.toMatchObject({ code: 'storage_unavailable', errno: 'EROFS' });
      faults.clear();
      // Nothing half-written was left behind, and the disk works again.
      expect(fs.readdirSync(path.join(root, 'a'))).toEqual(['blob']);
      expect(await s.put('a/new', 'x')).toEqual({ size: 1 });
    } finally {
      faults.uninstall();
    }
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
