// Loudness normalisation of a mix: normalizeLoudness (BS.1770 measured in JavaScript, one gain,
// the finite-memory lookahead limiter, written by WavWriter) against normalizeLoudnessFfmpeg (the
// previous path: ffmpeg ebur128 to measure, then volume + alimiter in ffmpeg), same premix, same
// run. The premix is 5 minutes of 48 kHz stereo float32, as the mixes write it: real English
// speech (bench/lib/clips.mjs speechLoop) looped over music-coffee.wav looped at -6 dB; when
// ../shared/media lacks them, generated pink noise with 1 kHz tone bursts (said in the output).
//
// Printed: seconds of each (best of --runs), the ratio, and ffmpeg's integrated loudness and true
// peak of both outputs. Then the re-dub case: the premix louder by 2 dB over 3 s in the middle,
// normalised again (the new path with previousGainDb, the old one as it is): how many frames of
// the output differ from the first output, and over which span. (The old path's output changes
// everywhere when its gain changes; its measurement is read to 0.1 LU, so a small edit may leave it.)
//
// Usage (after `npm run build`): node bench/mix.mjs [--minutes 5] [--runs 2] [--keep DIR]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { measureLoudness, normalizeLoudness, normalizeLoudnessFfmpeg, STREAMING_LOUDNESS } from '@dub/mix';
import { readWav, writeWav } from '@dub/media';
import { ffmpeg, MEDIA, speechLoop } from './lib/clips.mjs';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' }, runs: { type: 'string', default: '2' }, keep: { type: 'string' } } });
const seconds = Number(values.minutes) * 60;
const runs = Number(values.runs);
const SR = 48000;
const dir = values.keep ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-mix-')));
await fsp.mkdir(dir, { recursive: true });

const NEEDS = ['voice-ref-a.mp3', 'voice-ref-b.mp3', 'jfk.wav', 'two-speakers-call.wav', 'music-coffee.wav'];
const missing = NEEDS.filter((f) => !fs.existsSync(path.join(MEDIA, f)));
const premix = path.join(dir, 'premix.wav');
let source;
if (missing.length === 0) {
  source = 'real English speech (voice-ref-a/b, jfk, two-speakers-call) looped over music-coffee.wav looped at -6 dB';
  const speech = speechLoop(dir);
  ffmpeg(['-stream_loop', '-1', '-i', speech, '-stream_loop', '-1', '-i', path.join(MEDIA, 'music-coffee.wav'), '-filter_complex', `[0:a]aresample=${SR},aformat=channel_layouts=stereo[s];[1:a]aresample=${SR},aformat=channel_layouts=stereo,volume=0.5[m];[s][m]amix=inputs=2:duration=first:normalize=0[a]`, '-map', '[a]', '-t', String(seconds), '-ar', String(SR), '-c:a', 'pcm_f32le', premix]);
} else {
  source = `generated pink noise with 1 kHz tone bursts (../shared/media lacks ${missing.join(', ')})`;
  ffmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:c=pink:a=0.05:r=${SR}`, '-f', 'lavfi', '-i', `sine=f=1000:d=${seconds}:r=${SR},volume=enable='gte(mod(t\\,4)\\,1)':volume=0.1`, '-filter_complex', '[0:a][1:a]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo[a]', '-map', '[a]', '-c:a', 'pcm_f32le', premix]);
}
const frames = (await readWav(premix)).channels[0].length;
const opts = { target: STREAMING_LOUDNESS, sampleRate: SR, channels: 2, frames };

async function best(fn) {
  let s = Infinity;
  let result;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    result = await fn();
    s = Math.min(s, (performance.now() - t0) / 1000);
  }
  return { seconds: s, result };
}

const outJs = path.join(dir, 'out-js.wav');
const outFf = path.join(dir, 'out-ffmpeg.wav');
const js = await best(() => normalizeLoudness(premix, outJs, opts));
const ff = await best(() => normalizeLoudnessFfmpeg(premix, outFf, opts));
const mJs = await measureLoudness(outJs);
const mFf = await measureLoudness(outFf);

// the re-dub case: 3 s in the middle 2 dB louder
const x = await readWav(premix);
const [a, b] = [Math.round((seconds / 2) * SR), Math.round((seconds / 2 + 3) * SR)];
for (const c of x.channels) for (let i = a; i < b; i++) c[i] *= 10 ** (2 / 20);
const edited = path.join(dir, 'premix-edited.wav');
await writeWav(edited, x, { format: 'float32' });
const reJs = await normalizeLoudness(edited, path.join(dir, 'out-js-edited.wav'), { ...opts, previousGainDb: js.result.gainDb });
const reFf = await normalizeLoudnessFfmpeg(edited, path.join(dir, 'out-ffmpeg-edited.wav'), opts);
async function diff(p, q) {
  const [u, v] = [await readWav(p), await readWav(q)];
  let count = 0;
  let first = -1;
  let last = -1;
  for (let i = 0; i < u.channels[0].length; i++) {
    if (u.channels.some((c, k) => c[i] !== v.channels[k][i])) {
      count++;
      if (first < 0) first = i;
      last = i;
    }
  }
  return count === 0 ? 'none differ' : `${count} frames differ, from ${(first / SR).toFixed(3)} s to ${(last / SR).toFixed(3)} s`;
}
const dJs = await diff(outJs, path.join(dir, 'out-js-edited.wav'));
const dFf = await diff(outFf, path.join(dir, 'out-ffmpeg-edited.wav'));

const f2 = (v) => v.toFixed(2);
console.log(`\nloudness normalisation of ${(frames / SR / 60).toFixed(1)} min of ${SR} Hz stereo (${source}), to ${STREAMING_LOUDNESS.integrated} LUFS / ${STREAMING_LOUDNESS.truePeak} dBTP, pcm16, best of ${runs}, ${os.cpus().length} cores\n`);
console.log('path                        seconds   output I (ffmpeg)  output TP (ffmpeg)');
console.log(`JavaScript (normalizeLoudness)   ${f2(js.seconds).padStart(6)}   ${`${f2(mJs.integrated)} LUFS`.padStart(15)}  ${`${f2(mJs.truePeak)} dBTP`.padStart(16)}`);
console.log(`ffmpeg (normalizeLoudnessFfmpeg) ${f2(ff.seconds).padStart(6)}   ${`${f2(mFf.integrated)} LUFS`.padStart(15)}  ${`${f2(mFf.truePeak)} dBTP`.padStart(16)}`);
console.log(`ratio ffmpeg / JavaScript: ${(ff.seconds / js.seconds).toFixed(1)}x; input measured ${f2(js.result.inputIntegrated)} LUFS (JavaScript BS.1770) vs ${f2(ff.result.inputIntegrated)} LUFS (ffmpeg ebur128), gain ${f2(js.result.gainDb)} dB`);
console.log(`\nre-dub: premix 2 dB louder over ${(a / SR).toFixed(1)}-${(b / SR).toFixed(1)} s, normalised again`);
console.log(`JavaScript, previousGainDb ${f2(js.result.gainDb)} (exact now ${f2(reJs.exactGainDb)}, kept: ${reJs.gainKept}): ${dJs}`);
console.log(`ffmpeg, gain from its own measurement (${f2(ff.result.inputIntegrated)} then ${f2(reFf.inputIntegrated)} LUFS, printed to 0.1 LU; gain ${f2(opts.target.integrated - ff.result.inputIntegrated)} then ${f2(opts.target.integrated - reFf.inputIntegrated)} dB): ${dFf}`);
if (!values.keep) await fsp.rm(dir, { recursive: true, force: true });
