// Re-dub one line: how long a generate takes after one segment's text is edited, against the first
// generate of the same version, without lips and with lips (viseme-warp), on a real 5-minute clip
// (bench/lib/clips.mjs: the face of talking-head-480.mp4 looped under real English speech),
// en-US -> es-ES, through the pipeline's own functions on a filesystem blob store.
//
// For each mode: prepare once (its blob store is copied before the first generate), generate,
// edit the text of one segment near the middle, generate again (the timed re-dub), then generate
// the edited script on the copy, where nothing of a generation is cached (the full regenerate).
// Identity checks, in the same run: the speech timeline of the re-dub and of the full regenerate
// are compared sample by sample (before mixing), inside and outside the edited segment's slot;
// with lips, every decoded frame of the two result videos is compared, inside and outside the
// frames the re-dub rendered again.
//
// Usage (after `npm run build`): node bench/redub.mjs [--minutes 5] [--modes no_lips,with_lips] [--keep DIR]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { blobKeys, FsBlobStore, loadConfig, silentLogger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { readWav } from '@dub/media';
import { readFrames } from '@dub/lips';
import { generateVersion, prepareAsset, prepareVersion } from '@dub/pipeline';
import { clip, clipsDir } from './lib/clips.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    modes: { type: 'string', default: 'no_lips,with_lips' },
    keep: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const modes = values.modes.split(',');
const root = clipsDir('redub', values.keep);
const input = clip(root, minutes, 'clean');
const sessions = new SessionCache({ threads: 0 });

function runtime(dir) {
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const stages = [];
  const rt = {
    store: new FsBlobStore(path.join(dir, 'blobs')),
    ctx: { logger: silentLogger, onProgress: () => undefined },
    config: loadConfig({ ...process.env, DUB_DATA_DIR: dir, DUB_TMP_DIR: tmp }),
    sessions,
    events: [],
    stages,
    emit: async (e) => {
      rt.events.push(e);
      if (e.type === 'stage_done') stages.push(e);
    },
    enqueue: async () => undefined,
    attempt: 1,
  };
  return rt;
}

const ASSET = 'ast_redub';
const VERSION = 'ver_redub';
const seconds = (t0) => (performance.now() - t0) / 1000;

async function generate(rt, generation, mode) {
  rt.events.length = 0;
  rt.stages.length = 0;
  const t0 = performance.now();
  await generateVersion({ v: 1, type: 'generate-version', job_id: `gen-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'es-ES', mode, script_key: blobKeys.script(VERSION), generation, options: {} }, rt);
  const t = seconds(t0);
  const ev = rt.events.find((e) => e.type === 'version_generated');
  return { seconds: t, event: ev, stages: rt.stages.map((s) => ({ stage: s.stage, cached: s.cached, seconds: s.seconds })) };
}

/** Edit the text of the segment nearest the middle: its words in reverse order (same length, other speech). */
async function editMiddle(rt) {
  const key = blobKeys.script(VERSION);
  const script = JSON.parse((await rt.store.getBuffer(key)).toString('utf8'));
  const mid = (minutes * 60) / 2;
  const spoken = script.segments.filter((s) => s.target_text.trim().split(/\s+/).length >= 4);
  const seg = spoken.reduce((a, b) => (Math.abs(b.start - mid) < Math.abs(a.start - mid) ? b : a));
  seg.target_text = seg.target_text.trim().split(/\s+/).reverse().join(' ');
  script.updated_at = new Date().toISOString();
  await rt.store.put(key, Buffer.from(JSON.stringify(script)));
  return { id: seg.id, start: seg.start, end: seg.end, next: script.segments.filter((s) => s.start > seg.start && s.target_text.trim()).sort((a, b) => a.start - b.start)[0]?.start ?? minutes * 60, script };
}

async function compareSpeech(a, b, span) {
  const [x, y] = [await readWav(a), await readWav(b)];
  const sr = x.sampleRate;
  const lo = Math.floor(span.start * sr);
  const hi = Math.ceil(span.end * sr);
  let outside = 0;
  let inside = 0;
  const n = Math.max(x.channels[0].length, y.channels[0].length);
  for (let i = 0; i < n; i++) {
    const d = Math.abs((x.channels[0][i] ?? NaN) - (y.channels[0][i] ?? NaN));
    if (i >= lo && i < hi) inside = Math.max(inside, d);
    else if (!(d === 0)) outside++;
  }
  return { sampleRates: [x.sampleRate, y.sampleRate], lengths: [x.channels[0].length, y.channels[0].length], samplesDifferingOutside: outside, maxDiffInside: inside };
}

async function compareFrames(a, b, spans) {
  const other = readFrames(b, { width: 480, height: 480 });
  let i = 0;
  let outside = 0;
  let inside = 0;
  let insideChanged = 0;
  for await (const f of readFrames(a, { width: 480, height: 480 })) {
    const g = (await other.next()).value;
    const same = g !== undefined && Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength).equals(Buffer.from(g.data.buffer, g.data.byteOffset, g.data.byteLength));
    const within = spans.some((s) => i >= s.start && i < s.end);
    if (within) {
      inside++;
      if (!same) insideChanged++;
    } else if (!same) outside++;
    i++;
  }
  await other.return(undefined);
  return { frames: i, framesDifferingOutside: outside, framesInsideRendered: inside, framesDifferingInside: insideChanged };
}

// prepare once; each mode starts from a copy of the prepared store
const preparedDir = path.join(root, 'prepared');
let prepareSeconds;
if (!fs.existsSync(path.join(preparedDir, 'done'))) {
  await fsp.rm(preparedDir, { recursive: true, force: true });
  const rt = runtime(preparedDir);
  await rt.store.putFile(blobKeys.sourceUpload(ASSET), input);
  const t0 = performance.now();
  const prepared = await prepareAsset({ v: 1, type: 'prepare-asset', job_id: 'prep', asset_id: ASSET, locale: 'en-US', media: { blob: blobKeys.sourceUpload(ASSET) }, versions: [{ version_id: VERSION, locale: 'es-ES' }] }, rt);
  await prepareVersion(prepared.versionJobs[0], rt);
  prepareSeconds = seconds(t0);
  await fsp.writeFile(path.join(preparedDir, 'done'), String(prepareSeconds));
} else prepareSeconds = Number(await fsp.readFile(path.join(preparedDir, 'done'), 'utf8'));

const rows = [];
for (const mode of modes) {
  const dir = path.join(root, mode);
  const copy = path.join(root, `${mode}-full`);
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.rm(copy, { recursive: true, force: true });
  await fsp.cp(preparedDir, dir, { recursive: true });
  await fsp.cp(preparedDir, copy, { recursive: true });
  const rt = runtime(dir);

  const first = await generate(rt, 1, mode);
  const edit = await editMiddle(rt);
  const redub = await generate(rt, 2, mode);
  const full = runtime(copy);
  await full.store.put(blobKeys.script(VERSION), Buffer.from(JSON.stringify(edit.script)));
  const fresh = await generate(full, 2, mode);

  const speech = await compareSpeech(rt.store.localPath(redub.event.speech_key), full.store.localPath(fresh.event.speech_key), { start: edit.start, end: edit.next });
  let frames;
  let lipsChunks;
  if (mode === 'with_lips') {
    const lipsStage = redub.stages.find((s) => s.stage === 'lips');
    // the chunks the re-dub rendered: read back from the lips stage's stored value
    const manifests = [];
    for (const k of await rt.store.list(`assets/${ASSET}/artifacts/lips-`)) if (k.endsWith('/manifest.json') && !k.includes('/lips-chunk-')) manifests.push(k);
    const values = await Promise.all(manifests.map(async (k) => JSON.parse((await rt.store.getBuffer(k)).toString('utf8')).value));
    lipsChunks = values.map((v) => v.chunks).find((c) => c && c.rendered < c.total);
    frames = await compareFrames(rt.store.localPath(redub.event.result_video_key), full.store.localPath(fresh.event.result_video_key), lipsChunks?.spans ?? []);
    frames.lipsStageSeconds = lipsStage?.seconds;
  }
  rows.push({ mode, first, redub, fresh, edit: { id: edit.id, start: edit.start, end: edit.end }, speech, frames, lipsChunks });
}
await sessions.disposeAll();

const f1 = (x) => (x === undefined ? '—' : x.toFixed(1));
console.log(`\nre-dub of one segment, ${minutes}-minute clip (${input}), en-US -> es-ES, ${os.cpus().length} cores (prepare: ${prepareSeconds.toFixed(0)} s, not timed below)\n`);
console.log('mode       first generate  re-dub  full regenerate  re-dub / first  segment edited');
for (const r of rows) {
  console.log(`${r.mode.padEnd(10)} ${`${f1(r.first.seconds)} s`.padStart(14)}  ${`${f1(r.redub.seconds)} s`.padStart(6)}  ${`${f1(r.fresh.seconds)} s`.padStart(15)}  ${`${(100 * r.redub.seconds / r.first.seconds).toFixed(1)} %`.padStart(13)}  ${r.edit.id} (${r.edit.start.toFixed(1)}-${r.edit.end.toFixed(1)} s)`);
}
console.log('\nidentity with the full regenerate:');
for (const r of rows) {
  console.log(`${r.mode.padEnd(10)} speech timeline: ${r.speech.lengths[0]} vs ${r.speech.lengths[1]} samples at ${r.speech.sampleRates[0]} Hz, ${r.speech.samplesDifferingOutside} samples differ outside the edited slot (max |diff| inside ${r.speech.maxDiffInside.toExponential(2)})`);
  if (r.frames) {
    const rendered = r.lipsChunks ? r.lipsChunks.spans.reduce((a, s) => a + s.end - s.start, 0) : 0;
    console.log(`${''.padEnd(10)} video: ${r.frames.frames} frames, ${r.frames.framesDifferingOutside} differ outside the ${rendered} frames rendered again (${r.lipsChunks?.rendered ?? '?'} of ${r.lipsChunks?.total ?? '?'} chunks), ${r.frames.framesDifferingInside} differ inside`);
  }
}
console.log('\nseconds per stage (first generate / re-dub):');
for (const r of rows) {
  const names = r.first.stages.map((s) => s.stage);
  console.log(`${r.mode}: ${names.map((n) => `${n} ${f1(r.first.stages.find((s) => s.stage === n)?.seconds)}/${f1(r.redub.stages.find((s) => s.stage === n)?.seconds)}`).join(', ')}`);
}
if (!values.keep) await fsp.rm(root, { recursive: true, force: true });
