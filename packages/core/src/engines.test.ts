import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forgetModelHashes, MODEL_HASH_KEEP_MIN_BYTES, modelHashCacheOn, modelHashesDir, modelIdentity } from './engines.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
/** A model-sized file (the cache keeps files from 1 MiB): `tag` then padding. */
const weights = (tag: string) => Buffer.concat([Buffer.from(tag), Buffer.alloc(MODEL_HASH_KEEP_MIN_BYTES)]);

describe('modelIdentity: hashes kept on disk between processes', () => {
  let dir: string;
  const saved = { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, DUB_MODEL_HASH_CACHE: process.env.DUB_MODEL_HASH_CACHE };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-hashes-'));
    process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
    delete process.env.DUB_MODEL_HASH_CACHE;
    forgetModelHashes();
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    forgetModelHashes();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const kept = () => (fs.existsSync(modelHashesDir()) ? fs.readdirSync(modelHashesDir()) : []);

  it('writes the hash once, and a new process reads it instead of the file', async () => {
    const file = path.join(dir, 'model.onnx');
    fs.writeFileSync(file, weights('weights v1'));
    const first = await modelIdentity(file);
    expect(first).toEqual({ file, model: 'model.onnx', sha256: sha(weights('weights v1')), size: MODEL_HASH_KEEP_MIN_BYTES + 10 });
    expect(kept()).toHaveLength(1);
    expect(modelHashesDir()).toBe(path.join(dir, 'cache', 'dub', 'hashes'));
    // the kept hash is what a new process uses (proved by planting another value in it)
    const entry = path.join(modelHashesDir(), kept()[0]!);
    fs.writeFileSync(entry, sha('planted'));
    forgetModelHashes();
    expect((await modelIdentity(file)).sha256).toBe(sha('planted'));
  });

  it('hashes again when the file changes, and ignores a damaged entry', async () => {
    const file = path.join(dir, 'model.onnx');
    fs.writeFileSync(file, weights('weights v1'));
    await modelIdentity(file);
    // same size, other content, mtime restored: the ctime still differs, so it is hashed again
    const st = fs.statSync(file);
    await new Promise((r) => setTimeout(r, 20));
    fs.writeFileSync(file, weights('weights v2'));
    fs.utimesSync(file, st.atime, st.mtime);
    forgetModelHashes();
    expect((await modelIdentity(file)).sha256).toBe(sha(weights('weights v2')));
    expect(kept()).toHaveLength(2);
    for (const k of kept()) fs.writeFileSync(path.join(modelHashesDir(), k), 'not a hash');
    forgetModelHashes();
    expect((await modelIdentity(file)).sha256).toBe(sha(weights('weights v2')));
  });

  it('keeps nothing with DUB_MODEL_HASH_CACHE=0, and refuses other values', async () => {
    process.env.DUB_MODEL_HASH_CACHE = '0';
    const file = path.join(dir, 'model.onnx');
    fs.writeFileSync(file, weights('w'));
    expect((await modelIdentity(file)).sha256).toBe(sha(weights('w')));
    expect(kept()).toEqual([]);
    expect(modelHashCacheOn({ DUB_MODEL_HASH_CACHE: 'off' })).toBe(false);
    expect(modelHashCacheOn({})).toBe(true);
    expect(() => modelHashCacheOn({ DUB_MODEL_HASH_CACHE: 'maybe' })).toThrow(/DUB_MODEL_HASH_CACHE/);
  });

  it('keeps no hash of a small file', async () => {
    const file = path.join(dir, 'tiny.onnx');
    fs.writeFileSync(file, 'tiny');
    expect((await modelIdentity(file)).sha256).toBe(sha('tiny'));
    expect(kept()).toEqual([]);
  });

  it('still hashes when the cache folder cannot be written', async () => {
    const blocker = path.join(dir, 'cache');
    fs.writeFileSync(blocker, 'a file where the folder would go');
    const file = path.join(dir, 'model.onnx');
    fs.writeFileSync(file, weights('w'));
    expect((await modelIdentity(file)).sha256).toBe(sha(weights('w')));
  });
});
