// What overlapping separation with transcription can buy on this machine (issue #14, item 4).
//
// prepare-asset runs separation (HTDemucs on the spans its plan names) and then VAD +
// transcription of the separated speech; trim and thumbnail already run beside them. Feeding the
// transcription window by window while separation is still running can at best hide the shorter
// of the two behind the longer. This benchmark measures that bound directly, on a real clip made
// from ../shared/media (bench/lib/clips.mjs: looped real English speech with music-coffee.wav
// under it, the `music` variant of bench/e2e.mjs), without building the windowed pipeline:
//
//   sequential   separation, then VAD + transcription of its speech track (what runs today)
//   concurrent   the same separation and, at the same time, VAD + transcription of a speech track
//                separated before (the same work, perfectly overlapped: the most windowing could give)
//
// Each side runs in its own node process started as `dub` starts (the same allocator setting),
// with the stages prepare-asset calls (@dub/pipeline defaultStages), so the concurrent mode is
// also the case of a worker whose other job transcribes while this one separates. The two modes
// alternate for --rounds rounds; the table gives each round's wall seconds and the machine's CPU
// busy share (from /proc/stat) while each part ran. The bound is 1 - concurrent / sequential.
//
// Usage (after `npm run build`): node bench/overlap.mjs [--minutes 1] [--rounds 2]
//   [--engine auto|htdemucs|htdemucs-int8] [--keep DIR]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  // One side: `sep MIX PLAN.json SPEECH BACKGROUND ENGINE` or `asr SPEECH`; prints its result as JSON.
  const { loadConfig } = await import('@dub/core');
  const { SessionCache } = await import('@dub/onnx');
  const { defaultStages } = await import('@dub/pipeline');
  const [, , , what, ...args] = process.argv;
  const config = loadConfig(process.env);
  const env = { config, sessions: new SessionCache(), tmpDir: path.dirname(args[0]) };
  const t0 = performance.now();
  let out;
  if (what === 'plan') {
    const r = await defaultStages.planSeparation(args[0], env, {});
    out = { plan: r.plan };
  } else if (what === 'sep') {
    const plan = JSON.parse(fs.readFileSync(args[1], 'utf8'));
    const engine = args[4] === 'auto' ? undefined : args[4];
    const { SEPARATION_ENGINES } = await import('@dub/separation');
    const resolved = await SEPARATION_ENGINES.resolve(engine ?? 'auto', undefined, { models: { modelsDir: config.modelsDir }, device: config.device });
    const id = await defaultStages.separate(args[0], { speech: args[2], background: args[3] }, undefined, env, {}, plan, resolved.id);
    out = { engine: id, label: resolved.record.label ?? id };
  } else if (what === 'asr') {
    const vad = await defaultStages.detectSpeech(args[0], env, {});
    const r = await defaultStages.transcribe(args[0], { locale: 'en-US', regions: vad }, env, {});
    out = { engine: r.engine, segments: r.segments.length, words: r.segments.reduce((n, s) => n + s.words.length, 0) };
  } else throw new Error(`unknown child ${what}`);
  // CPU seconds of this process and of the children it waited for (ffmpeg, pocketsphinx), from /proc/self/stat.
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const ticks = f[11] + f[12] + f[13] + f[14];
  console.log(JSON.stringify({ ...out, seconds: (performance.now() - t0) / 1000, cpuSeconds: ticks / 100 }));
  process.exit(0);
}

const { clip: clipIn, clipsDir, ffmpeg, ROOT } = await import('./lib/clips.mjs');
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '2' },
    engine: { type: 'string', default: 'auto' },
    keep: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const rounds = Number(values.rounds);
if (!(minutes > 0) || !(rounds >= 1)) throw new Error('--minutes must be > 0 and --rounds >= 1');
const clips = clipsDir('overlap', values.keep);
const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-overlap-'));

/** Busy and total jiffies of all CPUs now. */
function cpuNow() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
const busyShare = (a, b) => (b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : NaN);

/** Runs one side in a child node process (the allocator setting of packages/cli/bin/dub.js). */
function child(what, args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c0 = cpuNow();
    const p = spawn(process.execPath, [self, '--child', what, ...args], {
      cwd: ROOT,
      env: { ...process.env, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '1048576', DUB_LOG_LEVEL: 'warn', DUB_TMP_DIR: work },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    p.on('close', (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (code !== 0) return reject(new Error(`${what} exited with ${code}: ${stderr}`));
      const line = stdout.trim().split('\n').pop();
      resolve({ ...JSON.parse(line), wall, cpu: busyShare(c0, cpuNow()) });
    });
  });
}

const input = clipIn(clips, minutes, 'music');
const mix = path.join(work, 'mix.wav');
ffmpeg(['-i', input, '-vn', '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', mix]);
const planned = await child('plan', [mix]);
const planFile = path.join(work, 'plan.json');
await fsp.writeFile(planFile, JSON.stringify(planned.plan));
const out = (name) => path.join(work, name);
// The stem the concurrent mode transcribes (made once, not timed).
const first = await child('sep', [mix, planFile, out('speech-0.wav'), out('background-0.wav'), values.engine]);
console.log(`clip: ${minutes} min music (${path.basename(input)}), plan ${planned.plan.mode} (${planned.plan.modelSeconds?.toFixed?.(1) ?? '?'} s of model), engine ${first.label}; ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);

const rows = [];
for (let r = 1; r <= rounds; r++) {
  // sequential: separation, then VAD + ASR on its output
  const c0 = cpuNow();
  const t0 = performance.now();
  const sep = await child('sep', [mix, planFile, out(`speech-s${r}.wav`), out(`background-s${r}.wav`), values.engine]);
  const asr = await child('asr', [out(`speech-s${r}.wav`)]);
  const seqWall = (performance.now() - t0) / 1000;
  rows.push({ round: r, mode: 'sequential', wall: seqWall, sep: sep.wall, asr: asr.wall, sepCpuS: sep.cpuSeconds, asrCpuS: asr.cpuSeconds, cpu: busyShare(c0, cpuNow()), sepCpu: sep.cpu, asrCpu: asr.cpu, words: asr.words });
  // concurrent: the same separation beside VAD + ASR of the stem made before
  const c1 = cpuNow();
  const t1 = performance.now();
  const [sep2, asr2] = await Promise.all([
    child('sep', [mix, planFile, out(`speech-c${r}.wav`), out(`background-c${r}.wav`), values.engine]),
    child('asr', [out('speech-0.wav')]),
  ]);
  const conWall = (performance.now() - t1) / 1000;
  rows.push({ round: r, mode: 'concurrent', wall: conWall, sep: sep2.wall, asr: asr2.wall, sepCpuS: sep2.cpuSeconds, asrCpuS: asr2.cpuSeconds, cpu: busyShare(c1, cpuNow()), words: asr2.words });
  for (const f of await fsp.readdir(work)) if (/-(s|c)\d+\.wav$/.test(f)) await fsp.rm(path.join(work, f));
}

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const pct = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : '—');
console.log('\n| round | mode | wall s | separation s (CPU s) | VAD + ASR s (CPU s) | machine CPU busy | busy during separation / ASR |');
console.log('|---|---|---|---|---|---|---|');
for (const x of rows) console.log(`| ${x.round} | ${x.mode} | ${f2(x.wall)} | ${f2(x.sep)} (${f2(x.sepCpuS)}) | ${f2(x.asr)} (${f2(x.asrCpuS)}) | ${pct(x.cpu)} | ${x.mode === 'sequential' ? `${pct(x.sepCpu)} / ${pct(x.asrCpu)}` : '—'} |`);
const seq = rows.filter((x) => x.mode === 'sequential');
const con = rows.filter((x) => x.mode === 'concurrent');
const best = (xs) => Math.min(...xs.map((x) => x.wall));
console.log(`\nbest sequential ${f2(best(seq))} s, best concurrent ${f2(best(con))} s: perfect overlap saves at most ${pct(1 - best(con) / best(seq))} of these two stages' time here`);
console.log(`(per round: ${seq.map((s, i) => pct(1 - con[i].wall / s.wall)).join(', ')}); load at the end ${os.loadavg()[0].toFixed(1)}`);
// On a machine with nothing else running, the concurrent wall time is at least the two sides' CPU
// seconds over the cores, and at least the longer side alone: the bound that does not depend on
// what else shared the machine during this run.
const cores = os.cpus().length;
for (const s of seq) {
  const floor = Math.max((s.sepCpuS + s.asrCpuS) / cores, s.sep, s.asr);
  console.log(`round ${s.round}, CPU bound: separation ${f2(s.sepCpuS)} CPU s in ${f2(s.sep)} s (${f2(s.sepCpuS / s.sep)} cores), ASR ${f2(s.asrCpuS)} CPU s in ${f2(s.asr)} s (${f2(s.asrCpuS / s.asr)} cores); overlapped on ${cores} idle cores they need >= ${f2(floor)} s of the ${f2(s.sep + s.asr)} s: at most ${pct(1 - floor / (s.sep + s.asr))} saved`);
}
await fsp.rm(work, { recursive: true, force: true });
