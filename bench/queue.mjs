#!/usr/bin/env node
// Queue benchmark: enqueue -> ack throughput with no-op handlers, and the latency a single job
// pays beyond its stages, for the @dub/worker daemon (NatsJobQueue + WorkerDaemon, job threads)
// against a bare JetStream publish/consume loop (the peer), in the same run on the same private
// nats-server. Prints a markdown table with ratios. Run after `npm run build`:
//   node bench/queue.mjs [--jobs 5000] [--concurrency 8] [--latency-samples 200]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, RetentionPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { loadConfig } from '@dub/core';
import { NatsJobQueue, WorkerDaemon } from '@dub/worker';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startNatsServer } = await import(path.join(root, 'packages/worker/dist/testing/nats-server.js'));
const NOOP = path.join(root, 'packages/worker/dist/testing/noop-handlers.js');

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '8' }, 'latency-samples': { type: 'string', default: '200' } } });
const N = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const SAMPLES = Number(values['latency-samples']);
const WINDOW = 128; // publishes in flight

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

async function windowed(n, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(WINDOW, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

const job = (i, tag) => ({ v: 1, type: 'prepare-asset', job_id: `${tag}-${i}`, asset_id: `a-${i}`, locale: 'en-US', media: { blob: 'x' }, versions: [] });

// ---- peer: bare JetStream work queue, publish with msgID, consume + ack ----
async function peer(url) {
  const nc = await connect({ servers: url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'PEER', subjects: ['peer.>'], retention: RetentionPolicy.Workqueue });
  await jsm.consumers.add('PEER', { durable_name: 'c', ack_policy: AckPolicy.Explicit, max_deliver: -1 });
  const js = jetstream(nc);
  const consumer = await js.consumers.get('PEER', 'c');
  let acked = 0;
  const seenAt = new Map();
  const iter = await consumer.consume({ max_messages: 256 });
  const loop = (async () => {
    for await (const m of iter) {
      const body = JSON.parse(m.string());
      m.ack();
      acked++;
      const w = seenAt.get(body.job_id);
      if (w) w();
    }
  })();
  const t0 = performance.now();
  await windowed(N, (i) => { const j = job(i, 'p'); return js.publish('peer.jobs.prepare-asset', JSON.stringify(j), { msgID: j.job_id }); });
  while (acked < N) await sleep(1);
  const seconds = (performance.now() - t0) / 1000;
  const lat = [];
  for (let i = 0; i < SAMPLES; i++) {
    const j = job(i, 'pl');
    const done = new Promise((r) => seenAt.set(j.job_id, r));
    const s = performance.now();
    await js.publish('peer.jobs.prepare-asset', JSON.stringify(j), { msgID: j.job_id });
    await done;
    lat.push(performance.now() - s);
  }
  iter.stop();
  await loop.catch(() => undefined);
  await nc.close();
  return { throughput: N / seconds, median: median(lat), p95: p95(lat) };
}

// ---- ours: NatsJobQueue.enqueue -> WorkerDaemon (threads, no-op handlers) -> ack ----
async function ours(url) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-bench-queue-'));
  const daemon = await WorkerDaemon.start({ servers: url, concurrency: CONCURRENCY, handlersModule: NOOP, blobs: { kind: 'fs', root: tmp }, config: loadConfig({}), limits: {} });
  const queue = await NatsJobQueue.connect(url);
  const done = () => daemon.metrics.jobs.get({ type: 'prepare-asset', outcome: 'done' });
  const t0 = performance.now();
  await windowed(N, (i) => queue.enqueue(job(i, 'o')));
  while (done() < N) await sleep(1);
  const seconds = (performance.now() - t0) / 1000;
  const lat = [];
  for (let i = 0; i < SAMPLES; i++) {
    const before = done();
    const s = performance.now();
    await queue.enqueue(job(i, 'ol'));
    while (done() === before) await new Promise((r) => setImmediate(r));
    lat.push(performance.now() - s);
  }
  await queue.close();
  await daemon.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  return { throughput: N / seconds, median: median(lat), p95: p95(lat) };
}

const server = await startNatsServer();
try {
  const p = await peer(server.url);
  const o = await ours(server.url);
  const f = (x, d = 0) => x.toFixed(d);
  console.log(`\nQueue benchmark: ${N} jobs, worker concurrency ${CONCURRENCY}, ${SAMPLES} latency samples, ${os.cpus().length} CPUs, nats-server private\n`);
  console.log('| metric | @dub/worker | bare JetStream | ratio (ours/peer) |');
  console.log('|---|---:|---:|---:|');
  console.log(`| enqueue -> ack throughput (jobs/s) | ${f(o.throughput)} | ${f(p.throughput)} | ${f(o.throughput / p.throughput, 2)} |`);
  console.log(`| single job enqueue -> ack, median (ms) | ${f(o.median, 2)} | ${f(p.median, 2)} | ${f(o.median / p.median, 2)} |`);
  console.log(`| single job enqueue -> ack, p95 (ms) | ${f(o.p95, 2)} | ${f(p.p95, 2)} | ${f(o.p95 / p.p95, 2)} |`);
  console.log(`\nOverhead a job pays beyond its stages (median, ours - peer): ${f(o.median - p.median, 2)} ms (target < 5 ms); throughput target >= 1000 jobs/s: ${o.throughput >= 1000 ? 'met' : 'not met'}.`);
} finally {
  await server.dispose();
}
