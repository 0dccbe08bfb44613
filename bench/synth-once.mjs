// Speaking each line once (issue #27): the same `dub run` (en-US -> es-ES, no_lips, a 1-minute
// clip of real English speech under the face of talking-head-480.mp4, bench/lib/clips.mjs) twice,
// each cold (its own data dir, nothing cached), through bench/dub-cpu.mjs (the process tree's CPU
// sampled from /proc every 100 ms):
//   before: DUB_SYNTH_PREDICT=off, every line spoken at speed 1, placed, then spoken again at the
//           speed its time asks for;
//   after:  each voice's first lines at speed 1, the others' lengths predicted
//           (packages/pipeline/src/generate-predict.ts), each spoken once unless it missed;
//           both with lengths converted to speeds as 1/speed (DUB_SPEED_RESPONSE=off);
//   response: as after, with Kokoro's measured response to its speed (the default).
// Prints per setting: wall and CPU seconds of the whole run, the synthesis CPU seconds (the tree's
// CPU from the `voices` stage done to the last `synthesis` stage done), Kokoro calls (its
// "kokoro: line synthesized" debug lines, warm-up included), and the fit from the report: lines,
// share in slot (overflow_ms 0), share placed without force, speed flags, speed_factor p50 / p90 /
// max, rate_ratio p50 / p90, lines whose natural length was predicted, second passes, and the
// time stretch left (|tempo - 1| p50 / p90 / max, from the per-line `synthesis`). Load average
// before and after each run.
//
// Usage (after `npm run build`): flock /tmp/bench.lock nice -n 5 node bench/synth-once.mjs
//   [--work DIR] (clips and runs; default a new temporary folder) [--settings before,after,response]
//   [--minutes 1] [--variant clean]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clip, clipsDir } from './lib/clips.mjs';
import { printMarkdownTable } from './lib/table.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { work: { type: 'string' }, settings: { type: 'string', default: 'before,after,response' }, minutes: { type: 'string', default: '1' }, variant: { type: 'string', default: 'clean' } } });
// before and after as measured at 31109aa (lengths to speeds as 1/speed); response: after, with
// Kokoro's measured length response (KOKORO_SPEED_RESPONSE, bench/kokoro-speed.mjs)
const SETTINGS = { before: { DUB_SYNTH_PREDICT: 'off', DUB_SPEED_RESPONSE: 'off' }, after: { DUB_SYNTH_PREDICT: 'on', DUB_SPEED_RESPONSE: 'off' }, response: { DUB_SYNTH_PREDICT: 'on', DUB_SPEED_RESPONSE: 'on' } };
const dir = clipsDir('synth-once', values.work);
const input = clip(dir, Number(values.minutes), values.variant);

const q = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
};
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const pct = (n, d) => (d ? `${Math.round((100 * n) / d)}%` : 'n/a');
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const rows = [];
for (const setting of values.settings.split(',')) {
  const out = path.join(dir, `run-${setting}-${Date.now()}`);
  const loadBefore = load();
  const r = spawnSync(process.execPath, [path.join(here, 'dub-cpu.mjs'), input, out], { env: { ...process.env, ...SETTINGS[setting] }, encoding: 'utf8' });
  if (r.status !== 0) {
    console.log(`${setting}: dub-cpu exited ${r.status}: ${(r.stdout + r.stderr).slice(-800)}`);
    continue;
  }
  const head = /exit (\d+) wall ([\d.]+) s, tree CPU ([\d.]+) s/.exec(r.stdout);
  if (!head || head[1] !== '0') {
    console.log(`${setting}: dub run failed: ${r.stdout.slice(0, 800)}`);
    continue;
  }
  const { samples, events } = JSON.parse(fs.readFileSync(path.join(out, 'samples.json'), 'utf8'));
  const cpuAt = (t) => {
    let c = 0;
    for (const s of samples) {
      if (s[0] <= t) c = s[2];
      else break;
    }
    return c;
  };
  const done = events.filter((e) => e.msg === 'stage done');
  const voices = done.find((e) => e.stage === 'voices');
  const lastSynth = done.filter((e) => e.stage === 'synthesis').at(-1);
  const log = fs.readFileSync(path.join(out, 'log.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
  const kokoro = log.filter((j) => j.msg === 'kokoro: line synthesized');
  const report = JSON.parse(fs.readFileSync(path.join(out, 'out', 'es-ES', 'report.json'), 'utf8'));
  const segs = report.segments;
  const syn = segs.map((s) => s.synthesis).filter(Boolean);
  const stretch = syn.map((s) => Math.abs(s.tempo - 1));
  const ratios = segs.map((s) => s.rate_ratio).filter((x) => typeof x === 'number');
  rows.push({
    setting,
    wall_s: Number(head[2]).toFixed(1),
    cpu_s: Number(head[3]).toFixed(1),
    synthesis_cpu_s: voices && lastSynth ? (cpuAt(lastSynth.t) - cpuAt(voices.t)).toFixed(1) : 'n/a',
    kokoro_calls: kokoro.length,
    lines: segs.length,
    in_slot: pct(segs.filter((s) => s.overflow_ms === 0).length, segs.length),
    unforced: pct(segs.filter((s) => ['fits', 'used_gap_after', 'borrowed'].includes(s.resolution)).length, segs.length),
    speed_flags: segs.filter((s) => s.flags.includes('speed')).length,
    speed_p50: f2(q(segs.map((s) => s.speed_factor), 0.5)),
    speed_p90: f2(q(segs.map((s) => s.speed_factor), 0.9)),
    speed_max: f2(Math.max(...segs.map((s) => s.speed_factor))),
    ratio_p50: f2(q(ratios, 0.5)),
    ratio_p90: f2(q(ratios, 0.9)),
    predicted: syn.filter((s) => s.natural === 'predicted').length,
    fit_passes: syn.reduce((a, s) => a + s.passes, 0),
    second_passes: syn.filter((s) => s.passes === 2).length,
    stretch_p50: f3(q(stretch, 0.5)),
    stretch_p90: f3(q(stretch, 0.9)),
    stretch_max: f3(stretch.length ? Math.max(...stretch) : NaN),
    load: `${loadBefore} -> ${load()}`,
  });
  console.log(JSON.stringify(rows.at(-1)));
}
printMarkdownTable(rows);
