// The whole job: `dub run` (en-US -> es-ES) on real clips of 1, 8 and 30 minutes made from
// ../shared/media: the face of talking-head-480.mp4 looped under real English speech (voice-ref-a,
// voice-ref-b, jfk and the two-speaker call, one after the other with 0.6 s pauses, looped), with
// and without music-coffee.wav under it (-6 dB, about 14 dB under the speech). Prints, in one
// table: wall seconds, real-time factor, CPU seconds and peak RSS of the whole process tree (dub
// run and every ffmpeg/espeak/pocketsphinx child, sampled every 100 ms from /proc), the
// separation decision the transcript records, and the media floor measured in the same run:
// ffmpeg decoding the clip's audio to WAV and encoding it to AAC muxed with the copied video.
// Then seconds per stage (from the "stage done" log lines), the quality stage's share of the
// generation (the generate-version job's time; its lines, Whisper's back-transcription above all,
// are measured from the mix on, beside the audio and video stages) and the 8 min / 1 min time
// ratio per variant.
//
// Short clips (cold start): --seconds 8,30 runs clips of that many seconds instead of minutes,
// each a cold `dub run` (a new process and data dir: models load, nothing cached), --repeat N
// times; the variant `talking-head` is talking-head-480.mp4 cut with its own audio (a real person
// on camera, the recording's background under the voice). --serve cold,warm also starts `dub
// serve` (the embedded queue and worker) once per kind, as a user does (warm: `dub serve
// --warmup`, and the uploads wait for the thread's "warmup: models loaded"), and times each clip
// from the upload (POST /v1/assets/upload with auto_generate no_lips) to the poll (every 50 ms)
// that sees the version Completed, --repeat times; the first job is the server's first.
//
// Usage (after `npm run build`): node bench/e2e.mjs [--minutes 1,8,30 | --seconds 8,30]
//   [--variants clean,music,talking-head] [--repeat N] [--serve cold,warm [--serve-only]]
//   [--lips] (adds with_lips runs of the clean variant) [--keep DIR] (reuse prepared clips there)
//   [--prepare-only] (write the clips into --keep and stop)
//   [--before-env K=V[,K=V]] (each `dub run` twice, the first with these variables set: a
//   before/after table of peak memory, CPU s and wall, and whether the outputs are the same; e.g.
//   DUB_ONNX_GRAPH_OUTPUTS=all, the models as shipped, before Whisper's encoder lost its unread outputs)
// Defaults: --minutes 1,8 --variants clean,music. The 30-minute clip takes long on 2 cores.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import net from 'node:net';
import { clipSeconds, clipsDir, ffmpeg } from './lib/clips.mjs';
import { treeCpuSeconds, treeRss } from './lib/rss.mjs';
import { cpuWords } from './lib/cpu.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const DUB = path.join(ROOT, 'packages', 'cli', 'bin', 'dub.js');

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    seconds: { type: 'string' },
    variants: { type: 'string', default: 'clean,music' },
    repeat: { type: 'string', default: '1' },
    serve: { type: 'string' },
    'serve-only': { type: 'boolean', default: false },
    lips: { type: 'boolean', default: false },
    keep: { type: 'string' },
    'prepare-only': { type: 'boolean', default: false },
    'before-env': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  // the usage is this file's opening comment
  const head = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  console.log(head.slice(0, head.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
if (values.minutes && values.seconds) throw new Error('--minutes or --seconds, not both');
const short = values.seconds !== undefined;
const lengths = (values.seconds ?? values.minutes ?? '1,8').split(',').map(Number);
if (lengths.some((m) => !(m > 0))) throw new Error(`--${short ? 'seconds' : 'minutes'} must be positive numbers, got ${values.seconds ?? values.minutes}`);
/** Seconds of each clip. */
const durations = lengths.map((x) => (short ? x : x * 60));
const variants = values.variants.split(',');
for (const v of variants) if (!['clean', 'music', 'talking-head'].includes(v)) throw new Error(`unknown variant ${v} (clean, music, talking-head)`);
const repeat = Number(values.repeat);
if (!(Number.isInteger(repeat) && repeat >= 1)) throw new Error(`--repeat must be a whole number >= 1, got ${values.repeat}`);
/** --before-env: the variables of the "before" runs. */
const beforeEnv = values['before-env'] ? Object.fromEntries(values['before-env'].split(',').map((kv) => { const i = kv.indexOf('='); if (i <= 0) throw new Error(`--before-env takes K=V pairs, got ${kv}`); return [kv.slice(0, i), kv.slice(i + 1)]; })) : undefined;
const clips = clipsDir('e2e', values.keep);
const f2 = (x) => (x === undefined || x === null ? '—' : Number(x).toFixed(2));
const load = () => os.loadavg()[0].toFixed(1);
/** A clip's name in the tables: `8 s clean`, `1 min music`. */
const label = (d, variant) => `${short ? `${d} s` : `${d / 60} min`} ${variant}`;

const clip = (d, variant) => (short ? clipSeconds(clips, d, variant) : clipSeconds(clips, d, variant, `clip-${d / 60}min-${variant}.mp4`));

/** The media floor: decode the audio to WAV, encode it to AAC muxed with the copied video. */
function floor(input, dir) {
  const t0 = performance.now();
  ffmpeg(['-i', input, '-vn', '-ac', '2', '-ar', '44100', path.join(dir, 'floor.wav')]);
  ffmpeg(['-i', input, '-i', path.join(dir, 'floor.wav'), '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', '-b:a', '128k', path.join(dir, 'floor.mp4')]);
  return (performance.now() - t0) / 1000;
}


/** sha256 (16 hex) of a file's bytes, or of the PCM ffmpeg decodes from it (`decoded`: containers carry their own time stamps). */
function digest(file, decoded) {
  const bytes = decoded ? spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-'], { maxBuffer: 2 ** 31 }).stdout : fs.readFileSync(file);
  return crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

async function dubRun(input, dir, mode, extraEnv = {}) {
  const out = path.join(dir, 'out');
  const t0 = performance.now();
  // Run as users run it (the bin's shebang sets the allocator; see packages/cli/bin/dub.js).
  const child = spawn(DUB, ['run', '--input', input, '--from', 'en-US', '--to', 'es-ES', '--out', out, '--mode', mode, '--log-format', 'json'], {
    env: { ...process.env, DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: dir, ...extraEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let peak = 0;
  let cpu = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRss(child.pid));
    cpu = Math.max(cpu, treeCpuSeconds(child.pid));
  }, 100);
  const stages = {};
  // the generation (generate-version job): first and last log time, and its quality stage's lines (measured from the mix on, beside audio and video)
  const gen = { from: Infinity, to: -Infinity, linesSeconds: 0 };
  const log = readJsonLog(child.stderr, (j) => {
    if (j.msg === 'stage done' && typeof j.seconds === 'number') stages[j.stage] = (stages[j.stage] ?? 0) + j.seconds;
    if (j.job_type === 'generate-version' && typeof j.time === 'number') [gen.from, gen.to] = [Math.min(gen.from, j.time), Math.max(gen.to, j.time)];
    if (j.msg === 'quality: lines measured' && typeof j.seconds === 'number') gen.linesSeconds += j.seconds;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  clearInterval(timer);
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`dub run exited with ${code}:\n${log.tail()}`);
  const transcript = JSON.parse(await fsp.readFile(path.join(out, 'transcript.json'), 'utf8'));
  const report = JSON.parse(await fsp.readFile(path.join(out, 'es-ES', 'report.json'), 'utf8'));
  const quality = report.stages.find((x) => x.stage === 'quality')?.seconds;
  const outputs = { transcript: digest(path.join(out, 'transcript.json')), audio: digest(path.join(out, 'es-ES', 'dubbed.m4a'), true) };
  return { wall, peak, cpu, load: load(), stages, outputs, separation: transcript.separation ?? {}, generation: { seconds: (gen.to - gen.from) / 1000, quality, linesSeconds: gen.linesSeconds, asr: report.engines?.asr?.label ?? report.engines?.asr?.id ?? 'none' } };
}

if (values['prepare-only']) {
  for (const variant of variants) for (const d of durations) console.log(clip(d, variant));
  process.exit(0);
}

const runs = [];
const failures = [];
const loadBefore = load();
for (const variant of values['serve-only'] ? [] : variants) {
  for (const d of durations) {
    for (const mode of variant === 'clean' && values.lips ? ['no_lips', 'with_lips'] : ['no_lips']) {
      const input = clip(d, variant);
      for (let k = 0; k < repeat; k++) for (const side of beforeEnv ? ['before', 'after'] : [undefined]) {
        const dir = await fsp.mkdtemp(path.join(clips, `run-${d}-${variant}-${mode}-`));
        try {
          const floorSeconds = floor(input, dir);
          const loadAtStart = load();
          const sideMode = side ? `${mode} (${side})` : mode;
          process.stderr.write(`e2e: ${label(d, variant)} ${sideMode}${repeat > 1 ? ` (${k + 1}/${repeat})` : ''} ...\n`);
          let r;
          try {
            r = await dubRun(input, dir, mode, side === 'before' ? beforeEnv : {});
          } catch (e) {
            // a failed run is reported and left out of the tables; the others still run
            process.stderr.write(`e2e: ${label(d, variant)} ${mode}: FAILED ${e.message.split('\n')[0]}\n${e.message.slice(-1500)}\n`);
            failures.push(`${label(d, variant)} ${mode}: ${e.message.split('\n')[0]}`);
            continue;
          }
          runs.push({ d, m: d / 60, variant, mode: sideMode, plainMode: mode, side, floorSeconds, loadAtStart, ...r });
          process.stderr.write(`e2e: ${label(d, variant)} ${sideMode}: ${f2(r.wall)} s, ${f2(r.cpu)} CPU s, peak ${(r.peak / 2 ** 20).toFixed(0)} MiB, load ${loadAtStart} -> ${r.load}\n`);
        } finally {
          await fsp.rm(dir, { recursive: true, force: true });
        }
      }
    }
  }
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `dub serve` as a user starts it (the bin, the embedded queue and worker, JSON logs), on a free
 * loopback port, in a fresh data dir; resolves once GET /v1/voices answers.
 */
async function startServe(dir, warm) {
  const port = await freePort();
  const key = 'bench-e2e-key';
  const child = spawn(DUB, ['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data'), ...(warm ? ['--warmup'] : [])], {
    env: { ...process.env, DUB_API_KEYS: `${key}:bench`, DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const jobs = new Map();
  let warmed = false;
  const log = readJsonLog(child.stderr, (j) => {
    if (j.msg === 'warmup: models loaded') warmed = true;
    if (j.msg === 'stage done' && typeof j.seconds === 'number' && j.asset_id) {
      const stages = jobs.get(j.asset_id) ?? {};
      stages[j.stage] = (stages[j.stage] ?? 0) + j.seconds;
      jobs.set(j.asset_id, stages);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${key}` };
  const t0 = performance.now();
  for (;;) {
    const up = await fetch(`${base}/v1/voices`, { headers }).then((r) => r.ok, () => false);
    if (up && (!warm || warmed)) break;
    if (child.exitCode !== null) throw new Error(`dub serve exited with ${child.exitCode}:\n${log.tail()}`);
    if (performance.now() - t0 > 600_000) throw new Error(`dub serve did not answer${warm ? ' warmed up' : ''} in 600 s:\n${log.tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const startSeconds = (performance.now() - t0) / 1000;
  return {
    pid: child.pid,
    startSeconds,
    stagesOf: (assetId) => jobs.get(assetId) ?? {},
    async call(method, url, body) {
      const r = await fetch(`${base}${url}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${url}: HTTP ${r.status} ${text.slice(0, 500)}`);
      return JSON.parse(text);
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Upload `input` with auto_generate no_lips and poll (50 ms) until its es-ES version is Completed. */
async function uploadToCompleted(server, input) {
  const form = new FormData();
  form.set('request', JSON.stringify({ name: path.basename(input), locale: 'en-US', languages: [{ locale: 'es-ES' }], auto_generate: 'no_lips' }));
  const cpu0 = treeCpuSeconds(server.pid);
  const t0 = performance.now();
  form.set('video', new Blob([await fsp.readFile(input)], { type: 'video/mp4' }), path.basename(input));
  const created = await server.call('POST', '/v1/assets/upload', form);
  const versionId = created.languages[0].versions[0].version_id;
  for (;;) {
    const v = await server.call('GET', `/v1/versions/${versionId}`);
    if (v.status === 'Completed') break;
    if (v.status === 'Failed') throw new Error(`version ${versionId} failed: ${JSON.stringify(v.error)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const wall = (performance.now() - t0) / 1000;
  return { wall, cpu: treeCpuSeconds(server.pid) - cpu0, assetId: created.asset_id };
}

const served = [];
const serveStarts = [];
for (const kind of values.serve ? values.serve.split(',') : []) {
  if (!['cold', 'warm'].includes(kind)) throw new Error(`--serve takes cold and/or warm, got ${kind}`);
  const dir = await fsp.mkdtemp(path.join(clips, 'serve-'));
  const loadAtStart = load();
  const server = await startServe(dir, kind === 'warm');
  serveStarts.push({ kind, seconds: server.startSeconds, load: loadAtStart });
  process.stderr.write(`e2e: dub serve (${kind}) answered${kind === 'warm' ? ', warmed up,' : ''} ${f2(server.startSeconds)} s after its start\n`);
  try {
    for (let k = 0; k < repeat; k++) {
      for (const variant of variants) {
        for (const d of durations) {
          const l0 = load();
          const first = !served.some((x) => x.kind === kind);
          let r;
          try {
            r = await uploadToCompleted(server, clip(d, variant));
          } catch (e) {
            // a failed job is a row of the table (its error), not the end of the bench
            served.push({ kind, d, variant, k, first, loadAtStart: l0, load: load(), failed: e.message.split('\n')[0], stages: {} });
            process.stderr.write(`e2e: serve (${kind}) ${label(d, variant)} (${k + 1}/${repeat}): ${e.message}\n`);
            continue;
          }
          served.push({ kind, d, variant, k, first, loadAtStart: l0, load: load(), ...r, stages: server.stagesOf(r.assetId) });
          process.stderr.write(`e2e: serve (${kind}) ${label(d, variant)} (${k + 1}/${repeat}): upload -> Completed ${f2(r.wall)} s, ${f2(r.cpu)} CPU s, load ${l0} -> ${load()}\n`);
        }
      }
    }
  } finally {
    await server.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

console.log(`\n### e2e: dub run en-US -> es-ES, ${cpuWords()}, load ${loadBefore} -> ${load()}\n`);
console.log('| clip | mode | wall s | real-time factor | CPU s (tree) | peak RSS MiB (tree) | load (1 min) | separation (model s) | media floor s | floor RTF | wall / floor |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of runs) {
  const sep = `${r.separation.engine ?? '?'} ${r.separation.mode ?? ''} (${f2(r.separation.model_seconds)})`;
  console.log(`| ${label(r.d, r.variant)} | ${r.mode} | ${f2(r.wall)} | ${f2(r.wall / r.d)} | ${f2(r.cpu)} | ${(r.peak / 2 ** 20).toFixed(0)} | ${r.loadAtStart} -> ${r.load} | ${sep} | ${f2(r.floorSeconds)} | ${f2(r.floorSeconds / r.d)} | ${f2(r.wall / r.floorSeconds)}x |`);
}
if (repeat > 1) {
  console.log(`\nmedian of ${repeat} cold runs:\n`);
  console.log('| clip | mode | wall s | CPU s (tree) | separation |');
  console.log('|---|---|---|---|---|');
  const median = (xs) => xs.slice().sort((a, b) => a - b)[(xs.length - 1) >> 1];
  for (const variant of variants) {
    for (const d of durations) {
      for (const mode of ['no_lips', 'with_lips']) {
        const rs = runs.filter((r) => r.d === d && r.variant === variant && r.mode === mode);
        if (rs.length) console.log(`| ${label(d, variant)} | ${mode} | ${f2(median(rs.map((r) => r.wall)))} | ${f2(median(rs.map((r) => r.cpu)))} | ${rs[0].separation.engine ?? '?'} ${rs[0].separation.mode ?? ''} |`);
      }
    }
  }
}
const stageTable = (title, rows, name) => {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.stages)))];
  if (!rows.length) return;
  console.log(`\n${title}:\n`);
  console.log(`| stage | ${rows.map(name).join(' | ')} |`);
  console.log(`|---|${rows.map(() => '---').join('|')}|`);
  for (const s of names) console.log(`| ${s} | ${rows.map((r) => f2(r.stages[s])).join(' | ')} |`);
};
stageTable('seconds per stage ("stage done" log lines; stages that overlap each count their own time)', runs, (r) => `${label(r.d, r.variant)} ${r.mode}`);
if (served.length) {
  console.log(`\n### e2e --serve: upload -> Completed through a running \`dub serve\` (auto_generate no_lips, en-US -> es-ES); ${serveStarts.map((x) => `${x.kind}: answered${x.kind === 'warm' ? ' warmed up' : ''} ${f2(x.seconds)} s after its start (load ${x.load})`).join('; ')}\n`);
  console.log('| server | clip | job | upload -> Completed s | CPU s (server tree) | load (1 min) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of served) console.log(`| ${r.kind} | ${label(r.d, r.variant)} | ${r.first ? `${r.k + 1} (the server's first job)` : r.k + 1} | ${r.failed ? `failed: ${r.failed}` : f2(r.wall)} | ${f2(r.cpu)} | ${r.loadAtStart} -> ${r.load} |`);
  stageTable('seconds per stage in the server ("stage done" log lines)', served, (r) => `${r.kind} ${label(r.d, r.variant)} (${r.k + 1})`);
}
console.log(`\nthe quality stage's share of the generation (generate-version job, first to last log line; back-transcription by the ASR named):\n`);
console.log('| clip | mode | back-transcription | generation s | quality stage s | share | lines measured s (from the mix on, beside audio and video) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of runs) console.log(`| ${label(r.d, r.variant)} | ${r.mode} | ${r.generation.asr} | ${f2(r.generation.seconds)} | ${f2(r.generation.quality)} | ${r.generation.quality !== undefined ? `${((100 * r.generation.quality) / r.generation.seconds).toFixed(1)} %` : '—'} | ${f2(r.generation.linesSeconds)} |`);
console.log('');
for (const variant of variants) {
  for (const mode of ['no_lips', 'with_lips']) {
    const one = runs.find((r) => r.m === 1 && r.variant === variant && r.plainMode === mode && r.side !== 'before');
    const eight = runs.find((r) => r.m === 8 && r.variant === variant && r.plainMode === mode && r.side !== 'before');
    if (one && eight) console.log(`time ratio 8 min / 1 min, ${variant} ${mode}: ${f2(eight.wall / one.wall)}`);
  }
}
if (beforeEnv) {
  console.log(`\nbefore (${Object.entries(beforeEnv).map(([k, v]) => `${k}=${v}`).join(' ')}) / after (the environment as it is), each clip's two runs one after the other; peak: sum of Pss over the tree, 100 ms samples:\n`);
  console.log('| clip | mode | peak MiB before | peak MiB after | change | CPU s before | CPU s after | wall s before | wall s after | load before, after | same transcript | same dubbed audio (decoded) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const a of runs.filter((r) => r.side === 'after')) {
    const b = runs.find((r) => r.side === 'before' && r.d === a.d && r.variant === a.variant && r.plainMode === a.plainMode);
    if (!b) continue;
    const mib = (x) => (x / 2 ** 20).toFixed(0);
    console.log(`| ${label(a.d, a.variant)} | ${a.plainMode} | ${mib(b.peak)} | ${mib(a.peak)} | ${(((a.peak - b.peak) / b.peak) * 100).toFixed(1)} % | ${f2(b.cpu)} | ${f2(a.cpu)} | ${f2(b.wall)} | ${f2(a.wall)} | ${b.loadAtStart} -> ${b.load}, ${a.loadAtStart} -> ${a.load} | ${a.outputs.transcript === b.outputs.transcript ? 'yes' : 'no'} | ${a.outputs.audio === b.outputs.audio ? 'yes' : 'no'} |`);
  }
}
if (failures.length) console.log(`\nfailed runs (not in the tables):\n${failures.map((f) => `- ${f}`).join('\n')}`);
if (!values.keep) await fsp.rm(clips, { recursive: true, force: true });

/** The JSON log lines of a child's stream, each parsed and given to `onRecord`; `tail()`: its last 4000 characters, for errors. */
function readJsonLog(stream, onRecord) {
  let tail = '';
  let buf = '';
  stream.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      tail = (tail + line + '\n').slice(-4000);
      if (!line.startsWith('{')) continue;
      let j;
      try {
        j = JSON.parse(line);
      } catch {
        continue; // not JSON
      }
      onRecord(j);
    }
  });
  return { tail: () => tail };
}
