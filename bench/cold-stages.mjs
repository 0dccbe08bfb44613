// Where a cold `dub run` of a short clip spends its time: one `dub run` (en-US -> es-ES, no_lips,
// a new process and data dir) per clip, the CPU seconds of its process tree (dub run and every
// ffmpeg child, from /proc every 25 ms) laid over each stage's interval (from the "stage done" log
// lines: the stage ran from `time - seconds` to `time`), beside its wall seconds. Stages that run
// side by side (trim beside audio, thumbnail beside the separation, the quality stage's lines
// beside audio and video) each count the CPU of the whole interval: their rows overlap. The first
// row is the process start (spawn to the first log line: node, the bundle's modules), the last the
// exit (the last log line to the process's end). ONNX sessions are listed where they were created
// (the stage loading them), with what they loaded from (the optimized graph cached or written).
//
// Usage (after `npm run build`): node bench/cold-stages.mjs [--seconds 8] [--variants clean]
//   [--keep DIR] (reuse the clips there) [--input FILE] (a clip of one's own instead)
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clipSeconds, clipsDir } from './lib/clips.mjs';
import { treeCpuSeconds } from './lib/rss.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DUB = path.join(here, '..', 'packages', 'cli', 'bin', 'dub.js');
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, variants: { type: 'string', default: 'clean' }, keep: { type: 'string' }, input: { type: 'string' } } });
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

async function profile(input, dir) {
  const t0 = Date.now();
  const child = spawn(DUB, ['run', '--input', input, '--from', 'en-US', '--to', 'es-ES', '--out', path.join(dir, 'out'), '--mode', 'no_lips', '--log-format', 'json'], {
    env: { ...process.env, DUB_LOG_LEVEL: 'debug', DUB_TMP_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const samples = [];
  // the running maximum: a child that has exited but was not yet waited for is counted by neither itself nor its parent
  const timer = setInterval(() => samples.push([Date.now(), Math.max(samples.at(-1)?.[1] ?? 0, treeCpuSeconds(child.pid))]), 25);
  const lines = [];
  let buf = '';
  child.stderr.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
      try {
        lines.push(JSON.parse(buf.slice(0, i)));
      } catch {
        // progress lines and onnxruntime's own output
      }
    }
  });
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(timer);
  const end = Date.now();
  if (code !== 0) throw new Error(`dub run exited with ${code}`);
  const cpuAt = (t) => {
    let c = 0;
    for (const [ts, v] of samples) if (ts <= t) c = v;
    return c;
  };
  const rows = [['process start, modules (spawn -> first log line)', t0, lines[0].time]];
  for (const j of lines) {
    const job = (j.job_type ?? '').replace(/-(version|asset)$/, '');
    if (j.msg === 'stage done' && typeof j.seconds === 'number') rows.push([`${job}: ${j.stage}`, j.time - j.seconds * 1000, j.time]);
    if (j.msg === 'quality: lines measured' && typeof j.seconds === 'number') rows.push([`${job}: quality lines (back-transcription, similarity)`, j.time - j.seconds * 1000, j.time]);
    if (j.msg === 'onnx session created') rows.push([`  session ${path.basename(j.model)} (${j.optimizedGraph ? 'optimized graph cached' : j.optimizedGraphWritten ? 'optimized graph written' : 'no optimized graph'})`, j.time, j.time]);
    if (j.msg === 'separation plan') rows.push([`  separation plan: ${j.mode} (${j.reason.slice(0, 60)}...)`, j.time, j.time]);
  }
  rows.push(['exit (last log line -> process end)', lines.at(-1).time, end]);
  const f2 = (x) => x.toFixed(2).padStart(7);
  const table = rows.map(([n, a, b]) => `${n.padEnd(64)} ${f2((a - t0) / 1000)} ${a === b ? '' : `${f2((b - a) / 1000)} ${f2(cpuAt(b) - cpuAt(a))}`}`);
  return { wall: (end - t0) / 1000, cpu: samples.at(-1)?.[1] ?? 0, table };
}

const inputs = values.input ? [[path.resolve(values.input), path.basename(values.input)]] : [];
if (!values.input) {
  const clips = clipsDir('cold-stages', values.keep);
  for (const v of values.variants.split(',')) for (const s of values.seconds.split(',').map(Number)) inputs.push([clipSeconds(clips, s, v), `${s} s ${v}`]);
}
for (const [input, name] of inputs) {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-cold-stages-'));
  try {
    const before = load();
    const r = await profile(input, dir);
    console.log(`\n${name}: wall ${r.wall.toFixed(2)} s, CPU ${r.cpu.toFixed(2)} s (process tree), load ${before} -> ${load()}`);
    console.log(`${'stage'.padEnd(64)} ${'at s'.padStart(7)} ${'wall s'.padStart(7)} ${'CPU s'.padStart(7)}`);
    for (const t of r.table) console.log(t);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
