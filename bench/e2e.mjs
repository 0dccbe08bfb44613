// The whole job: `dub run` (en-US -> es-ES) on real clips of 1, 8 and 30 minutes made from
// ../shared/media: the face of talking-head-480.mp4 looped under real English speech (voice-ref-a,
// voice-ref-b, jfk and the two-speaker call, one after the other with 0.6 s pauses, looped), with
// and without music-coffee.wav under it (-6 dB, about 14 dB under the speech). Prints, in one
// table: wall seconds, real-time factor, peak RSS of the whole process tree (dub run and every
// ffmpeg/espeak/pocketsphinx child, sampled every 100 ms from /proc), the separation decision
// the transcript records, and the media floor measured in the same run: ffmpeg decoding the
// clip's audio to WAV and encoding it to AAC muxed with the copied video. Then seconds per stage
// (from the "stage done" log lines), the quality stage's share of the generation (the
// generate-version job's time; its lines, Whisper's back-transcription above all, are measured
// from the mix on, beside the audio and video stages) and the 8 min / 1 min time ratio per variant.
//
// Usage (after `npm run build`): node bench/e2e.mjs [--minutes 1,8,30] [--variants clean,music]
//   [--lips] (adds with_lips runs of the clean variant) [--keep DIR] (reuse prepared clips there)
//   [--prepare-only] (write the clips into --keep and stop)
// Defaults: --minutes 1,8 --variants clean,music. The 30-minute clip takes long on 2 cores.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { clip as clipIn, clipsDir, ffmpeg, speechLoop as speechLoopIn } from './lib/clips.mjs';
import { treeRss } from './lib/rss.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const DUB = path.join(ROOT, 'packages', 'cli', 'bin', 'dub.js');

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '1,8' },
    variants: { type: 'string', default: 'clean,music' },
    lips: { type: 'boolean', default: false },
    keep: { type: 'string' },
    'prepare-only': { type: 'boolean', default: false },
  },
});
const minutes = values.minutes.split(',').map(Number);
if (minutes.some((m) => !(m > 0))) throw new Error(`--minutes must be positive numbers, got ${values.minutes}`);
const variants = values.variants.split(',');
for (const v of variants) if (!['clean', 'music'].includes(v)) throw new Error(`unknown variant ${v} (clean, music)`);
const clips = clipsDir('e2e', values.keep);
const f2 = (x) => (x === undefined || x === null ? '—' : Number(x).toFixed(2));
const load = () => os.loadavg()[0].toFixed(1);

const speechLoop = () => speechLoopIn(clips);
const clip = (m, variant) => clipIn(clips, m, variant);

/** The media floor: decode the audio to WAV, encode it to AAC muxed with the copied video. */
function floor(input, dir) {
  const t0 = performance.now();
  ffmpeg(['-i', input, '-vn', '-ac', '2', '-ar', '44100', path.join(dir, 'floor.wav')]);
  ffmpeg(['-i', input, '-i', path.join(dir, 'floor.wav'), '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', '-b:a', '128k', path.join(dir, 'floor.mp4')]);
  return (performance.now() - t0) / 1000;
}


async function dubRun(input, dir, mode) {
  const out = path.join(dir, 'out');
  const t0 = performance.now();
  // Run as users run it (the bin's shebang sets the allocator; see packages/cli/bin/dub.js).
  const child = spawn(DUB, ['run', '--input', input, '--from', 'en-US', '--to', 'es-ES', '--out', out, '--mode', mode, '--log-format', 'json'], {
    env: { ...process.env, DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(child.pid))), 100);
  const stages = {};
  // the generation (generate-version job): first and last log time, and its quality stage's lines (measured from the mix on, beside audio and video)
  const gen = { from: Infinity, to: -Infinity, linesSeconds: 0 };
  let tail = '';
  let buf = '';
  child.stderr.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      tail = (tail + line + '\n').slice(-4000);
      if (!line.startsWith('{')) continue;
      try {
        const j = JSON.parse(line);
        if (j.msg === 'stage done' && typeof j.seconds === 'number') stages[j.stage] = (stages[j.stage] ?? 0) + j.seconds;
        if (j.job_type === 'generate-version' && typeof j.time === 'number') [gen.from, gen.to] = [Math.min(gen.from, j.time), Math.max(gen.to, j.time)];
        if (j.msg === 'quality: lines measured' && typeof j.seconds === 'number') gen.linesSeconds += j.seconds;
      } catch {
        // not JSON
      }
    }
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  clearInterval(timer);
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`dub run exited with ${code}:\n${tail}`);
  const transcript = JSON.parse(await fsp.readFile(path.join(out, 'transcript.json'), 'utf8'));
  const report = JSON.parse(await fsp.readFile(path.join(out, 'es-ES', 'report.json'), 'utf8'));
  const quality = report.stages.find((x) => x.stage === 'quality')?.seconds;
  return { wall, peak, stages, separation: transcript.separation ?? {}, generation: { seconds: (gen.to - gen.from) / 1000, quality, linesSeconds: gen.linesSeconds, asr: report.engines?.asr?.label ?? report.engines?.asr?.id ?? 'none' } };
}

if (values['prepare-only']) {
  for (const variant of variants) for (const m of minutes) console.log(clip(m, variant));
  process.exit(0);
}

const runs = [];
const loadBefore = load();
for (const variant of variants) {
  for (const m of minutes) {
    for (const mode of variant === 'clean' && values.lips ? ['no_lips', 'with_lips'] : ['no_lips']) {
      const input = clip(m, variant);
      const dir = await fsp.mkdtemp(path.join(clips, `run-${m}-${variant}-${mode}-`));
      try {
        const floorSeconds = floor(input, dir);
        process.stderr.write(`e2e: ${m} min ${variant} ${mode} ...\n`);
        const r = await dubRun(input, dir, mode);
        runs.push({ m, variant, mode, floorSeconds, ...r });
        process.stderr.write(`e2e: ${m} min ${variant} ${mode}: ${f2(r.wall)} s, peak ${(r.peak / 2 ** 20).toFixed(0)} MiB\n`);
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    }
  }
}

console.log(`\n### e2e: dub run en-US -> es-ES, ${os.cpus().length} cores, load ${loadBefore} -> ${load()}\n`);
console.log('| clip | mode | wall s | real-time factor | peak RSS MiB (tree) | separation (model s) | media floor s | floor RTF | wall / floor |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of runs) {
  const sep = `${r.separation.engine ?? '?'} ${r.separation.mode ?? ''} (${f2(r.separation.model_seconds)})`;
  console.log(`| ${r.m} min ${r.variant} | ${r.mode} | ${f2(r.wall)} | ${f2(r.wall / (r.m * 60))} | ${(r.peak / 2 ** 20).toFixed(0)} | ${sep} | ${f2(r.floorSeconds)} | ${f2(r.floorSeconds / (r.m * 60))} | ${f2(r.wall / r.floorSeconds)}x |`);
}
const stageNames = [...new Set(runs.flatMap((r) => Object.keys(r.stages)))];
console.log(`\nseconds per stage:\n`);
console.log(`| stage | ${runs.map((r) => `${r.m} min ${r.variant} ${r.mode}`).join(' | ')} |`);
console.log(`|---|${runs.map(() => '---').join('|')}|`);
for (const s of stageNames) console.log(`| ${s} | ${runs.map((r) => f2(r.stages[s])).join(' | ')} |`);
console.log(`\nthe quality stage's share of the generation (generate-version job, first to last log line; back-transcription by the ASR named):\n`);
console.log('| clip | mode | back-transcription | generation s | quality stage s | share | lines measured s (from the mix on, beside audio and video) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of runs) console.log(`| ${r.m} min ${r.variant} | ${r.mode} | ${r.generation.asr} | ${f2(r.generation.seconds)} | ${f2(r.generation.quality)} | ${r.generation.quality !== undefined ? `${((100 * r.generation.quality) / r.generation.seconds).toFixed(1)} %` : '—'} | ${f2(r.generation.linesSeconds)} |`);
console.log('');
for (const variant of variants) {
  for (const mode of ['no_lips', 'with_lips']) {
    const one = runs.find((r) => r.m === 1 && r.variant === variant && r.mode === mode);
    const eight = runs.find((r) => r.m === 8 && r.variant === variant && r.mode === mode);
    if (one && eight) console.log(`time ratio 8 min / 1 min, ${variant} ${mode}: ${f2(eight.wall / one.wall)}`);
  }
}
if (!values.keep) await fsp.rm(clips, { recursive: true, force: true });
