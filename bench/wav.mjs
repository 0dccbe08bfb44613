// WAV read/write throughput: @dub/media's RIFF reader/writer against the wavefile package, same
// run, same data. 10 minutes of 16 kHz mono (the speech-model format), float32 and pcm16.
// Run after `npm run build` (or `npx tsc -b packages/media`): node bench/wav.mjs
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import wavefile from 'wavefile';
import { readWav, WavReader, WavWriter, writeWav } from '@dub/media';

const { WaveFile } = wavefile;
const RATE = 16000;
const SECONDS = Number(process.env.BENCH_WAV_SECONDS ?? 600);
const FRAMES = RATE * SECONDS;
const WINDOW = RATE; // 1 s windows for the streaming variants
const OURS_RUNS = 3;

const dir = await mkdtemp(path.join(os.tmpdir(), 'dub-bench-wav-'));
const signal = new Float32Array(FRAMES);
for (let i = 0; i < FRAMES; i++) signal[i] = 0.3 * Math.sin((2 * Math.PI * 220 * i) / RATE) + 0.05 * Math.sin(i * 0.37);

async function time(fn, runs) {
  let best = Infinity;
  let result;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    result = await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return { ms: best, result };
}

const rows = [];
function row(format, op, bytes, ours, peer, note = '') {
  const mbps = (ms) => bytes / 1e6 / (ms / 1000);
  rows.push({ format, op, ours: mbps(ours.ms), peer: peer ? mbps(peer.ms) : undefined, note });
}

try {
  for (const format of ['float32', 'pcm16']) {
    const oursFile = path.join(dir, `ours-${format}.wav`);
    const peerFile = path.join(dir, `peer-${format}.wav`);
    const streamFile = path.join(dir, `stream-${format}.wav`);

    // --- write ---
    const oursWrite = await time(() => writeWav(oursFile, { sampleRate: RATE, channels: [signal] }, { format }), OURS_RUNS);
    const oursStreamWrite = await time(async () => {
      const w = await WavWriter.create(streamFile, { sampleRate: RATE, channels: 1, format });
      for (let s = 0; s < FRAMES; s += WINDOW) await w.write([signal.subarray(s, Math.min(FRAMES, s + WINDOW))]);
      await w.close();
    }, OURS_RUNS);
    // wavefile takes integer samples for 16-bit: convert before timing (in its favour).
    const peerSamples = format === 'float32' ? signal : Int16Array.from(signal, (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32768))));
    const peerWrite = await time(async () => {
      const w = new WaveFile();
      w.fromScratch(1, RATE, format === 'float32' ? '32f' : '16', peerSamples);
      await writeFile(peerFile, w.toBuffer());
    }, 1);
    const bytes = (await stat(oursFile)).size;
    row(format, 'write whole file', bytes, oursWrite, peerWrite, format === 'pcm16' ? 'wavefile given pre-converted int16' : '');
    row(format, 'write streaming (1 s windows)', bytes, oursStreamWrite, peerWrite, 'peer: whole file');

    // --- read ---
    const oursRead = await time(() => readWav(oursFile), OURS_RUNS);
    const oursStreamRead = await time(async () => {
      const r = await WavReader.open(oursFile);
      let n = 0;
      for await (const w of r.windows(WINDOW)) n += w.channels[0].length;
      await r.close();
      return n;
    }, OURS_RUNS);
    const peerRead = await time(async () => {
      const w = new WaveFile(await readFile(peerFile));
      return w.getSamples(false, Float32Array);
    }, 1);
    row(format, 'read whole file', bytes, oursRead, peerRead, format === 'pcm16' ? 'wavefile returns raw integers (no scaling)' : '');
    row(format, 'read streaming (1 s windows)', bytes, oursStreamRead, peerRead, 'peer: whole file');

    // Sanity: both readers agree on the data.
    const ours = oursRead.result.channels[0];
    const peer = peerRead.result;
    if (ours.length !== FRAMES || peer.length !== FRAMES || oursStreamRead.result !== FRAMES) throw new Error('frame count mismatch');
    const scale = format === 'float32' ? 1 : 1 / 32768;
    for (let i = 0; i < FRAMES; i += 997) {
      if (Math.abs(ours[i] - peer[i] * scale) > 1e-6) throw new Error(`sample ${i} differs: ${ours[i]} vs ${peer[i] * scale}`);
    }
    if (!(await readFile(oursFile)).equals(await readFile(streamFile))) throw new Error('streaming writer output differs from writeWav');
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const f = (x) => (x === undefined ? '-' : x.toFixed(1));
console.log(`\nWAV I/O, ${SECONDS / 60} min of ${RATE} Hz mono, node ${process.version}, ${os.cpus().length} cpus; ours best of ${OURS_RUNS}, wavefile 1 run\n`);
console.log('| format | operation | @dub/media MB/s | wavefile MB/s | ours/wavefile | note |');
console.log('|---|---|---:|---:|---:|---|');
for (const r of rows) console.log(`| ${r.format} | ${r.op} | ${f(r.ours)} | ${f(r.peer)} | ${r.peer ? (r.ours / r.peer).toFixed(1) + 'x' : '-'} | ${r.note} |`);
