// The lips of a with_lips job alone, as the pipeline calls them: detectFaces (the `faces` stage),
// then a chunked lipSync (viseme-warp, real_face) with a fresh chunk store and the clip's own audio
// as the speech, on the face of ../shared/media/talking-head-480.mp4 looped for N minutes
// (bench/lib/clips.mjs). Reports, per stage: wall s, CPU s of the process tree (this process and
// the ffmpeg children it waited for, from /proc/self/stat), RTF and the 1-minute load; then the
// pieces of the render measured alone with ffmpeg (decode to yuv420p rawvideo, the same decode
// piped into libx264 at the profile's settings) as its floor. Checks the output's frame count and
// pts against the source. Run after `npm run build`, under flock /tmp/bench.lock:
//   node bench/lips-stage.mjs [--minutes 1,8] [--keep DIR] [--out FILE (keep the 1st output)]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { detectFaces, lipSync } from '@dub/lips';
import { clip, clipsDir } from './lib/clips.mjs';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '1' }, keep: { type: 'string' }, out: { type: 'string' } } });
const dir = clipsDir('lips-stage', values.keep);
const f2 = (x) => x.toFixed(2);
const load = () => os.loadavg()[0].toFixed(1);
const tick = 100; // USER_HZ
function cpu() {
  const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / tick; // utime stime cutime cstime
}
async function measure(fn) {
  const l0 = load();
  const c0 = cpu();
  const t0 = performance.now();
  const value = await fn();
  return { value, wall: (performance.now() - t0) / 1000, cpu: cpu() - c0, load: `${l0} -> ${load()}` };
}
function timed(cmd, args) {
  return measure(async () => {
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  });
}
const pts = (file) => spawnSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'frame=pts_time', '-of', 'default=nw=1:nk=1', file], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout.split('\n').filter((l) => /^[0-9.]+$/.test(l));

const rows = [];
for (const m of values.minutes.split(',').map(Number)) {
  const video = clip(dir, m, 'clean');
  const speech = path.join(dir, `speech-${m}min.wav`);
  if (!fs.existsSync(speech)) spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', video, '-map', '0:a', '-ac', '1', '-ar', '16000', speech]);
  const work = fs.mkdtempSync(path.join(dir, 'run-'));
  const store = new Map();
  const chunks = { store: { get: async (k) => store.get(k), put: async (k, f) => void store.set(k, f) }, identity: `clip-${m}` };
  const output = path.join(work, 'lips.mp4');
  const faces = await measure(() => detectFaces(video, { model: 'real_face' }));
  const lips = await measure(() => lipSync({ video, speech: { file: speech }, output, faces: faces.value, chunks }, { model: 'real_face', engine: 'viseme-warp', tmpDir: work }));
  const decode = await timed('ffmpeg', ['-v', 'error', '-i', video, '-map', '0:v:0', '-an', '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-y', '/dev/null']);
  const transcode = await timed('bash', ['-c', `ffmpeg -v error -i '${video}' -map 0:v:0 -an -f rawvideo -pix_fmt yuv420p pipe:1 | ffmpeg -v error -f rawvideo -pix_fmt yuv420p -s 480x480 -framerate 30 -i pipe:0 -c:v libx264 -preset veryfast -crf 18 -y '${path.join(work, 'transcode.mp4')}'`]);
  const a = pts(video);
  const b = pts(output);
  const same = a.length === b.length && a.every((x, i) => Math.abs(Number(x) - Number(b[i])) < 1e-6);
  if (values.out && rows.length === 0) fs.copyFileSync(output, values.out);
  rows.push({ m, faces, lips, decode, transcode, frames: b.length, srcFrames: a.length, same, detections: faces.value.detectedFrames, chunks: lips.value.chunks });
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`\n### lips stage alone (viseme-warp, real_face, chunked), ${os.cpus().length} cores, ${new Date().toISOString()}\n`);
console.log('| clip | step | wall s | CPU s | RTF (wall) | load 1 min |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const s = r.m * 60;
  for (const [name, x] of [['faces (detectFaces)', r.faces], ['lips (chunked lipSync)', r.lips], ['faces + lips', { wall: r.faces.wall + r.lips.wall, cpu: r.faces.cpu + r.lips.cpu, load: '' }], ['floor: ffmpeg decode to yuv420p', r.decode], ['floor: decode | x264 veryfast crf 18', r.transcode]]) {
    console.log(`| ${r.m} min | ${name} | ${f2(x.wall)} | ${f2(x.cpu)} | ${(x.wall / s).toFixed(3)} | ${x.load} |`);
  }
}
for (const r of rows) console.log(`\n${r.m} min: ${r.detections} detections, ${r.chunks.total} chunks, output ${r.frames} frames (source ${r.srcFrames}), every pts equal: ${r.same}`);
if (!values.keep) fs.rmSync(dir, { recursive: true, force: true });
