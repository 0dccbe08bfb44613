/**
 * The NATS worker against a real nats-server (127.0.0.1:4222 when reachable, else a private one),
 * each test on its own streams, consumers and subjects.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FsBlobStore, NotFoundError, loadConfig, type Job, type WorkerEvent } from '@dub/core';
import { NatsEventFeed, NatsEventSink, NatsJobQueue, NatsObjectBlobStore, WorkerDaemon, completeEvent, resolveTopology, type NatsNames, type WorkerDaemonOptions } from '@dub/worker';
import { natsForTests } from '../packages/worker/src/testing/nats-server.js';
import { EventLog, makeClip } from '../packages/worker/src/testing/harness.js';

const WORKER_DIST = path.resolve(import.meta.dirname, '../packages/worker/dist/testing');
const FFMPEG_HANDLERS = path.join(WORKER_DIST, 'ffmpeg-handlers.js');
const CONTROL_HANDLERS = path.join(WORKER_DIST, 'control-handlers.js');

let nats: { url: string; dispose(): Promise<void> };
let nc: NatsConnection;
let tmp: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  nats = await natsForTests();
  nc = await connect({ servers: nats.url });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-worker-nats-'));
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await nc?.close();
  await nats?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function uniqueNames(): NatsNames {
  const id = randomBytes(4).toString('hex');
  const names = { jobsStream: `T_JOBS_${id}`, eventsStream: `T_EVENTS_${id}`, jobsPrefix: `t${id}.jobs`, eventsPrefix: `t${id}.events`, workerConsumer: 'w', eventsConsumer: 'api' };
  cleanups.push(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(names.jobsStream).catch(() => undefined);
    await jsm.streams.delete(names.eventsStream).catch(() => undefined);
  });
  return names;
}

interface Setup {
  names: NatsNames;
  daemon: WorkerDaemon;
  queue: NatsJobQueue;
  log: EventLog;
  store: FsBlobStore;
}

async function setup(o: Partial<WorkerDaemonOptions> & { handlersModule: string }): Promise<Setup> {
  const names = uniqueNames();
  const root = fs.mkdtempSync(path.join(tmp, 'blobs-'));
  const store = new FsBlobStore(root);
  const daemon = await WorkerDaemon.start({
    servers: nats.url,
    names,
    blobs: { kind: 'fs', root },
    config: loadConfig({ DUB_TMP_DIR: tmp }),
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    metricsPort: 0,
    metricsHost: '127.0.0.1',
    fetchExpiresMs: 1000,
    ...o,
  });
  cleanups.push(() => daemon.stop());
  const queue = await NatsJobQueue.connect(nats.url, { names });
  cleanups.push(() => queue.close());
  const feed = await NatsEventFeed.connect(nats.url, { names });
  cleanups.push(() => feed.close());
  const log = new EventLog();
  await feed.subscribe(log.handler);
  return { names, daemon, queue, log, store };
}

function assetJob(asset: string, extra: Partial<Job> = {}): Job {
  return { v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale: 'en-US', media: { blob: `assets/${asset}/upload/source` }, versions: [], ...extra } as Job;
}

/** Messages left in the stream once acks had time to land (polls up to 5 s for zero). */
async function streamMessages(stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const end = Date.now() + 5000;
  for (;;) {
    const n = (await jsm.streams.info(stream)).state.messages;
    if (n === 0 || Date.now() > end) return n;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function metricsText(d: WorkerDaemon): Promise<string> {
  return (await fetch(`http://127.0.0.1:${d.metricsPort}/metrics`)).text();
}

const isType = (asset: string, type: WorkerEvent['type']) => (e: WorkerEvent) => e.asset_id === asset && e.type === type;

describe('NATS worker daemon', () => {
  it('runs prepare-asset, prepare-version and generate-version end to end with real ffmpeg stages', async () => {
    const s = await setup({ handlersModule: FFMPEG_HANDLERS, concurrency: 2 });
    const clip = path.join(tmp, 'e2e.mp4');
    await makeClip(clip, 1);
    await s.store.putFile('assets/a-e2e/upload/source', clip);
    await s.queue.enqueue(assetJob('a-e2e'));
    const prepared = await s.log.waitFor(isType('a-e2e', 'asset_prepared'), 60_000);
    expect(prepared).toMatchObject({ source_video_key: 'assets/a-e2e/source.mp4', job_id: 'job-a-e2e' });
    expect((prepared as { duration: number }).duration).toBeGreaterThan(0.8);
    const stages = s.log.of('a-e2e').filter((e) => e.type === 'stage_done').map((e) => `${(e as { stage: string }).stage}:${(e as { cached: boolean }).cached}`);
    expect(stages).toEqual(['probe:false', 'transcode:false', 'extract-audio:false']);
    await s.queue.enqueue({ v: 1, type: 'prepare-version', job_id: 'job-v-e2e', asset_id: 'a-e2e', source_locale: 'en-US', version: { version_id: 'ver1', dubbing_id: 'dub1', locale: 'es-ES' } });
    await s.log.waitFor(isType('a-e2e', 'version_prepared'), 30_000);
    await s.queue.enqueue({ v: 1, type: 'generate-version', job_id: 'job-g-e2e', asset_id: 'a-e2e', version_id: 'ver1', locale: 'es-ES', mode: 'no_lips', script_key: 'versions/ver1/script.json', generation: 1, options: {} });
    const gen = await s.log.waitFor(isType('a-e2e', 'version_generated'), 30_000);
    expect(gen).toMatchObject({ result_video_key: 'versions/ver1/gen-1/result.mp4', generation: 1 });
    expect((await s.store.stat('versions/ver1/gen-1/result.mp4'))!.size).toBeGreaterThan(1000);
    expect(await streamMessages(s.names.jobsStream)).toBe(0);
    const m = await metricsText(s.daemon);
    expect(m).toContain('dub_worker_stage_seconds_count{stage="transcode",cached="false"} 1');
    expect(m).toContain('dub_worker_jobs_total{type="prepare-asset",outcome="done"} 1');
    expect(m).toMatch(/dub_worker_queue_pending 0/);
    const health = await fetch(`http://127.0.0.1:${s.daemon.metricsPort}/healthz`);
    expect(health.status).toBe(200);
  }, 90_000);

  it('runs a job_id published twice once', async () => {
    const s = await setup({ handlersModule: CONTROL_HANDLERS, concurrency: 2 });
    await s.queue.enqueue(assetJob('ok-dedup'));
    await s.queue.enqueue(assetJob('ok-dedup'));
    await s.log.waitFor(isType('ok-dedup', 'asset_prepared'));
    await s.queue.enqueue(assetJob('ok-dedup'));
    await s.queue.enqueue(assetJob('ok-after'));
    await s.log.waitFor(isType('ok-after', 'asset_prepared'));
    expect(s.log.of('ok-dedup').filter((e) => e.type === 'asset_prepared')).toHaveLength(1);
    expect(await streamMessages(s.names.jobsStream)).toBe(0);
  });

  it('terms poison messages, records them with a code and leaves nothing in the stream', async () => {
    const s = await setup({ handlersModule: CONTROL_HANDLERS });
    nc.publish(`${s.names.jobsPrefix}.prepare-asset`, 'this is {not json');
    nc.publish(`${s.names.jobsPrefix}.prepare-asset`, JSON.stringify({ v: 1, type: 'prepare-asset', job_id: 'job-poison', asset_id: 'poison', locale: 'en-US' }));
    nc.publish(`${s.names.jobsPrefix}.generate-version`, JSON.stringify({ v: 1, type: 'generate-version', job_id: 'job-poison-g', asset_id: 'poison-g', version_id: 'vx', generation: 'two' }));
    const failed = await s.log.waitFor(isType('poison', 'asset_failed'));
    expect(failed).toMatchObject({ error: { error_code: 'invalid_input' } });
    expect((failed as { error: { detail: string } }).error.detail).toMatch(/invalid .*job/);
    await s.queue.enqueue(assetJob('ok-after-poison'));
    await s.log.waitFor(isType('ok-after-poison', 'asset_prepared'));
    // Too malformed to name a valid failure event: only logged and counted.
    expect(s.log.of('poison-g')).toEqual([]);
    expect(await streamMessages(s.names.jobsStream)).toBe(0);
    const m = await metricsText(s.daemon);
    expect(m).toContain('dub_worker_jobs_total{type="prepare-asset",outcome="invalid"} 2');
    expect(m).toContain('dub_worker_job_failures_total{type="prepare-asset",code="validation_error",final="true"} 2');
    expect(m).toContain('dub_worker_jobs_total{type="generate-version",outcome="invalid"} 1');
  });

  it('keeps a job that blocks its thread longer than ack_wait alive with heartbeats', async () => {
    const s = await setup({ handlersModule: CONTROL_HANDLERS, concurrency: 2, ackWaitMs: 1000 });
    const t0 = Date.now();
    await s.queue.enqueue(assetJob('busy3500-hb'));
    await s.log.waitFor(isType('busy3500-hb', 'asset_prepared'), 20_000);
    expect(Date.now() - t0).toBeGreaterThan(3000);
    // A redelivery after ack_wait would have run on the second thread and emitted again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(s.log.of('busy3500-hb').map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(await streamMessages(s.names.jobsStream)).toBe(0);
  }, 30_000);

  it('retries retryable failures with backoff and fails permanent ones with their code', async () => {
    const s = await setup({ handlersModule: CONTROL_HANDLERS, concurrency: 2, maxDeliver: 3 });
    await s.queue.enqueue(assetJob('retry2-r'));
    await s.queue.enqueue(assetJob('retry9-x'));
    await s.queue.enqueue(assetJob('fail-missing_audio_track-p'));
    await s.queue.enqueue({ v: 1, type: 'prepare-version', job_id: 'job-pv', asset_id: 'fail-unsupported_language_pair-v', source_locale: 'en-US', version: { version_id: 'v9', dubbing_id: 'd9', locale: 'es-ES' } });
    await s.queue.enqueue({ v: 1, type: 'generate-version', job_id: 'job-gv', asset_id: 'boom-g', version_id: 'v8', locale: 'es-ES', mode: 'no_lips', script_key: 'k', generation: 2, options: {} });
    await s.log.waitFor(isType('retry2-r', 'asset_prepared'));
    expect(await s.log.waitFor(isType('retry9-x', 'asset_failed'))).toMatchObject({ error: { error_code: 'processing_failed' } });
    expect(await s.log.waitFor(isType('fail-missing_audio_track-p', 'asset_failed'))).toMatchObject({ error: { error_code: 'missing_audio_track' } });
    expect(await s.log.waitFor(isType('fail-unsupported_language_pair-v', 'version_failed'))).toMatchObject({ version_id: 'v9', error: { error_code: 'unsupported_language_pair' } });
    expect(await s.log.waitFor(isType('boom-g', 'version_generate_failed'))).toMatchObject({ version_id: 'v8', generation: 2, error: { error_code: 'general_error' } });
    expect(s.log.of('retry9-x').filter((e) => e.type === 'asset_failed')).toHaveLength(1);
    expect(await streamMessages(s.names.jobsStream)).toBe(0);
    const m = await metricsText(s.daemon);
    expect(m).toContain('dub_worker_jobs_total{type="prepare-asset",outcome="retry"} 4');
    expect(m).toContain('dub_worker_job_failures_total{type="prepare-asset",code="missing_audio_track",final="true"} 1');
  });

  it('delivers an event again to a throwing subscriber without letting later events overtake it', async () => {
    const names = uniqueNames();
    const feed = await NatsEventFeed.connect(nats.url, { names, redeliverBaseMs: 20 });
    cleanups.push(() => feed.close());
    const sink = new NatsEventSink(nc, resolveTopology({ names }));
    const job = assetJob('feed-order');
    for (const stage of ['a', 'b', 'c']) await sink.publish(completeEvent(job, { type: 'stage_done', job_type: 'prepare-asset', stage, cached: false, seconds: 0 }));
    const seen: string[] = [];
    let failures = 0;
    const sub = await feed.subscribe(async (e) => {
      const st = (e as { stage: string }).stage;
      if (st === 'a' && failures++ < 2) throw new Error('database busy');
      seen.push(st);
    });
    const end = Date.now() + 10_000;
    while (seen.length < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await sub.stop();
    expect(failures).toBe(3);
    expect(seen).toEqual(['a', 'b', 'c']);
    // Acked: a new subscription on the same durable consumer gets nothing again.
    const again: string[] = [];
    const sub2 = await feed.subscribe(async (e) => void again.push(e.type));
    await new Promise((r) => setTimeout(r, 1200));
    await sub2.stop();
    expect(again).toEqual([]);
  });

  it('runs jobs whose threads read and write blobs in the NATS object store', async () => {
    const bucket = `t-jobs-${randomBytes(4).toString('hex')}`;
    const s = await setup({ handlersModule: CONTROL_HANDLERS, concurrency: 2, blobs: { kind: 'nats', servers: [nats.url], bucket } });
    await s.queue.enqueue(assetJob('limit50-objstore'));
    await s.log.waitFor(isType('limit50-objstore', 'asset_prepared'));
    const store = await NatsObjectBlobStore.connect({ servers: [nats.url], bucket });
    cleanups.push(() => store.close());
    const span = JSON.parse((await store.getBuffer('limits/job-limit50-objstore.json')).toString()) as { start: number; end: number };
    expect(span.end - span.start).toBeGreaterThanOrEqual(45);
  });

  it('stores blobs in the NATS object store', async () => {
    const bucket = `t-blobs-${randomBytes(4).toString('hex')}`;
    const store = await NatsObjectBlobStore.connect({ servers: [nats.url], bucket });
    cleanups.push(() => store.close());
    const big = randomBytes(300_000);
    await store.put('assets/a/x.bin', big);
    const file = path.join(tmp, 'blob-in.txt');
    fs.writeFileSync(file, 'hello file');
    await store.putFile('assets/a/f.txt', file);
    await store.put('assets/b/s.txt', 'a string');
    expect(await store.stat('assets/a/x.bin')).toEqual({ size: 300_000 });
    expect((await store.getBuffer('assets/a/x.bin')).equals(big)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const c of await store.getStream('assets/a/x.bin', { start: 1000, end: 200_999 })) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(big.subarray(1000, 201_000))).toBe(true);
    await store.getToFile('assets/a/f.txt', path.join(tmp, 'blob-out.txt'));
    expect(fs.readFileSync(path.join(tmp, 'blob-out.txt'), 'utf8')).toBe('hello file');
    expect(await store.list('assets/a/')).toEqual(['assets/a/f.txt', 'assets/a/x.bin']);
    expect(store.localPath()).toBeUndefined();
    await store.put('assets/b/s.txt', 'replaced');
    expect((await store.getBuffer('assets/b/s.txt')).toString()).toBe('replaced');
    await store.deletePrefix('assets/a/');
    expect(await store.has('assets/a/x.bin')).toBe(false);
    expect(await store.list('assets/')).toEqual(['assets/b/s.txt']);
    await expect(store.getBuffer('assets/a/x.bin')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.getStream('nope/none')).rejects.toBeInstanceOf(NotFoundError);
  });
});
