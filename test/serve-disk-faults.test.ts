/**
 * `dub serve` (embedded queue, PGlite, blobs in the data dir) on a failing disk: the queue and blob
 * folders of its data dir turn read-only, then only the queue's event folder. The process stays
 * up, requests that need the disk answer 503 `{detail}`, nothing else fails, and every job is
 * done once the disk is back. Faults are injected into node:fs by a preload
 * (test/support/disk-faults.mjs): tests may run as root, where a read-only chmod stops nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUB, freePort, ROOT, waitFor } from './e2e-helpers.js';

const KEY = 'faults-key';
const auth = { authorization: `Bearer ${KEY}` };
const FAULTS = path.join(ROOT, 'test/support/disk-faults.mjs');

describe('dub serve on a failing disk', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-serve-faults-'));
  const data = path.join(dir, 'data');
  const control = path.join(dir, 'faults.json');
  let child: ChildProcess;
  let log = '';
  let base = '';
  let media: http.Server;
  let mediaUrl = '';
  const faults = (under: string[] | undefined, code = 'EROFS') => fs.writeFileSync(control, under ? JSON.stringify({ under, code }) : '');
  const alive = () => child.exitCode === null && child.signalCode === null;

  beforeAll(async () => {
    // Bytes that are no video: the prepare job fails at once (unsupported media), a job that ends.
    media = http.createServer((_req, res) => res.end(Buffer.alloc(4096, 7)));
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    mediaUrl = `http://127.0.0.1:${(media.address() as { port: number }).port}/clip.mp4`;
    faults(undefined);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [DUB, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', data], {
      env: {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(FAULTS).href}`.trim(),
        DUB_TEST_DISK_FAULTS: control,
        DUB_API_KEYS: `${KEY}:org1`,
        DUB_ALLOW_PRIVATE_URLS: '1',
        DUB_CALLBACK_BACKOFF_MS: '200',
        DUB_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    await waitFor('dub serve to answer /healthz', async () => {
      if (!alive()) throw new Error(`dub serve exited: ${log}`);
      return (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined;
    }, 60_000);
  }, 90_000);

  afterAll(async () => {
    if (child && alive()) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    media?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const getAsset = async (id: string) => (await (await fetch(`${base}/v1/assets/${id}`, { headers: auth })).json()) as { status: string; error?: { error_code: string } };
  const create = async () => {
    const r = await fetch(`${base}/v1/assets/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'on a failing disk', locale: 'en-US', languages: [{ locale: 'es-ES' }], media_url: mediaUrl }) });
    expect(r.status, log).toBe(201);
    return ((await r.json()) as { asset_id: string }).asset_id;
  };
  const failedInTheEnd = (id: string) =>
    waitFor(`asset ${id} to end Failed (log: ${log.slice(-3000)})`, async () => {
      if (!alive()) throw new Error(`dub serve exited: ${log}`);
      const a = await getAsset(id);
      return a.status === 'Failed' ? a : undefined;
    }, 120_000);

  it('stays up on a read-only data dir (503 {detail} where the disk is needed) and runs the job once the disk is back', async () => {
    faults([path.join(data, 'queue'), path.join(data, 'blobs')]);
    await new Promise((r) => setTimeout(r, 100));

    const form = new FormData();
    form.set('request', JSON.stringify({ name: 'upload', locale: 'en-US', languages: [{ locale: 'es-ES' }] }));
    form.set('video', new Blob([Buffer.alloc(64 * 1024, 1)], { type: 'video/mp4' }), 'clip.mp4');
    const up = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    const body = (await up.json()) as { detail: string };
    expect(up.status, log).toBe(503);
    expect(body.detail).toMatch(/^storage unavailable: blob store: writing assets\/ast_\w+\/upload\/\w+ failed: the file system is read-only \(EROFS\); retry later/);

    // The asset is created; its job waits in the outbox while the queue cannot record it.
    const id = await create();
    expect((await getAsset(id)).status).toBe('Dubbing');
    await waitFor('the job to be refused by the queue', async () => (log.includes('job not enqueued; the outbox dispatcher retries it') ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(), log).toBe(true);
    expect((await fetch(`${base}/healthz`)).ok).toBe(true);
    expect((await getAsset(id)).status).toBe('Dubbing');

    faults(undefined);
    const a = await failedInTheEnd(id);
    expect(a.error?.error_code, JSON.stringify(a)).toBe('unsupported_media');
    expect(alive()).toBe(true);
  }, 180_000);

  it('queues a job again whose failure event cannot be written and records it once the disk is back', async () => {
    faults([path.join(data, 'queue', 'events')]);
    await new Promise((r) => setTimeout(r, 100));
    const id = await create();
    await waitFor('the failure event to be refused', async () => {
      if (!alive()) throw new Error(`dub serve exited: ${log}`);
      return log.includes('failure event not written; the job is queued again to write it') ? true : undefined;
    }, 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(alive(), log).toBe(true);
    expect((await getAsset(id)).status).toBe('Dubbing');
    faults(undefined);
    const a = await failedInTheEnd(id);
    expect(a.error?.error_code, JSON.stringify(a)).toBe('unsupported_media');
    expect(alive()).toBe(true);
  }, 180_000);
});
