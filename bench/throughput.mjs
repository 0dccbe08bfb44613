// Throughput of one worker: N one-minute clean jobs (a real talking head under real English
// speech, bench/e2e.mjs's recipe) through the product's distributed path, `dub serve --nats` +
// `dub worker --nats --concurrency C` on a private nats-server, each asset created over HTTP with
// auto_generate no_lips (prepare, translate, synthesize, mix, encode, quality report), for
// C = 1, 2, 4. All N assets are created at once; the worker takes C at a time. Reports jobs per
// hour (N / wall from the first upload to the last Completed), p50/p95 job latency (upload to
// Completed: queueing included) and the worker's peak RSS (its process tree, sampled every 100 ms
// from /proc). The peer is the floor of the same run: one job alone (C = 1, its first job).
// Usage (after `npm run build`): node bench/throughput.mjs [--jobs N] [--concurrency 1,2,4] [--keep DIR]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { treeRss } from './lib/rss.mjs';
import { cpuWords } from './lib/cpu.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const MEDIA = path.resolve(ROOT, '..', 'shared', 'media');
const DUB = path.join(ROOT, 'packages/cli/bin/dub.js');
const { values } = parseArgs({ options: { jobs: { type: 'string', default: '4' }, concurrency: { type: 'string', default: '1,2,4' }, keep: { type: 'string' } } });
const N = Number(values.jobs);
const levels = values.concurrency.split(',').map(Number);

const needed = ['talking-head-480.mp4', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'jfk.wav', 'two-speakers-call.wav'];
if (needed.some((f) => !fs.existsSync(path.join(MEDIA, f)))) {
  console.log(`bench throughput skipped: ${MEDIA} lacks the recordings (bash scripts/fetch-test-media.sh)`);
  process.exit(0);
}
const clips = values.keep ? path.resolve(values.keep) : await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-tput-'));
const clip = path.join(clips, 'clip-1min-clean.mp4');
if (!fs.existsSync(clip)) {
  const r = spawnSync(process.execPath, [path.join(here, 'e2e.mjs'), '--minutes', '1', '--variants', 'clean', '--keep', clips, '--prepare-only'], { stdio: 'inherit' });
  if (r.status !== 0 || !fs.existsSync(clip)) throw new Error('could not prepare the clip');
}
const { startNatsServer } = await import(path.join(ROOT, 'packages/worker/dist/testing/nats-server.js'));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}


function start(args, env) {
  const child = spawn(process.execPath, [DUB, ...args], { env: { ...process.env, DUB_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (c) => (log = (log + c).slice(-4000)));
  child.stderr.on('data', (c) => (log = (log + c).slice(-4000)));
  return { child, log: () => log, stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')))) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const KEY = 'bench-key';
const auth = { authorization: `Bearer ${KEY}` };
const video = fs.readFileSync(clip);

async function level(c) {
  const dir = await fsp.mkdtemp(path.join(clips, `tput-${c}-`));
  const nats = await startNatsServer();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const blobs = `fs:${path.join(dir, 'blobs')}`;
  const api = start(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'api'), '--nats', nats.url, '--blobs', blobs], { DUB_API_KEYS: `${KEY}:org1` });
  const worker = start(['worker', '--nats', nats.url, '--blobs', blobs, '--data-dir', path.join(dir, 'worker'), '--concurrency', String(c)], {});
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(worker.child.pid))), 100);
  try {
    for (let i = 0; ; i++) {
      if (i > 600) throw new Error(`dub serve did not start: ${api.log()}`);
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        // not yet
      }
      await sleep(250);
    }
    const t0 = performance.now();
    const jobs = [];
    for (let i = 0; i < N; i++) {
      const form = new FormData();
      form.set('request', JSON.stringify({ name: `tput-${c}-${i}`, locale: 'en-US', languages: [{ locale: 'es-ES' }], auto_generate: 'no_lips', speakers_count: 1 }));
      form.set('video', new Blob([video], { type: 'video/mp4' }), 'clip.mp4');
      const res = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
      if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
      const a = await res.json();
      jobs.push({ version: a.languages[0].versions[0].version_id, created: performance.now(), done: undefined });
    }
    while (jobs.some((j) => j.done === undefined)) {
      for (const j of jobs.filter((x) => x.done === undefined)) {
        const v = await (await fetch(`${base}/v1/versions/${j.version}`, { headers: auth })).json();
        if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}\n${worker.log()}`);
        if (v.status === 'Completed') j.done = performance.now();
      }
      if (performance.now() - t0 > 3600_000) throw new Error('over an hour');
      await sleep(500);
    }
    const wall = (Math.max(...jobs.map((j) => j.done)) - t0) / 1000;
    const lat = jobs.map((j) => (j.done - j.created) / 1000).sort((a, b) => a - b);
    const q = (p) => lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)];
    return { c, wall, perHour: (N / wall) * 3600, p50: q(0.5), p95: q(0.95), first: Math.min(...lat), peak };
  } finally {
    clearInterval(timer);
    await worker.stop();
    await api.stop();
    await nats.dispose();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const c of levels) {
  const r = await level(c);
  rows.push(r);
  console.error(`concurrency ${c}: ${N} jobs in ${r.wall.toFixed(1)} s`);
}
const floor = rows.find((r) => r.c === 1)?.first ?? rows[0].first;
console.log(`\n### worker throughput: ${N} one-minute clean jobs (en-US -> es-ES, no_lips, auto engines) through dub serve --nats + dub worker, ${cpuWords()}, ${new Date().toISOString().slice(0, 10)}\n`);
console.log('| concurrency | jobs per hour | vs concurrency 1 | p50 latency s | p95 latency s | wall s | worker peak RSS MiB (tree) |');
console.log('|---|---|---|---|---|---|---|');
const base1 = rows.find((r) => r.c === 1)?.perHour ?? rows[0].perHour;
for (const r of rows) console.log(`| ${r.c} | ${r.perHour.toFixed(1)} | ${(r.perHour / base1).toFixed(2)}x | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.wall.toFixed(1)} | ${(r.peak / 2 ** 20).toFixed(0)} |`);
console.log(`\nfloor: one job alone took ${floor.toFixed(1)} s (RTF ${(floor / 60).toFixed(2)} for the 1-minute clip)`);
if (!values.keep) await fsp.rm(clips, { recursive: true, force: true });
