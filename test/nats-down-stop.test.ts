/**
 * `dub worker` and `dub serve --nats` stop on SIGTERM when NATS is gone (issue 24 item 5): each
 * runs as the shipped command against a private nats-server, the server is stopped (SIGTERM: it
 * tells its clients) or killed (SIGKILL: as a crash or a cut link, nothing is said; a pull in
 * progress then never ends by itself), then the command gets SIGTERM. It must exit 0 within its drain timeout and say, in its log, what NATS
 * was not told (job messages not acknowledged; jobs not enqueued). Before, the NATS client's
 * reconnect loop kept both alive until a SIGKILL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsJobQueue } from '@dub/worker';
import { startNatsServer, type TestNatsServer } from '../packages/worker/src/testing/nats-server.js';
import { freePort, ROOT, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';

const CONTROL_HANDLERS = path.join(ROOT, 'packages/worker/dist/testing/control-handlers.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-nats-down-'));
const servers: TestNatsServer[] = [];
const procs: DubProcess[] = [];

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  for (const s of servers) await s.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function nats(): Promise<TestNatsServer> {
  const s = await startNatsServer();
  servers.push(s);
  return s;
}

function dub(args: string[], env: Record<string, string> = {}): DubProcess {
  const p = spawnDub(args, { DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: tmp, ...env });
  procs.push(p);
  return p;
}

/** SIGTERM, then the exit code and how long the exit took (null code: still running at `boundMs`, then killed). */
async function terminate(p: DubProcess, boundMs: number): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  const exited = new Promise<number | null>((resolve) => p.child.once('exit', (code) => resolve(code)));
  p.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<'alive'>((r) => (timer = setTimeout(() => r('alive'), boundMs)))]);
  clearTimeout(timer);
  if (code === 'alive') {
    p.child.kill('SIGKILL');
    return { code: null, ms: Date.now() - t0 };
  }
  return { code, ms: Date.now() - t0 };
}

const workerArgs = (url: string, extra: string[] = []) => ['worker', '--nats', url, '--handlers', CONTROL_HANDLERS, '--blobs', `fs:${path.join(tmp, 'blobs')}`, '--no-warmup', ...extra];
const ready = (p: DubProcess) => waitFor(`worker ready (log: ${p.log()})`, async () => {
  if (p.child.exitCode !== null) throw new Error(`worker exited ${p.child.exitCode}: ${p.log()}`);
  return p.log().includes('worker ready') ? true : undefined;
}, 60_000);

describe('SIGTERM with NATS unreachable', () => {
  it('dub worker with no job in hand, NATS killed: exits 0 at once and says nothing was left unacknowledged', async () => {
    const server = await nats();
    const w = dub(workerArgs(server.url));
    await ready(w);
    await server.kill();
    await waitFor(`disconnect seen (log: ${w.log()})`, async () => (w.log().includes('NATS disconnected') ? true : undefined), 10_000);
    // The default drain timeout (30 s) bounds the stop; with nothing in hand it takes about a second.
    const { code, ms } = await terminate(w, 30_000);
    expect(code, w.log()).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(w.log()).toContain('job messages not acknowledged: none');
    expect(w.log()).toContain('worker stopped');
  }, 120_000);

  it('dub worker with a job in hand exits 0 within its drain timeout plus the abort grace, naming the job NATS was not told about', async () => {
    const server = await nats();
    const w = dub(workerArgs(server.url, ['--drain-timeout', '1500']));
    await ready(w);
    const q = await NatsJobQueue.connect(server.url);
    await q.enqueue({ v: 1, type: 'prepare-asset', job_id: 'job-held', asset_id: 'slow120000-held', locale: 'en-US', media: { blob: 'x' }, versions: [] });
    await q.close();
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await waitFor('the worker holds the job', async () => ((await jsm.consumers.info('DUB_JOBS', 'dub-worker')).num_ack_pending > 0 ? true : undefined), 20_000);
    await nc.close();
    await server.stop();
    const { code, ms } = await terminate(w, 30_000);
    expect(code, w.log()).toBe(0);
    // drain timeout 1.5 s, then the job is aborted (the handler honours it) and the connection closed
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(1500 + 5000 + 4000);
    expect(w.log()).toContain('drain timeout; aborting jobs in hand');
    expect(w.log()).toMatch(/job messages not acknowledged: job-held \(prepare-asset, stream seq \d+, nak\)/);
  }, 120_000);

  it('dub serve --nats, NATS killed: exits 0, naming the job whose publish it gave up (kept in the outbox)', async () => {
    const server = await nats();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const api = dub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(tmp, 'api'), '--nats', server.url], {
      DUB_API_KEYS: 'k1:org1',
      DUB_ALLOW_PRIVATE_URLS: '1',
    });
    await waitHealthy(base, api, 150_000); // a loaded 2-core machine took 44-75 s to start it
    await server.kill();
    await waitFor(`disconnect seen (log: ${api.log()})`, async () => (api.log().includes('NATS disconnected') ? true : undefined), 10_000);
    // A request whose job cannot be published: it keeps retrying (up to 30 s) while NATS is away.
    const created = fetch(`${base}/v1/assets/`, {
      method: 'POST',
      headers: { authorization: 'Bearer k1', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'n', locale: 'en-US', languages: [{ locale: 'es-ES' }], media_url: 'http://127.0.0.1:9/v.mp4' }),
    }).then((r) => r.status, (e: Error) => e.message);
    // the asset is committed (listed) before its job's publish starts retrying; a fixed wait was
    // too short on a loaded machine (the stop came before the request reached the publish)
    await waitFor(`asset listed (log: ${api.log()})`, async () => {
      const r = await fetch(`${base}/v1/assets/`, { headers: { authorization: 'Bearer k1' } });
      return r.ok && ((await r.json()) as { items: unknown[] }).items.length > 0 ? true : undefined;
    }, 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    const { code, ms } = await terminate(api, 30_000);
    expect(code, api.log()).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(await created).toBe(201); // the asset exists; its job is durable in the outbox
    expect(api.log()).toMatch(/jobs not enqueued: job_\S+ \(kept in the outbox, sent at the next start\)/);
  }, 240_000);
});
