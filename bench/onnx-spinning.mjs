// onnxruntime's thread pools spinning or parked (DUB_ONNX_SPINNING, @dub/onnx): the engines a dub
// runs by default, each in a fresh process per setting, alternated --repeat times: Whisper base
// q8 transcribing the two-speaker call (30 s of real English speech, en-US; jfk.wav first, to
// load the models), then Kokoro-82M int8 speaking four Spanish lines at speed 1 and again at 1.15 (as a dub speaks a
// line, then fits it). Prints wall seconds and CPU seconds (user + system of the process; its
// espeak-ng children are not counted) of each engine's part, per setting.
//
// Usage (after `npm run build`): node bench/onnx-spinning.mjs [--repeat 2] [--settings 1,0]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const MEDIA = path.resolve(here, '..', '..', 'shared', 'media');
const FILES = ['two-speakers-call.wav'];
const WARM = 'jfk.wav';
const LINES = [
  'Buenos días a todos, gracias por venir hoy.',
  'Y así, mis compatriotas, no pregunten qué puede hacer su país por ustedes.',
  'Pregunten qué pueden hacer ustedes por su país.',
  'Hoy vamos a hablar de cómo funciona el doblaje automático de vídeos.',
];

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '2' }, settings: { type: 'string', default: '1,0' }, child: { type: 'boolean', default: false } } });

if (values.child) {
  const { SessionCache } = await import('@dub/onnx');
  const { transcribe } = await import('@dub/asr');
  const { createKokoroEngine } = await import('@dub/voice');
  const { silentLogger } = await import('@dub/core');
  const sessions = new SessionCache();
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  const part = async (fn) => { const c0 = cpu(); const t0 = performance.now(); await fn(); return { wall: (performance.now() - t0) / 1000, cpu: cpu() - c0 }; };
  const out = {};
  // models loaded first, outside the timed parts
  await transcribe(path.join(MEDIA, WARM), { locale: 'en-US', sessions, models: {} });
  const kokoro = createKokoroEngine({ sessions });
  const voice = { model: 'ef_dora' };
  const ctx = { logger: silentLogger };
  await kokoro.synthesize({ text: 'Hola.', locale: 'es-ES', speed: 1, voice }, ctx);
  out.whisper = await part(async () => { for (const f of FILES) await transcribe(path.join(MEDIA, f), { locale: 'en-US', sessions, models: {} }); });
  out.kokoro = await part(async () => { for (const speed of [1, 1.15]) for (const text of LINES) await kokoro.synthesize({ text, locale: 'es-ES', speed, voice }, ctx); });
  await kokoro.dispose();
  await sessions.disposeAll();
  console.log(JSON.stringify(out));
  process.exit(0);
}

const missing = [...FILES, WARM].filter((f) => !fs.existsSync(path.join(MEDIA, f)));
if (missing.length) {
  console.log(`bench onnx-spinning skipped: ${MEDIA} lacks ${missing.join(', ')}`);
  process.exit(0);
}
const settings = values.settings.split(',');
const rows = [];
for (let k = 0; k < Number(values.repeat); k++) {
  for (const s of settings) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], { env: { ...process.env, DUB_ONNX_SPINNING: s }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`child failed (DUB_ONNX_SPINNING=${s}):\n${r.stderr.slice(-2000)}`);
    const j = JSON.parse(r.stdout.trim().split('\n').pop());
    rows.push({ s, k, ...j });
    process.stderr.write(`DUB_ONNX_SPINNING=${s} (${k + 1}): whisper ${j.whisper.wall.toFixed(2)} s wall ${j.whisper.cpu.toFixed(2)} CPU s, kokoro ${j.kokoro.wall.toFixed(2)} s wall ${j.kokoro.cpu.toFixed(2)} CPU s\n`);
  }
}
const f2 = (x) => x.toFixed(2);
console.log('\n| DUB_ONNX_SPINNING | run | Whisper wall s | Whisper CPU s | Kokoro wall s | Kokoro CPU s |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.s} | ${r.k + 1} | ${f2(r.whisper.wall)} | ${f2(r.whisper.cpu)} | ${f2(r.kokoro.wall)} | ${f2(r.kokoro.cpu)} |`);
