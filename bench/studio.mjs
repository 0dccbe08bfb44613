#!/usr/bin/env node
// The studio on a long video: a 30-minute video with 400 segments (3 speakers) opened in headless
// Chromium (playwright-core) at 1280x720 through a signed studio link of @dub/api. The video is
// made with ffmpeg (a still picture and a tone that pauses every few seconds, so the waveform has
// speech-like runs and pauses) and the transcript and script are SYNTHESIZED here (seeded random
// sentences at the tone's times): the bench plays the worker instead of running the pipeline for
// 30 minutes. Measured, in the page (performance marks, ms from navigation start):
//   first render: the page built (header, players, 400 rows, 400 timeline blocks) and the frame
//   after it shown; the very first load (browser and API just started), first visits (each in
//   a new browser context, empty cache; median of --loads) and repeat visits (reloads, modules
//   cached; median of --loads);
//   waveform: the timeline's waveform drawn, on the very first load computed by the API from the
//   video with ffmpeg, afterwards the stored body;
//   interaction: one keystroke in a line (validation, diff and reading figures of all 400 rows),
//   a click on a block (select its row), a split (rows and blocks rebuilt), an undo.
// Peer: what the page avoids by asking the API for peaks, the browser decoding the whole source
// audio itself (fetch + decodeAudioData of the 30-minute track at 16 kHz mono).
// Build first: `npm run build`. Needs Chromium (/usr/bin/chromium or DUB_CHROMIUM_PATH).
// Options: --minutes 30, --segments 400, --loads 5, --marks (also every performance mark of the
// page, median of the warm loads). The video is kept in the OS temp dir for the next run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { createApi, MemoryTransport } from '@dub/api';
import { blobKeys } from '@dub/core';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '30' }, segments: { type: 'string', default: '400' }, loads: { type: 'string', default: '5' }, marks: { type: 'boolean', default: false } } });
const MINUTES = Number(values.minutes);
const SEGMENTS = Number(values.segments);
const LOADS = Number(values.loads);
const DURATION = MINUTES * 60;
const CHROMIUM = process.env.DUB_CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) {
  console.log(`bench studio skipped: Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`);
  process.exit(0);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-bench-studio-'));
const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });

// ---------------------------------------------------------------- the video and the script
const period = DURATION / SEGMENTS; // one segment and its pause
const speech = Math.round(period * 0.78 * 1000) / 1000;
const video = path.join(os.tmpdir(), `dub-bench-studio-${MINUTES}min-${SEGMENTS}.mp4`);
let t0 = performance.now();
const reused = fs.existsSync(video);
if (!reused) execFileSync('ffmpeg', [
  '-v', 'error', '-y',
  '-f', 'lavfi', '-i', `color=c=0x1d3557:s=320x180:r=2:d=${DURATION}`,
  '-f', 'lavfi', '-i', `aevalsrc='0.25*sin(2*PI*(180+40*sin(2*PI*0.7*t))*t)*(0.6+0.4*sin(2*PI*3*t))*lt(mod(t,${period}),${speech})':s=16000:d=${DURATION}`,
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'stillimage', '-pix_fmt', 'yuv420p',
  '-c:a', 'aac', '-b:a', '48k', '-shortest', '-movflags', '+faststart', `${video}.tmp.mp4`,
]);
if (!fs.existsSync(video)) fs.renameSync(`${video}.tmp.mp4`, video);
const makeVideoMs = performance.now() - t0;

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const EN = 'the we today about open source dubbing voice speaker video line time review script model language translation sound studio subtitle people world question answer story make work good'.split(' ');
const ES = 'el la hoy sobre código abierto doblaje voz hablante vídeo línea tiempo revisión guion modelo idioma traducción sonido estudio subtítulo gente mundo pregunta respuesta historia hacer trabajo bueno'.split(' ');
const sentence = (words, n) => {
  const w = Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]);
  w[0] = w[0][0].toUpperCase() + w[0].slice(1);
  return `${w.join(' ')}.`;
};
const speakers = ['S1', 'S2', 'S3'];
const segs = Array.from({ length: SEGMENTS }, (_, i) => {
  const start = Math.round(i * period * 1000) / 1000;
  const n = 5 + Math.floor(rand() * 9);
  return { id: `seg-${String(i + 1).padStart(4, '0')}`, start, end: Math.round((start + speech) * 1000) / 1000, speaker: speakers[Math.floor(i / 3) % 3], source_text: sentence(EN, n), target_text: sentence(ES, n + 1) };
});

// ---------------------------------------------------------------- the API, playing the worker
const transport = new MemoryTransport();
const api = await createApi({ dataDir: path.join(dir, 'data'), keys: [{ key: 'bench-key', org: 'bench' }], allowPrivateUrls: true, transport: { queue: transport, events: transport }, dispatch: false });
const base = await api.listen(0);
const auth = { authorization: 'Bearer bench-key', 'content-type': 'application/json' };
const created = await (await fetch(`${base}/v1/assets/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Long talk', locale: 'en-US', languages: [{ locale: 'es-ES' }], media_url: 'http://127.0.0.1:9/talk.mp4' }) })).json();
const assetId = created.asset_id;
const versionId = created.languages[0].versions[0].version_id;
await api.store.putFile(blobKeys.sourceVideo(assetId), video);
const transcript = { v: 1, locale: 'en-US', engine: 'synthetic', duration: DURATION, speakers: speakers.map((id) => ({ id })), segments: segs.map((s) => ({ id: s.id, start: s.start, end: s.end, speaker: s.speaker, text: s.source_text, words: [] })) };
await api.store.put(blobKeys.transcript(assetId), JSON.stringify(transcript));
await transport.publish({ type: 'asset_prepared', job_id: 'bench-prep', asset_id: assetId, duration: DURATION, source_video_key: blobKeys.sourceVideo(assetId), transcript_key: blobKeys.transcript(assetId) });
const script = { v: 1, asset_id: assetId, version_id: versionId, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'synthetic', speakers: speakers.map((id) => ({ id })), segments: segs, updated_at: new Date().toISOString() };
await api.store.put(blobKeys.script(versionId), JSON.stringify(script));
await transport.publish({ type: 'version_prepared', job_id: 'bench-prepv', asset_id: assetId, version_id: versionId, script_key: blobKeys.script(versionId) });
const link = (await (await fetch(`${base}/v1/versions/${versionId}/studio_url`, { method: 'POST', headers: auth, body: '{}' })).json()).studio_url;

// ---------------------------------------------------------------- the browser
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
const errors = [];

/** Load the page; the marks the page sets (ms from navigation start). */
async function load(page, waitWaveform) {
  await page.goto(link);
  await page.waitForFunction(() => performance.getEntriesByName('dub-studio-first-frame').length > 0, null, { timeout: 60_000 });
  if (waitWaveform) await page.waitForFunction(() => performance.getEntriesByName('dub-studio-waveform').length > 0, null, { timeout: 300_000 });
  return page.evaluate(() => {
    const m = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
    const nav = performance.getEntriesByType('navigation')[0];
    const marks = Object.fromEntries(performance.getEntriesByType('mark').map((e) => [e.name, e.startTime]));
    return { rendered: m('dub-studio-rendered'), frame: m('dub-studio-first-frame'), waveform: m('dub-studio-waveform'), html: nav.responseEnd, domInteractive: nav.domInteractive, marks, rows: document.querySelectorAll('.segment-table tbody tr').length, blocks: document.querySelectorAll('.block').length };
  });
}

// the very first load: browser and API just started, the API computes the waveform
const first = await context.newPage();
first.on('pageerror', (e) => errors.push(e.message));
const cold = await load(first, true);
if (cold.rows !== SEGMENTS || cold.blocks !== SEGMENTS) throw new Error(`the page shows ${cold.rows} rows and ${cold.blocks} blocks, not ${SEGMENTS}`);
await first.close();
// first visits: each in a new browser context (empty cache), the browser and the API running
const visits = [];
for (let i = 0; i < LOADS; i++) {
  const c = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const p = await c.newPage();
  p.on('pageerror', (e) => errors.push(e.message));
  const cdp = values.marks ? await c.newCDPSession(p) : undefined;
  await cdp?.send('Performance.enable');
  const v = await load(p, true);
  if (cdp) v.cdp = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.filter((m) => /Duration$/.test(m.name)).map((m) => [m.name, m.value * 1000]));
  visits.push(v);
  await c.close();
}
// repeat visits: reloads of one page (modules cached)
const page = await context.newPage();
page.on('pageerror', (e) => errors.push(e.message));
await load(page, true);
const warm = [];
for (let i = 0; i < LOADS; i++) warm.push(await load(page, true));

// interaction on the loaded page
const interact = await page.evaluate(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const out = {};
  const ta = document.querySelector('#seg-200-text');
  ta.focus();
  let t = performance.now();
  ta.value += ' x';
  ta.dispatchEvent(new Event('input', { bubbles: true }));
  out.keystroke = performance.now() - t;
  ta.blur();
  await frame();
  t = performance.now();
  document.querySelector('#block-250').click();
  out.selectBlock = performance.now() - t;
  await frame();
  const video = document.querySelector('#source-video');
  const [s, e] = [Number(document.querySelector('#block-250-start').getAttribute('aria-valuenow')), Number(document.querySelector('#block-250-end').getAttribute('aria-valuenow'))];
  video.currentTime = (s + e) / 2;
  await new Promise((r) => video.addEventListener('seeked', r, { once: true }));
  t = performance.now();
  document.querySelector('#split').click();
  out.split = performance.now() - t;
  out.rowsAfterSplit = document.querySelectorAll('.segment-table tbody tr').length;
  await frame();
  t = performance.now();
  document.querySelector('#undo').click();
  out.undo = performance.now() - t;
  out.rowsAfterUndo = document.querySelectorAll('.segment-table tbody tr').length;
  return out;
});
await page.close();

// the peer: the browser decodes the whole source audio itself
const peerPage = await context.newPage();
await peerPage.goto(`${base}/healthz`);
const mediaLink = (await (await fetch(`${base}/v1/versions/${versionId}/studio/context`, { headers: auth })).json()).asset.source_video_url;
const peer = await peerPage.evaluate(async (url) => {
  const t = performance.now();
  const buf = await (await fetch(url)).arrayBuffer();
  const fetched = performance.now() - t;
  const bytes = buf.byteLength; // decodeAudioData detaches the buffer
  const ctx = new OfflineAudioContext(1, 1, 16000);
  const audio = await ctx.decodeAudioData(buf);
  return { fetchMs: fetched, totalMs: performance.now() - t, bytes, pcmBytes: audio.length * audio.numberOfChannels * 4, seconds: audio.duration };
}, mediaLink).catch((e) => ({ error: String(e.message ?? e) }));
await peerPage.close();
await browser.close();
const waveformBytes = (await api.store.getBuffer(`assets/${assetId}/waveform-v1-50.json`)).length;
await api.close();
cleanup();

// ---------------------------------------------------------------- report
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (x) => (x === null || x === undefined ? 'n/a' : `${Math.round(x)} ms`);
console.log(`studio: ${MINUTES}-minute video (synthesized), ${SEGMENTS} segments (synthesized script), 3 speakers, 1280x720, headless Chromium; ${os.cpus().length} cores; ${reused ? `video reused from ${video}` : `video made in ${(makeVideoMs / 1000).toFixed(1)} s`}\n`);
const stat = (xs) => `${f(med(xs))} (${f(Math.min(...xs))}..${f(Math.max(...xs))})`;
console.log(`| measure | very first load (browser and API just started) | first visit, empty cache: median (min..max) of ${LOADS} | repeat visit: median (min..max) of ${LOADS} |`);
console.log('|---|---|---|---|');
const row = (name, key) => console.log(`| ${name} | ${f(cold[key])} | ${stat(visits.map((w) => w[key]))} | ${stat(warm.map((w) => w[key]))} |`);
row('HTML received', 'html');
row(`page built (${SEGMENTS} rows, ${SEGMENTS} blocks)`, 'rendered');
row('**first render** (the frame after it is shown)', 'frame');
row('waveform drawn (very first: computed by the API with ffmpeg)', 'waveform');
console.log('');
console.log('| interaction (400 segments) | ms |');
console.log('|---|---|');
console.log(`| one keystroke in a line (validation, diff, reading figures of every row) | ${interact.keystroke.toFixed(1)} |`);
console.log(`| click a block (select its row) | ${interact.selectBlock.toFixed(1)} |`);
console.log(`| split at the playhead (rows and blocks rebuilt; ${interact.rowsAfterSplit} rows) | ${interact.split.toFixed(1)} |`);
console.log(`| undo (${interact.rowsAfterUndo} rows) | ${interact.undo.toFixed(1)} |`);
console.log('');
console.log('| waveform source | bytes | ms |');
console.log('|---|---|---|');
console.log(`| API peaks (GET /v1/versions/{id}/waveform, stored body) | ${waveformBytes} | see "waveform drawn" on first and repeat visits above |`);
if ('error' in peer) console.log(`| peer: browser decodes the whole audio | n/a | failed: ${peer.error} |`);
else console.log(`| peer: browser fetches the ${(peer.bytes / 1e6).toFixed(1)} MB video and decodes its ${Math.round(peer.seconds)} s of audio (${(peer.pcmBytes / 1e6).toFixed(0)} MB of PCM at 16 kHz) | ${peer.bytes} | ${Math.round(peer.totalMs)} (fetch ${Math.round(peer.fetchMs)}) |`);
if (values.marks) {
  console.log('\n| page mark (ms from navigation start) | very first | first visit median | repeat median |');
  console.log('|---|---|---|---|');
  const names = Object.keys(warm[0].marks).sort((a, b) => warm[0].marks[a] - warm[0].marks[b]);
  console.log(`| domInteractive | ${f(cold.domInteractive)} | ${f(med(visits.map((w) => w.domInteractive)))} | ${f(med(warm.map((w) => w.domInteractive)))} |`);
  for (const n of names) console.log(`| ${n} | ${f(cold.marks[n])} | ${f(med(visits.map((w) => w.marks[n] ?? NaN)))} | ${f(med(warm.map((w) => w.marks[n] ?? NaN)))} |`);
  console.log('\n| Chromium time by kind, first visit (CDP Performance metrics, whole load) | median |');
  console.log('|---|---|');
  for (const k of Object.keys(visits[0].cdp ?? {})) console.log(`| ${k} | ${f(med(visits.map((w) => w.cdp[k])))} |`);
}
if (errors.length) {
  console.log(`\npage errors: ${errors.join('; ')}`);
  process.exit(1);
}
