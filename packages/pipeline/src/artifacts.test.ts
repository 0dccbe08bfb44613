/** ArtifactCache: a stage's own files are moved into the store; a file from elsewhere is copied and stays where it was. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobStore, silentLogger } from '@dub/core';
import { ArtifactCache } from './artifacts.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'artifacts-test-'));
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('ArtifactCache outputs', () => {
  it('moves the files the stage wrote in its directory, copies the others, and serves both from the cache', async () => {
    const store = new FsBlobStore(path.join(dir, 'store'));
    const cache = new ArtifactCache(store, 'ast_x', { tmpDir: dir });
    const outside = path.join(dir, 'outside.bin');
    fs.writeFileSync(outside, Buffer.alloc(100, 1));
    let own = '';
    const r = await cache.run('s', { a: 1 }, { logger: silentLogger }, async (out) => {
      own = path.join(out.dir, 'own.bin');
      fs.writeFileSync(own, Buffer.alloc(50, 2));
      out.addFile('own.bin', own);
      out.addFile('outside.bin', outside);
      // the same file under two names is copied both times
      const twice = path.join(out.dir, 'twice.bin');
      fs.writeFileSync(twice, Buffer.alloc(20, 3));
      out.addFile('a.bin', twice);
      out.addFile('b.bin', twice);
      return 7;
    });
    expect(fs.existsSync(outside)).toBe(true);
    expect(fs.existsSync(own)).toBe(false);
    expect(await store.getBuffer(r.files['own.bin']!)).toEqual(Buffer.alloc(50, 2));
    expect(await store.getBuffer(r.files['outside.bin']!)).toEqual(Buffer.alloc(100, 1));
    expect(await store.getBuffer(r.files['a.bin']!)).toEqual(Buffer.alloc(20, 3));
    expect(await store.getBuffer(r.files['b.bin']!)).toEqual(Buffer.alloc(20, 3));
    const again = await cache.run('s', { a: 1 }, { logger: silentLogger }, async () => {
      throw new Error('not run again');
    });
    expect(again).toMatchObject({ cached: true, value: 7, files: r.files });
  });
});
