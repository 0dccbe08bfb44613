/**
 * S3-compatible blob storage (`--blobs s3://BUCKET/PREFIX`) against a real S3 server on
 * 127.0.0.1: s3rver (npm, a Koa implementation of the S3 REST API with multipart uploads) in this
 * process. The store goes through the official AWS SDK v3 with the standard environment
 * (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...), as an operator would configure it.
 *
 * - the BlobStore contract: put (bytes, string, stream, file), ranged reads, stat, list, replace,
 *   deletePrefix, NotFoundError; large objects as multipart uploads; an unreachable server is a
 *   StorageError (503, retryable), never "missing";
 * - a process killed during a multipart upload leaves no object, and the key can be written again;
 * - `dub serve --nats` and `dub worker --nats` sharing one bucket dub a clip end to end.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, StorageError } from '@dub/core';
import { S3BlobStore } from '@dub/worker/s3';
import { parseBlobsOption } from '@dub/worker';
import { startNatsServer, type TestNatsServer } from '../packages/worker/src/testing/nats-server.js';
import { ffprobeJson, freePort, makeSample, ROOT, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';

const BUCKET = 'dub-test';
const CREDS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let server: { run(): Promise<{ port: number }>; close(): Promise<void> };
let endpoint = '';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-s3-'));

async function startS3(port = 0): Promise<number> {
  server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: path.join(dir, 's3'), configureBuckets: [{ name: BUCKET, configs: [] }] });
  return (await server.run()).port;
}

beforeAll(async () => {
  const port = await startS3();
  endpoint = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await server?.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

const store = (prefix: string, extra: { maxAttempts?: number } = {}) => new S3BlobStore({ bucket: BUCKET, prefix, client: { endpoint, region: 'us-east-1', credentials: CREDS, forcePathStyle: true, ...extra } });

describe('--blobs s3://', () => {
  it('parses s3://BUCKET[/PREFIX] and refuses malformed locations', () => {
    expect(parseBlobsOption('s3://my-bucket/dub/prod/', [])).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'dub/prod' });
    expect(parseBlobsOption('s3://my-bucket', [])).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
    expect(() => parseBlobsOption('s3://A_b', [])).toThrow(/s3:\/\/BUCKET or s3:\/\/BUCKET\/PREFIX/);
    expect(() => parseBlobsOption('s3://bucket/a b', [])).toThrow(/prefix may hold only/);
  });
});

describe('S3BlobStore against a real S3 server', () => {
  it('keeps the BlobStore contract under its prefix', async () => {
    const s = store('unit');
    const big = randomBytes(300_000);
    await s.put('assets/a/x.bin', big);
    const file = path.join(dir, 'in.txt');
    fs.writeFileSync(file, 'hello file');
    expect(await s.putFile('assets/a/f.txt', file)).toEqual({ size: 10 });
    expect(await s.put('assets/b/s.txt', 'a string')).toEqual({ size: 8 });
    expect(await s.put('assets/b/stream.txt', Readable.from([Buffer.from('str'), Buffer.from('eamed')]))).toEqual({ size: 8 });
    expect(await s.stat('assets/a/x.bin')).toEqual({ size: 300_000 });
    expect((await s.getBuffer('assets/a/x.bin')).equals(big)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const c of await s.getStream('assets/a/x.bin', { start: 1000, end: 200_999 })) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(big.subarray(1000, 201_000))).toBe(true);
    await s.getToFile('assets/a/f.txt', path.join(dir, 'out', 'f.txt'));
    expect(fs.readFileSync(path.join(dir, 'out', 'f.txt'), 'utf8')).toBe('hello file');
    expect(await s.list('assets/a/')).toEqual(['assets/a/f.txt', 'assets/a/x.bin']);
    expect(s.localPath()).toBeUndefined();
    await s.put('assets/b/s.txt', 'replaced');
    expect((await s.getBuffer('assets/b/s.txt')).toString()).toBe('replaced');
    await s.deletePrefix('assets/a/');
    expect(await s.has('assets/a/x.bin')).toBe(false);
    expect(await s.list('assets/')).toEqual(['assets/b/s.txt', 'assets/b/stream.txt']);
    await expect(s.getBuffer('assets/a/x.bin')).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.getStream('nope/none')).rejects.toBeInstanceOf(NotFoundError);
    expect(await s.stat('nope/none')).toBeUndefined();
    // the objects sit under the prefix in the bucket
    const raw = new S3Client({ endpoint, region: 'us-east-1', credentials: CREDS, forcePathStyle: true });
    const listed = await raw.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'unit/' }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(['unit/assets/b/s.txt', 'unit/assets/b/stream.txt']);
    raw.destroy();
    await s.close();
  });

  it('large objects go up in parts: a 20 MiB stream of unknown length and a 17 MiB file read back byte for byte', async () => {
    const s = store('multipart');
    const data = randomBytes(20 * 1024 * 1024);
    const pieces = Array.from({ length: 20 }, (_, i) => data.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    expect(await s.put('big/stream.bin', Readable.from(pieces))).toEqual({ size: data.length });
    expect((await s.getBuffer('big/stream.bin')).equals(data)).toBe(true);
    const file = path.join(dir, 'big.bin');
    fs.writeFileSync(file, data.subarray(0, 17 * 1024 * 1024));
    expect(await s.putFile('big/file.bin', file)).toEqual({ size: 17 * 1024 * 1024 });
    const back = path.join(dir, 'big-back.bin');
    await s.getToFile('big/file.bin', back);
    expect(fs.readFileSync(back).equals(data.subarray(0, 17 * 1024 * 1024))).toBe(true);
    await s.close();
  }, 120_000);

  it('an unreachable server is a StorageError (503, retryable), not a missing blob', async () => {
    const s = new S3BlobStore({ bucket: BUCKET, prefix: 'x', client: { endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1', credentials: CREDS, forcePathStyle: true, maxAttempts: 2 } });
    const err = await s.stat('a/b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).status).toBe(503);
    expect((err as StorageError).retryable).toBe(true);
    await expect(s.put('a/b', 'x')).rejects.toBeInstanceOf(StorageError);
    await s.close();
  });

  it('a process killed during a multipart upload leaves no object; the key is written again afterwards', async () => {
    const script = path.join(dir, 'slow-upload.mjs');
    fs.writeFileSync(
      script,
      `import { Readable } from 'node:stream';
import { S3BlobStore } from '@dub/worker/s3';
const s = new S3BlobStore({ bucket: '${BUCKET}', prefix: 'killed', client: { endpoint: '${endpoint}', region: 'us-east-1', credentials: ${JSON.stringify(CREDS)}, forcePathStyle: true }, queueSize: 1, partSize: 5 * 1024 * 1024 });
let sent = 0;
// 60 MiB, slowly: a part every ~0.3 s
const body = new Readable({ read() { if (sent >= 60) return this.push(null); sent++; if (sent === 11) process.stdout.write('two parts sent\\n'); setTimeout(() => this.push(Buffer.alloc(1024 * 1024, sent)), 60); } });
await s.put('assets/a/source.mp4', body);
process.stdout.write('done\\n');
`,
    );
    // the repo's node_modules beside the script, so '@dub/worker/s3' resolves
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor(`the upload under way (${out})`, async () => (out.includes('two parts sent') ? true : undefined), 60_000);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(out).not.toContain('done');
    const s = store('killed');
    expect(await s.has('assets/a/source.mp4')).toBe(false);
    expect(await s.list('assets/')).toEqual([]);
    await s.put('assets/a/source.mp4', 'a later upload');
    expect((await s.getBuffer('assets/a/source.mp4')).toString()).toBe('a later upload');
    await s.close();
  }, 120_000);
});

describe('dub serve --nats and dub worker --nats on one S3 bucket', () => {
  const KEY = 's3-e2e-key';
  const auth = { authorization: `Bearer ${KEY}` };
  let nats: TestNatsServer;
  let api: DubProcess;
  let worker: DubProcess;
  let base = '';

  beforeAll(async () => {
    makeSample(path.join(dir, 'sample.mp4'));
    nats = await startNatsServer();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const aws = { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey, AWS_REGION: 'us-east-1' };
    const blobs = `s3://${BUCKET}/e2e`;
    api = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'api'), '--nats', nats.url, '--blobs', blobs], { ...aws, DUB_API_KEYS: `${KEY}:org1` });
    // espeak-ng and no separation chosen: this test is about where the blobs live, not about the
    // voice or the background (e2e-serve.test.ts dubs the same sample on the defaults)
    worker = spawnDub(['worker', '--nats', nats.url, '--blobs', blobs, '--data-dir', path.join(dir, 'worker'), '--concurrency', '1'], { ...aws, DUB_TTS_ENGINE: 'espeak-ng', DUB_SEPARATION_ENGINE: 'none' });
    await waitHealthy(base, api, 150_000);
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await nats?.dispose();
  });

  it('the worker prepares and generates from the bucket; the API serves the result from it', async () => {
    const form = new FormData();
    form.set('request', JSON.stringify({ name: 's3', locale: 'en-US', languages: [{ locale: 'es-ES' }], auto_generate: 'no_lips' }));
    form.set('video', new Blob([fs.readFileSync(path.join(dir, 'sample.mp4'))], { type: 'video/mp4' }), 'sample.mp4');
    const created = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    expect(created.status, api.log()).toBe(201);
    const asset = (await created.json()) as { asset_id: string; languages: { versions: { version_id: string }[] }[] };
    const versionId = asset.languages[0]!.versions[0]!.version_id;
    const done = await waitFor(`Completed (worker log: ${worker.log()})`, async () => {
      const v = (await (await fetch(`${base}/v1/versions/${versionId}`, { headers: auth })).json()) as Record<string, unknown>;
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}; worker: ${worker.log()}`);
      return v.status === 'Completed' ? v : undefined;
    }, 420_000);
    const res = await fetch(String(done.result_url));
    expect(res.status).toBe(200);
    const file = path.join(dir, 'result.mp4');
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const probe = ffprobeJson(file);
    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs(Number(probe.format.duration) - Number(ffprobeJson(path.join(dir, 'sample.mp4')).format.duration))).toBeLessThan(0.1);
    // every blob of the asset is in the bucket under the prefix; nothing went to the data dirs
    const keys = await store('e2e').list(`assets/${asset.asset_id}/`);
    expect(keys.some((k) => k.endsWith('source.mp4') || k.includes('/source'))).toBe(true);
    expect(keys.length).toBeGreaterThan(5);
    expect(fs.existsSync(path.join(dir, 'worker', 'blobs'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'api', 'blobs'))).toBe(false);
  }, 600_000);
});
