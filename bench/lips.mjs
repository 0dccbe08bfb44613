// @dub/lips benchmark: real_face against real_face_turbo on the same clip in the same run, and a
// plain ffmpeg transcode of that clip (decode + libx264 encode, nothing else) as the peer: the
// floor every frame-by-frame re-render pays. Input: 10 s of ../shared/media/talking-head-480.mp4
// (480x480, 30 fps, a real face) and a dubbed-speech track made with espeak-ng. Reports wall
// time, frames per second, real-time factor, face detection ms per analysed frame, and ratios.
// The engine is whatever `real_face` resolves to on this host (wav2lip when its model is
// installed, else viseme-warp); both rows use the same one.
// Run after `npm run build`: node bench/lips.mjs [seconds]
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { SessionCache } from '@dub/onnx';
import { runFfmpeg, runProcess } from '@dub/media';
import { lipSync } from '@dub/lips';

const here = path.dirname(fileURLToPath(import.meta.url));
const MEDIA = path.resolve(here, '..', '..', 'shared', 'media');
const seconds = Number(process.argv[2] ?? 10);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-bench-lips-'));
const f2 = (x) => x.toFixed(2);
const load = () => os.loadavg()[0].toFixed(1);

try {
  const clip = path.join(dir, 'clip.mp4');
  await runFfmpeg(['-ss', '2', '-t', String(seconds), '-i', path.join(MEDIA, 'talking-head-480.mp4'), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-c:a', 'aac', clip]);
  const speech = path.join(dir, 'speech.wav');
  const text = 'Hola a todos y bienvenidos al programa. Hoy hablamos de la comida, del mar y de la montaña, y de todo lo que nos gusta.';
  await runProcess('espeak-ng', ['-v', 'es', '-s', '150', '-w', speech, '--stdin'], { input: text });
  const frames = Math.round(seconds * 30);
  const loadBefore = load();

  const t0 = performance.now();
  await runFfmpeg(['-i', clip, '-an', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', path.join(dir, 'transcode.mp4')]);
  const peer = (performance.now() - t0) / 1000;

  const sessions = new SessionCache({ threads: 1 });
  const rows = [];
  for (const model of ['real_face', 'real_face_turbo']) {
    // one warm-up run loads the sessions; the measured run is the second
    await lipSync({ video: clip, speech: { file: speech }, output: path.join(dir, `${model}-warm.mp4`) }, { model, sessions, tmpDir: dir });
    const r = await lipSync({ video: clip, speech: { file: speech }, output: path.join(dir, `${model}.mp4`) }, { model, sessions, tmpDir: dir });
    rows.push({ model, ...r });
  }
  await sessions.disposeAll();

  const base = rows[0].seconds;
  console.log(`\n### lips: ${seconds} s of talking-head-480 (${frames} frames, 480x480), ${os.cpus().length} cores, load ${loadBefore} -> ${load()}\n`);
  console.log('| run | engine | wall s | frames/s | x real time | detections | detection ms/frame | track s | render s | speed-up vs real_face |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.model} | ${r.engine} | ${f2(r.seconds)} | ${f2(r.frames / r.seconds)} | ${f2(seconds / r.seconds)} | ${r.detectedFrames} | ${f2(r.detectionMsPerFrame)} | ${f2(r.trackSeconds)} | ${f2(r.renderSeconds)} | ${f2(base / r.seconds)}x |`);
  }
  console.log(`| peer: ffmpeg transcode | — | ${f2(peer)} | ${f2(frames / peer)} | ${f2(seconds / peer)} | — | — | — | — | ${f2(base / peer)}x |`);
  const detBase = rows[0].detectionMsPerFrame * rows[0].detectedFrames;
  const detTurbo = rows[1].detectionMsPerFrame * rows[1].detectedFrames;
  console.log(`\nface detection total: real_face ${f2(detBase)} ms, real_face_turbo ${f2(detTurbo)} ms (${f2(detBase / detTurbo)}x less); lips over a bare transcode: real_face ${f2(rows[0].seconds / peer)}x, turbo ${f2(rows[1].seconds / peer)}x`);
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
