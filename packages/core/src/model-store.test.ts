import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureModel, fetchModels } from './model-store.js';
import { inRepoCheckout, modelSearchPaths, modelsDir, REPO_MODELS_DIR, resolveModelFile, userModelsDir, type Manifest } from './models.js';
import { ModelMissingError } from './errors.js';

describe('where models live', () => {
  it('the user cache follows XDG_CACHE_HOME (absolute only), else ~/.cache', () => {
    expect(userModelsDir({ XDG_CACHE_HOME: '/srv/cache' })).toBe('/srv/cache/dub/models');
    expect(userModelsDir({ XDG_CACHE_HOME: 'relative' })).toBe(path.join(os.homedir(), '.cache', 'dub', 'models'));
    expect(userModelsDir({})).toBe(path.join(os.homedir(), '.cache', 'dub', 'models'));
  });

  it('fetched models go to DUB_MODELS_DIR, else the repo models/ in a clone (this one), else the user cache', () => {
    expect(modelsDir({ DUB_MODELS_DIR: '/data/models' })).toBe('/data/models');
    expect(inRepoCheckout()).toBe(true);
    expect(modelsDir({})).toBe(REPO_MODELS_DIR);
  });

  it('the resolver looks in the given folder, the repo models/ and the user cache, in that order', () => {
    const tried = modelSearchPaths('m', 'w.onnx', { modelsDir: '/given' });
    expect(tried.filter((p) => p.endsWith(path.join('m', 'w.onnx')))).toEqual(['/given/m/w.onnx', path.join(REPO_MODELS_DIR, 'm', 'w.onnx'), path.join(userModelsDir(), 'm', 'w.onnx')]);
  });
});

describe('fetchModels and ensureModel', () => {
  const body = Buffer.from('weights of a tiny model\n');
  const sha = createHash('sha256').update(body).digest('hex');
  let server: http.Server;
  let base = '';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-model-store-'));
  const manifest = (): Manifest => ({
    version: 1,
    models: [
      { id: 'tiny', description: 'tiny', license: 'MIT', source: 'here', files: [{ name: 'w.bin', url: `${base}/w.bin`, sha256: sha, size: body.length }] },
      { id: 'bad', description: 'bad sha', license: 'MIT', source: 'here', files: [{ name: 'w.bin', url: `${base}/w.bin`, sha256: '0'.repeat(64), size: body.length }] },
    ],
  }) as unknown as Manifest;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/w.bin') res.end(body);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fetches a missing file into the folder, checked, then finds it present', async () => {
    const seen: string[] = [];
    const first = await fetchModels(['tiny'], { modelsDir: dir, manifest: manifest(), onFile: (f) => seen.push(`${f.model}/${f.file}:${f.state}`) });
    expect(first).toMatchObject([{ model: 'tiny', file: 'w.bin', state: 'fetched', path: path.join(dir, 'tiny', 'w.bin'), message: 'sha256 verified' }]);
    expect(seen).toEqual(['tiny/w.bin:fetched']);
    expect(fs.readFileSync(path.join(dir, 'tiny', 'w.bin'))).toEqual(body);
    expect(resolveModelFile('tiny', 'w.bin', { modelsDir: dir, manifest: manifest() })).toBe(path.join(dir, 'tiny', 'w.bin'));
    expect(await ensureModel('tiny', { modelsDir: dir, manifest: manifest() })).toEqual({ 'w.bin': path.join(dir, 'tiny', 'w.bin') });
    expect((await fetchModels(['tiny'], { modelsDir: dir, manifest: manifest() }))[0]!.state).toBe('present');
  });

  it('a file that fails its check is not kept, and ensureModel says why', async () => {
    const err = await ensureModel('bad', { modelsDir: dir, manifest: manifest() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelMissingError);
    expect((err as Error).message).toMatch(/model bad could not be fetched: w\.bin: fetch failed from http:\/\/127\.0\.0\.1:\d+\/w\.bin: .*sha256/);
    expect(fs.existsSync(path.join(dir, 'bad', 'w.bin'))).toBe(false);
  });

  it('an unknown model id is refused', async () => {
    await expect(fetchModels(['nope'], { modelsDir: dir, manifest: manifest() })).rejects.toThrow(/unknown model "nope"; known: tiny, bad/);
  });
});
