// Worker memory per concurrent job: the embedded runtime with its worker-thread pool (the same
// ThreadPool, limits and per-thread ONNX session caches as `dub worker`) runs N prepare-asset
// jobs at once on N copies of a real 1-minute clip (the face of talking-head-480.mp4 under real
// English speech from ../shared/media, with music-coffee.wav under it, or without: --variant),
// for N = 1, 2 (--jobs 1,2,3). Each N runs in a fresh child process; its peak RSS (the process
// and its ffmpeg/pocketsphinx children, sampled every 100 ms from /proc) is reported with the
// increase per added job. Separation and ASR share the `gpu` limit (default 1), so their peaks
// do not add up across jobs; what each added job brings is its thread, its sessions and its
// other stages. Prepared clips come from bench/e2e.mjs's recipe (--keep DIR reuses them).
// Run after `npm run build`: node bench/worker-memory.mjs [--jobs 1,2] [--variant music|clean] [--keep DIR]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { treeRss } from './lib/rss.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MEDIA = path.resolve(here, '..', '..', 'shared', 'media');

if (process.argv[2] === '--child') {
  // Child: N jobs at once through the thread pool; prints the wall time.
  const { FsBlobStore, blobKeys, loadConfig } = await import('@dub/core');
  const { createEmbeddedRuntime } = await import('@dub/worker');
  const [clip, n, dir] = [process.argv[3], Number(process.argv[4]), process.argv[5]];
  const store = new FsBlobStore(path.join(dir, 'blobs'));
  const config = loadConfig({ ...process.env, DUB_DATA_DIR: dir, DUB_TMP_DIR: dir, DUB_WARMUP: '0' });
  const rt = createEmbeddedRuntime({ dataDir: dir, store, config, concurrency: n });
  const left = new Set();
  const done = new Promise((resolve, reject) => {
    void rt.events.subscribe(async (ev) => {
      if (ev.type === 'asset_prepared') left.delete(ev.asset_id);
      else if (ev.type === 'asset_failed') reject(new Error(`${ev.asset_id}: ${ev.error.error_code} ${ev.error.detail}`));
      if (left.size === 0) resolve();
    });
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const asset = `ast_mem_${i}`;
    left.add(asset);
    await store.putFile(blobKeys.sourceUpload(asset), clip);
    await rt.queue.enqueue({ v: 1, type: 'prepare-asset', job_id: `${asset}-prepare`, asset_id: asset, locale: 'en-US', media: { blob: blobKeys.sourceUpload(asset) }, speakers_count: 1, versions: [] });
  }
  await done;
  const wall = (performance.now() - t0) / 1000;
  await rt.close();
  console.log(JSON.stringify({ wall }));
  process.exit(0);
}

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '1,2' }, variant: { type: 'string', default: 'music' }, keep: { type: 'string' } } });
const counts = values.jobs.split(',').map(Number);
const needed = ['talking-head-480.mp4', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'jfk.wav', 'two-speakers-call.wav', 'music-coffee.wav'];
if (needed.some((f) => !fs.existsSync(path.join(MEDIA, f)))) {
  console.log(`bench worker-memory skipped: ${MEDIA} lacks the recordings`);
  process.exit(0);
}
const clips = values.keep ? path.resolve(values.keep) : await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-wmem-'));
const clip = path.join(clips, `clip-1min-${values.variant}.mp4`);
if (!fs.existsSync(clip)) {
  // Same recipe as bench/e2e.mjs (it writes the clip into --keep).
  const r = spawnSync(process.execPath, [path.join(here, 'e2e.mjs'), '--minutes', '1', '--variants', values.variant, '--keep', clips, '--prepare-only'], { stdio: 'inherit' });
  if (r.status !== 0 || !fs.existsSync(clip)) throw new Error('could not prepare the clip');
}


const rows = [];
for (const n of counts) {
  const dir = await fsp.mkdtemp(path.join(clips, `wmem-${n}-`));
  try {
    // The allocator setting `dub worker` starts with (packages/cli/bin/dub.js), unless the caller set one.
    const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '1048576' };
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', clip, String(n), dir], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, treeRss(child.pid))), 100);
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearInterval(timer);
    if (code !== 0) throw new Error(`${n} jobs: exit ${code}`);
    rows.push({ n, peak, wall: JSON.parse(out.trim().split('\n').pop()).wall });
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
const mib = (b) => (b / 2 ** 20).toFixed(0);
console.log(`\n### worker memory: prepare-asset on a 1-minute ${values.variant} clip, N jobs at once (N worker threads, gpu limit 1), ${os.cpus().length} cores\n`);
console.log('| concurrent jobs | peak RSS MiB (tree) | per job vs 1 job | wall s |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.n} | ${mib(r.peak)} | ${r.n > 1 ? `+${mib((r.peak - rows[0].peak) / (r.n - rows[0].n))}` : '—'} | ${r.wall.toFixed(1)} |`);
if (!values.keep) await fsp.rm(clips, { recursive: true, force: true });
