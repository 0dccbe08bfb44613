/**
 * The worker as a process against a private nats-server: kill -9 in the middle of a stage,
 * SIGTERM drain, and a NATS restart during a job.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FsBlobStore, type Job, type WorkerEvent } from '@dub/core';
import { NatsEventFeed, NatsJobQueue, type NatsNames } from '@dub/worker';
import { startNatsServer, type TestNatsServer } from '../packages/worker/src/testing/nats-server.js';
import { EventLog, makeClip } from '../packages/worker/src/testing/harness.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'packages/worker/bin/dub-worker.js');
const FFMPEG_HANDLERS = path.join(ROOT, 'packages/worker/dist/testing/ffmpeg-handlers.js');
const CONTROL_HANDLERS = path.join(ROOT, 'packages/worker/dist/testing/control-handlers.js');

let server: TestNatsServer;
let nc: NatsConnection;
let tmp: string;
let blobs: string;
let store: FsBlobStore;
let queue: NatsJobQueue;
let feed: NatsEventFeed;
const log = new EventLog();
const procs: ChildProcess[] = [];
const names: Partial<NatsNames> = {};

beforeAll(async () => {
  server = await startNatsServer();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-worker-proc-'));
  blobs = path.join(tmp, 'blobs');
  store = new FsBlobStore(blobs);
  nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  queue = await NatsJobQueue.connect(server.url, { names, ackWaitMs: 1500 });
  feed = await NatsEventFeed.connect(server.url, { names });
  await feed.subscribe(log.handler);
});

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  await feed?.close();
  await queue?.close();
  await nc?.close();
  await server?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function worker(handlers: string, extra: string[] = []): ChildProcess & { exited: Promise<number | null>; output: () => string } {
  const p = spawn(process.execPath, [BIN, '--nats', server.url, '--handlers', handlers, '--blobs', `fs:${blobs}`, '--concurrency', '1', '--ack-wait', '1500', ...extra], {
    env: { ...process.env, DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(p);
  let out = '';
  p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
  return Object.assign(p, { exited, output: () => out });
}

async function ready(p: ReturnType<typeof worker>): Promise<void> {
  const end = Date.now() + 20_000;
  while (!p.output().includes('worker ready')) {
    if (p.exitCode !== null) throw new Error(`worker exited: ${p.output()}`);
    if (Date.now() > end) throw new Error(`worker not ready: ${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function clipJob(asset: string, seconds: number): Promise<Job> {
  const file = path.join(tmp, `${asset}.mp4`);
  await makeClip(file, seconds);
  await store.putFile(`assets/${asset}/upload/source`, file);
  return { v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale: 'en-US', media: { blob: `assets/${asset}/upload/source` }, versions: [] };
}

const stagesOf = (asset: string) =>
  log
    .of(asset)
    .filter((e) => e.type === 'stage_done')
    .map((e) => `${(e as { stage: string }).stage}:${(e as { cached: boolean }).cached}`);
const isType = (asset: string, type: WorkerEvent['type']) => (e: WorkerEvent) => e.asset_id === asset && e.type === type;

async function jobsLeft(): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const end = Date.now() + 5000;
  for (;;) {
    const n = (await jsm.streams.info('DUB_JOBS')).state.messages;
    if (n === 0 || Date.now() > end) return n;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('worker process', () => {
  it('resumes a job after kill -9 mid-stage from its last finished stage, and completes it once', async () => {
    const job = await clipJob('kill9', 3);
    const first = worker(FFMPEG_HANDLERS);
    await ready(first);
    await queue.enqueue(job);
    await log.waitFor((e) => e.asset_id === 'kill9' && e.type === 'progress' && e.stage === 'transcode' && e.fraction > 0.1, 30_000, 'transcode progress');
    first.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    expect(stagesOf('kill9')).toEqual(['probe:false']);
    const second = worker(FFMPEG_HANDLERS);
    await ready(second);
    await log.waitFor(isType('kill9', 'asset_prepared'), 40_000);
    expect(stagesOf('kill9')).toEqual(['probe:false', 'probe:true', 'transcode:false', 'extract-audio:false']);
    await new Promise((r) => setTimeout(r, 500));
    expect(log.of('kill9').filter((e) => e.type === 'asset_prepared')).toHaveLength(1);
    expect(await jobsLeft()).toBe(0);
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 90_000);

  it('drains on SIGTERM: finishes the job in hand and exits 0', async () => {
    const p = worker(CONTROL_HANDLERS);
    await ready(p);
    await queue.enqueue({ v: 1, type: 'prepare-asset', job_id: 'job-drain', asset_id: 'slow1500-drain', locale: 'en-US', media: { blob: 'x' }, versions: [] });
    const jsm = await jetstreamManager(nc);
    const end = Date.now() + 10_000;
    while ((await jsm.consumers.info('DUB_JOBS', 'dub-worker')).num_ack_pending === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(log.of('slow1500-drain').map((e) => e.type)).toContain('asset_prepared');
    expect(p.output()).toContain('worker stopped');
    expect(await jobsLeft()).toBe(0);
  }, 30_000);

  it('on SIGTERM past the drain timeout, aborts and naks the job, exits 0, and another worker finishes it', async () => {
    const p = worker(CONTROL_HANDLERS, ['--drain-timeout', '200']);
    await ready(p);
    await queue.enqueue({ v: 1, type: 'prepare-asset', job_id: 'job-nak', asset_id: 'slow4000-nak', locale: 'en-US', media: { blob: 'x' }, versions: [] });
    const jsm = await jetstreamManager(nc);
    const end = Date.now() + 10_000;
    while ((await jsm.consumers.info('DUB_JOBS', 'dub-worker')).num_ack_pending === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(3500);
    expect(p.output()).toContain('drain timeout');
    expect(log.of('slow4000-nak')).toEqual([]);
    const info = await jsm.consumers.info('DUB_JOBS', 'dub-worker');
    expect(info.num_pending + info.num_ack_pending + info.num_redelivered).toBeGreaterThan(0);
    const q = worker(CONTROL_HANDLERS);
    await ready(q);
    await log.waitFor(isType('slow4000-nak', 'asset_prepared'), 20_000);
    q.kill('SIGTERM');
    expect(await q.exited).toBe(0);
  }, 40_000);

  it('completes a job when the NATS server restarts in the middle of it', async () => {
    const job = await clipJob('restart', 3);
    const p = worker(FFMPEG_HANDLERS, ['--ack-wait', '1500']);
    await ready(p);
    await queue.enqueue(job);
    await log.waitFor((e) => e.asset_id === 'restart' && e.type === 'progress' && e.stage === 'transcode', 30_000, 'transcode progress');
    await server.stop();
    await new Promise((r) => setTimeout(r, 1000));
    await server.restart();
    await log.waitFor(isType('restart', 'asset_prepared'), 60_000);
    expect(p.output()).toContain('NATS reconnected');
    expect(stagesOf('restart').filter((s) => s === 'transcode:false')).toHaveLength(1);
    expect(await jobsLeft()).toBe(0);
    const t1 = Date.now();
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(Date.now() - t1).toBeLessThan(10_000);
  }, 90_000);
});
