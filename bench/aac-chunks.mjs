#!/usr/bin/env node
// The dubbed track's AAC encode, in one run on a 5-minute 48 kHz stereo float WAV (speech from
// ../shared/media/chinese-news.wav looped over pink noise, or the noise alone with a tone when the
// recording is absent; said in the output): whole `encodeAudio` to .m4a, `encodeAudioChunked`'s
// first encode (empty store: one encode split per chunk), and its re-encode after 3 seconds in the
// middle changed (the chunks touched, the rest reused). Wall seconds of each (median of --runs).
// Build first: `npm run build`. Options: --minutes M (default 5), --runs N (default 3).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { encodeAudio, encodeAudioChunked, runFfmpeg, WavReader } from '@dub/media';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' }, runs: { type: 'string', default: '3' } } });
const MINUTES = Number(values.minutes);
const RUNS = Number(values.runs);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const speech = path.resolve(root, '../shared/media/chinese-news.wav');
const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bench-aac-'));

const seconds = MINUTES * 60;
const input = path.join(dir, 'mix.wav');
const hasSpeech = fs.existsSync(speech);
const source = hasSpeech ? `speech (${path.basename(speech)}, looped) over pink noise` : 'pink noise and a 440 Hz tone (../shared/media/chinese-news.wav absent)';
await runFfmpeg(
  hasSpeech
    ? ['-stream_loop', '-1', '-i', speech, '-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:c=pink:a=0.02:r=48000`, '-filter_complex', '[0:a]aresample=48000,aformat=channel_layouts=stereo[s];[1:a]aformat=channel_layouts=stereo[n];[s][n]amix=inputs=2:duration=shortest:normalize=0', '-t', String(seconds), '-c:a', 'pcm_f32le', input]
    : ['-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:c=pink:a=0.05:r=48000`, '-f', 'lavfi', '-i', `sine=f=440:d=${seconds}:r=48000`, '-filter_complex', 'amix=inputs=2:normalize=0,aformat=channel_layouts=stereo', '-c:a', 'pcm_f32le', input],
);
// The edited mix: 3 s in the middle replaced by a tone (a re-spoken line).
const edited = path.join(dir, 'mix-edited.wav');
const mid = seconds / 2;
await runFfmpeg(['-i', input, '-f', 'lavfi', '-i', `sine=f=300:d=3:r=48000`, '-filter_complex', `[1:a]aformat=channel_layouts=stereo,adelay=${mid * 1000}|${mid * 1000}[t];[0:a]volume=enable='between(t,${mid},${mid + 3})':volume=0[m];[m][t]amix=inputs=2:duration=first:normalize=0`, '-c:a', 'pcm_f32le', edited]);
const r = await WavReader.open(input);
const info = `${(r.frames / r.sampleRate).toFixed(1)} s, ${r.sampleRate} Hz, ${r.channelCount} ch, ${r.sampleFormat}`;
await r.close();

function folderStore(d) {
  fs.mkdirSync(d, { recursive: true });
  return {
    get: async (h) => (fs.existsSync(path.join(d, h)) ? path.join(d, h) : undefined),
    put: async (h, f) => fsp.copyFile(f, path.join(d, h)),
  };
}
async function time(fn) {
  const t0 = performance.now();
  const v = await fn();
  return { s: (performance.now() - t0) / 1000, v };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = { whole: [], first: [], redub: [] };
let counts;
for (let i = 0; i < RUNS; i++) {
  rows.whole.push((await time(() => encodeAudio(input, path.join(dir, 'whole.m4a')))).s);
  const store = folderStore(path.join(dir, `store-${i}`));
  const first = await time(() => encodeAudioChunked(input, path.join(dir, 'first.m4a'), { store }));
  rows.first.push(first.s);
  const redub = await time(() => encodeAudioChunked(edited, path.join(dir, 'redub.m4a'), { store }));
  rows.redub.push(redub.s);
  counts = { first: first.v.chunks, redub: redub.v.chunks, encode: redub.v.encode };
}
console.log(`input: ${info}; ${source}; ${os.cpus().length} CPUs, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; median of ${RUNS}`);
console.log('| encode | seconds | chunks (total / encoded / reused) |');
console.log('|---|---|---|');
console.log(`| encodeAudio (whole) | ${median(rows.whole).toFixed(2)} | - |`);
console.log(`| encodeAudioChunked, first (empty store) | ${median(rows.first).toFixed(2)} | ${counts.first.total} / ${counts.first.encoded} / ${counts.first.reused} |`);
console.log(`| encodeAudioChunked, 3 s changed in the middle | ${median(rows.redub).toFixed(2)} | ${counts.redub.total} / ${counts.redub.encoded} / ${counts.redub.reused} (${counts.encode}) |`);
console.log(`re-encode / whole: ${((100 * median(rows.redub)) / median(rows.whole)).toFixed(1)}%`);
await fsp.rm(dir, { recursive: true, force: true });
