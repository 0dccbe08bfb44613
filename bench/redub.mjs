// Re-dub one line through the HTTP API, as a user does, on a real clip (bench/lib/clips.mjs: the
// face of talking-head-480.mp4 looped under real English speech, 5 minutes by default), en-US ->
// es-ES, without lips and with lips.
//
// The server is what `dub serve` runs: @dub/api over HTTP on a loopback port, the embedded queue
// and worker (@dub/pipeline's handlers in worker threads), PGlite and the blob store in its data
// dir. The asset is uploaded (POST /v1/assets/upload) and prepared once (the real prepare:
// separation, VAD, ASR, speakers, translation); each mode starts from a copy of that data dir.
// For each mode, the contract's path, timed from the request to the poll that sees Completed
// (GET /v1/versions/{id} every 100 ms):
//   POST generate (the first generation) -> Completed
//   PATCH revise -> GET script (ETag) -> one line's text edited (the segment nearest the middle
//   with 4 words or more: its words in reverse order) -> PUT script with If-Match
//   POST generate (the re-dub) -> Completed
// and the re-dub's quality report (GET /v1/versions/{id}/report): kept_from_generation, the lines
// synthesized again, the stages that ran. From the blob store, read after the run (not timed):
// how the mix was made (updated in place from which generation), the AAC chunks and lips chunks
// made again, and what the re-dub state collection removed.
//
// --compare also generates the edited script on a fresh copy of the prepared data dir (nothing of
// a generation cached: the full regenerate) and compares the re-dub's speech timeline with it
// sample by sample, inside and outside the edited line's slot, and with lips every decoded frame.
//
// Usage (after `npm run build`): node bench/redub.mjs [--minutes 5] [--modes no_lips,with_lips] [--compare] [--keep DIR]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createApi } from '@dub/api';
import { blobKeys, FsBlobStore, loadConfig, silentLogger } from '@dub/core';
import { readWav } from '@dub/media';
import { readFrames } from '@dub/lips';
import { createEmbeddedRuntime } from '@dub/worker';
import { clip, clipsDir } from './lib/clips.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    modes: { type: 'string', default: 'no_lips,with_lips' },
    compare: { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const modes = values.modes.split(',');
const root = clipsDir('redub', values.keep);
const input = clip(root, minutes, 'clean');
const KEY = 'bench-redub-key';
const auth = { authorization: `Bearer ${KEY}` };
const seconds = (t0) => (performance.now() - t0) / 1000;

/** `dub serve` in this process: the API on a loopback port over the embedded queue and worker threads, all in `dataDir`. */
async function serve(dataDir) {
  const tmp = path.join(dataDir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const store = new FsBlobStore(path.join(dataDir, 'blobs'));
  const config = { ...loadConfig({ ...process.env, DUB_DATA_DIR: dataDir, DUB_TMP_DIR: tmp }), dataDir };
  const rt = createEmbeddedRuntime({ dataDir, store, config, logger: silentLogger });
  const api = await createApi({ dataDir, keys: [{ key: KEY, org: 'bench' }], store, logger: silentLogger, transport: { queue: rt.queue, events: rt.events } });
  const base = await api.listen(0, '127.0.0.1');
  const call = async (method, url, body, headers = {}) => {
    const json = body !== undefined && !(body instanceof FormData);
    const r = await fetch(`${base}${url}`, { method, headers: { ...auth, ...headers, ...(json ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: json ? JSON.stringify(body) : body } : {}) });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, json: () => JSON.parse(text) };
  };
  return {
    store,
    call,
    async close() {
      await api.close();
      await rt.close();
    },
  };
}

/** Poll the version every 100 ms until it is `status`; a Failed version ends the bench. */
async function until(server, versionId, status) {
  for (;;) {
    const v = (await server.call('GET', `/v1/versions/${versionId}`)).json();
    if (v.status === status) return v;
    if (v.status === 'Failed') throw new Error(`version ${versionId} failed: ${JSON.stringify(v.error)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectStatus(r, status, what) {
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 500)}`);
  return r;
}

/** POST generate and wait for Completed: seconds, and the report. */
async function generate(server, versionId, mode) {
  const t0 = performance.now();
  expectStatus(await server.call('POST', `/v1/versions/${versionId}/generate`, { generate_mode: mode }), 202, 'generate');
  await until(server, versionId, 'Completed');
  const s = seconds(t0);
  const report = expectStatus(await server.call('GET', `/v1/versions/${versionId}/report`), 200, 'report').json();
  return { seconds: s, report };
}

/** GET script, reverse the words of the segment nearest the middle (4 words or more), PUT it with If-Match. */
async function editMiddle(server, versionId, given) {
  const read = expectStatus(await server.call('GET', `/v1/versions/${versionId}/script`), 200, 'GET script');
  const script = read.json();
  let seg;
  if (given) seg = script.segments.find((s) => s.id === given.id);
  else {
    const mid = (minutes * 60) / 2;
    const spoken = script.segments.filter((s) => s.target_text.trim().split(/\s+/).length >= 4);
    seg = spoken.reduce((a, b) => (Math.abs(b.start - mid) < Math.abs(a.start - mid) ? b : a));
  }
  seg.target_text = given ? given.text : seg.target_text.trim().split(/\s+/).reverse().join(' ');
  expectStatus(await server.call('PUT', `/v1/versions/${versionId}/script`, script, { 'if-match': read.headers.get('etag') }), 200, 'PUT script');
  const next = script.segments.filter((s) => s.start > seg.start && s.target_text.trim()).sort((a, b) => a.start - b.start)[0]?.start ?? minutes * 60;
  return { id: seg.id, text: seg.target_text, start: seg.start, end: seg.end, next };
}

/** The values of the stage outputs `<stage>-<hash>/manifest.json` of the asset. */
async function stageValues(store, assetId, stage) {
  const keys = (await store.list(`assets/${assetId}/artifacts/${stage}-`)).filter((k) => new RegExp(`/${stage}-[0-9a-f]{20}/manifest\\.json$`).test(k));
  return Promise.all(keys.map(async (k) => JSON.parse((await store.getBuffer(k)).toString('utf8')).value));
}

async function redubState(store, assetId, versionId, generation) {
  const key = blobKeys.redubState(assetId, versionId, generation);
  return (await store.has(key)) ? JSON.parse((await store.getBuffer(key)).toString('utf8')) : undefined;
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

// upload and prepare once; each mode starts from a copy of the prepared data dir
const preparedDir = path.join(root, `prepared-${minutes}min`);
let prepared;
if (!fs.existsSync(path.join(preparedDir, 'done.json'))) {
  await fsp.rm(preparedDir, { recursive: true, force: true });
  const server = await serve(preparedDir);
  const t0 = performance.now();
  const form = new FormData();
  form.set('request', JSON.stringify({ name: `redub ${minutes} min`, locale: 'en-US', languages: [{ locale: 'es-ES' }] }));
  form.set('video', new Blob([fs.readFileSync(input)], { type: 'video/mp4' }), path.basename(input));
  const created = expectStatus(await server.call('POST', '/v1/assets/upload', form), 201, 'upload').json();
  const versionId = created.languages[0].versions[0].version_id;
  await until(server, versionId, 'ReadyToEdit');
  prepared = { assetId: created.asset_id, versionId, seconds: seconds(t0) };
  await server.close();
  await fsp.writeFile(path.join(preparedDir, 'done.json'), JSON.stringify(prepared));
} else prepared = JSON.parse(await fsp.readFile(path.join(preparedDir, 'done.json'), 'utf8'));
const { assetId, versionId } = prepared;

const rows = [];
for (const mode of modes) {
  const dir = path.join(root, mode);
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.cp(preparedDir, dir, { recursive: true });
  const server = await serve(dir);
  let row;
  try {
    const first = await generate(server, versionId, mode);
    expectStatus(await server.call('PATCH', `/v1/versions/${versionId}/revise`, {}), 200, 'revise');
    const stateKept = (await redubState(server.store, assetId, versionId, 1)) !== undefined;
    const edit = await editMiddle(server, versionId);
    const redub = await generate(server, versionId, mode);
    // how the re-dub was made, from the blob store (not timed)
    const state = await redubState(server.store, assetId, versionId, 2);
    const audio = (await stageValues(server.store, assetId, 'audio')).find((a) => a?.identities?.hashes.join() === state?.aac_chunks?.join());
    const mixUpdate = (await stageValues(server.store, assetId, 'mix')).map((m) => m?.update).find((u) => u?.used && u.from_generation === 1);
    const lips = mode === 'with_lips' ? (await stageValues(server.store, assetId, 'lips')).map((v) => v?.chunks).find((c) => c && c.rendered < c.total) : undefined;
    const collected = { previousStateLeft: (await redubState(server.store, assetId, versionId, 1)) !== undefined, audioChunkBlobs: (await server.store.list(`assets/${assetId}/artifacts/audio-chunk-`)).length };
    row = { mode, first, redub, edit, stateKept, state, audio, mixUpdate, lips, collected };
  } finally {
    await server.close();
  }
  if (values.compare) {
    const copy = path.join(root, `${mode}-full`);
    await fsp.rm(copy, { recursive: true, force: true });
    await fsp.cp(preparedDir, copy, { recursive: true });
    const full = await serve(copy);
    try {
      await editMiddle(full, versionId, { id: row.edit.id, text: row.edit.text });
      row.fresh = await generate(full, versionId, mode);
      const freshState = await redubState(full.store, assetId, versionId, 1);
      row.speech = await compareSpeech(path.join(dir, 'blobs', row.state.mix.speech), path.join(copy, 'blobs', freshState.mix.speech), { start: row.edit.start, end: row.edit.next });
      if (mode === 'with_lips') row.frames = await compareFrames(path.join(dir, 'blobs', blobKeys.resultVideo(versionId, 2)), path.join(copy, 'blobs', blobKeys.resultVideo(versionId, 1)), row.lips?.spans ?? []);
    } finally {
      await full.close();
    }
  }
  rows.push(row);
}

const f1 = (x) => (x === undefined ? '—' : x.toFixed(1));
console.log(`\nre-dub of one line through the HTTP API (revise, PUT script with If-Match, generate, poll), ${minutes}-minute clip (${input}), en-US -> es-ES, ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} at the end (prepare: ${prepared.seconds.toFixed(0)} s, not timed below)\n`);
console.log(`mode       first generate  re-dub  re-dub / first  kept_from_generation  segment edited${values.compare ? '  full regenerate' : ''}`);
for (const r of rows) {
  const n = r.redub.report.loudness.normalization;
  console.log(`${r.mode.padEnd(10)} ${`${f1(r.first.seconds)} s`.padStart(14)}  ${`${f1(r.redub.seconds)} s`.padStart(6)}  ${`${((100 * r.redub.seconds) / r.first.seconds).toFixed(1)} %`.padStart(14)}  ${String(n?.kept_from_generation ?? null).padStart(20)}  ${r.edit.id} (${r.edit.start.toFixed(1)}-${r.edit.end.toFixed(1)} s)${r.fresh ? `  ${f1(r.fresh.seconds)} s` : ''}`);
}
console.log('\nhow the re-dub was made:');
for (const r of rows) {
  const regenerated = r.redub.report.segments.filter((s) => s.regenerated).map((s) => s.id);
  console.log(`${r.mode.padEnd(10)} re-dub state kept by revise: ${r.stateKept}; lines synthesized again: ${regenerated.length} (${regenerated.slice(0, 5).join(', ')}); mix: ${r.mixUpdate ? `generation 1's updated in place (${r.mixUpdate.frames} frames computed again)` : 'computed in full'}; AAC chunks: ${r.audio ? `${r.audio.chunks.encoded} of ${r.audio.chunks.total} encoded, ${r.audio.hashesReused} identities reused unread` : '?'}${r.lips ? `; lips chunks: ${r.lips.rendered} of ${r.lips.total} rendered` : ''}; after it: generation 1's state ${r.collected.previousStateLeft ? 'left' : 'collected'}, ${r.collected.audioChunkBlobs} AAC chunk blobs`);
}
if (values.compare) {
  console.log('\nidentity with the full regenerate:');
  for (const r of rows) {
    console.log(`${r.mode.padEnd(10)} speech timeline: ${r.speech.lengths[0]} vs ${r.speech.lengths[1]} samples at ${r.speech.sampleRates[0]} Hz, ${r.speech.samplesDifferingOutside} samples differ outside the edited slot (max |diff| inside ${r.speech.maxDiffInside.toExponential(2)})`);
    if (r.frames) {
      const rendered = r.lips ? r.lips.spans.reduce((a, s) => a + s.end - s.start, 0) : 0;
      console.log(`${''.padEnd(10)} video: ${r.frames.frames} frames, ${r.frames.framesDifferingOutside} differ outside the ${rendered} frames rendered again (${r.lips?.rendered ?? '?'} of ${r.lips?.total ?? '?'} chunks), ${r.frames.framesDifferingInside} differ inside`);
    }
  }
}
console.log('\nseconds per stage (first generate / re-dub, from the reports):');
for (const r of rows) {
  const names = r.first.report.stages.map((s) => s.stage);
  console.log(`${r.mode}: ${names.map((n) => `${n} ${f1(r.first.report.stages.find((s) => s.stage === n)?.seconds)}/${f1(r.redub.report.stages.find((s) => s.stage === n)?.seconds)}`).join(', ')}`);
}
if (!values.keep) await fsp.rm(root, { recursive: true, force: true });
