// The offline voice paths on real speakers: espeak-ng matched to each speaker's pitch and rate
// (today's matching), and the same plus the timbre match (the speaker's long-term spectral
// envelope; packages/voice/src/matching/timbre.ts). For each speaker of the real recordings in
// ../shared/media, the dubbed lines (Spanish, as a dub of them would be) are synthesized with
// both paths; printed in one run: synthesis time per second of speech, and the speaker similarity
// the quality report uses: the cosine of the MFCC-statistics embedding (@dub/asr, standardized
// over every clip of the run) of the dubbed speech and of the speaker's reference clip, and
// whether the dubbed speech is nearer its own speaker than any other (identification).
// voice-ref-a and voice-ref-b chose the settings (maxDb, strength); the others are held out.
//
// Usage (after `npm run build`): node bench/voice-match.mjs
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '@dub/core';
import { readWav, resample } from '@dub/media';
import { createSpeakerEmbedding, resolveMfccStatsOptions } from '@dub/asr';
import { analyzeVoice, spectralEnvelope, TTS_ENGINES, VoiceMatcher } from '@dub/voice';
import { MEDIA } from './lib/clips.mjs';

const SPEAKERS = [
  { id: 'voice-ref-a', file: 'voice-ref-a.mp3', fit: true },
  { id: 'voice-ref-b', file: 'voice-ref-b.mp3', fit: true },
  { id: 'jfk', file: 'jfk.wav' },
  { id: 'call-90', file: 'two-speakers-call.wav', rttm: 'speaker90' },
  { id: 'call-91', file: 'two-speakers-call.wav', rttm: 'speaker91' },
  { id: 'spanish-prompt', file: 'spanish-prompt.wav' },
  { id: 'chinese-news', file: 'chinese-news.wav' },
  { id: 'japanese', file: 'japanese.wav' },
];
const LINES = [
  'Buenas tardes a todos, gracias por venir hoy.',
  'Lo que vamos a ver ahora cambia la forma de trabajar.',
  'Si tienen preguntas, las responderemos al final de la sesión.',
];
const missing = [...new Set(SPEAKERS.map((s) => s.file))].filter((f) => !fs.existsSync(path.join(MEDIA, f)));
if (missing.length) {
  console.log(`bench voice-match skipped: ../shared/media lacks ${missing.join(', ')}`);
  process.exit(0);
}

const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-voice-'));
const ctx = { logger: silentLogger };
const engine = await TTS_ENGINES.create('espeak-ng', { 'espeak-ng': { tmpDir: dir } }, { models: {} });
const matcher = new VoiceMatcher(engine);
const embedder = await createSpeakerEmbedding('mfcc', { mfcc: resolveMfccStatsOptions() }, {});

/** A speaker's reference: 16 kHz mono, the first 20 s of their speech (call speakers: their RTTM turns). */
async function reference(s) {
  const wav = path.join(dir, `${s.id}.wav`);
  await resample(path.join(MEDIA, s.file), wav, { sampleRate: 16000, channels: 1 });
  const x = (await readWav(wav)).channels[0];
  if (!s.rttm) return x.subarray(0, 20 * 16000);
  const turns = fs.readFileSync(path.join(MEDIA, 'two-speakers-call.rttm'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/)).filter((f) => f[7] === s.rttm);
  const parts = turns.map((f) => x.subarray(Math.round(Number(f[3]) * 16000), Math.round((Number(f[3]) + Number(f[4])) * 16000)));
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  if (!out.length) throw new Error(`no RTTM turns of ${s.rttm}`);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function to16k(audio, name) {
  const { writeWav } = await import('@dub/media');
  const a = path.join(dir, `${name}-raw.wav`);
  const b = path.join(dir, `${name}.wav`);
  await writeWav(a, audio, { format: 'float32' });
  await resample(a, b, { sampleRate: 16000, channels: 1 });
  return (await readWav(b)).channels[0];
}

async function speak(settings, name) {
  const t0 = performance.now();
  const parts = [];
  for (const text of LINES) parts.push((await engine.synthesize({ text, locale: 'es-ES', speed: 1, voice: settings }, ctx)).channels[0]);
  const seconds = (performance.now() - t0) / 1000;
  const sampleRate = engine.capabilities.sampleRate;
  const all = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return { seconds, speechSeconds: all.length / sampleRate, samples: await to16k({ sampleRate, channels: [all] }, name) };
}

const rows = [];
for (const s of SPEAKERS) {
  const ref = await reference(s);
  const profile = analyzeVoice({ sampleRate: 16000, channels: [ref] });
  const t0 = performance.now();
  const plain = await matcher.match(profile, { locale: 'es-ES' }, ctx);
  const matchSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const timbre = await matcher.match(profile, { locale: 'es-ES', referenceEnvelope: spectralEnvelope(ref, 16000) }, ctx);
  const timbreMatchSeconds = (performance.now() - t1) / 1000;
  rows.push({ s, ref, plain: await speak(plain.settings, `${s.id}-plain`), timbre: await speak(timbre.settings, `${s.id}-timbre`), matchSeconds, timbreMatchSeconds, gains: timbre.settings.timbre });
}

// embeddings, standardized over every clip of the run, then cosine
const clips = rows.flatMap((r) => [r.ref, r.plain.samples, r.timbre.samples]);
const vecs = [];
for (const c of clips) vecs.push(Float64Array.from(await embedder.embed(c)));
const dim = vecs[0].length;
const mean = new Float64Array(dim);
const sd = new Float64Array(dim);
for (const v of vecs) for (let i = 0; i < dim; i++) mean[i] += v[i] / vecs.length;
for (const v of vecs) for (let i = 0; i < dim; i++) sd[i] += (v[i] - mean[i]) ** 2 / vecs.length;
const z = vecs.map((v) => v.map((x, i) => (x - mean[i]) / (Math.sqrt(sd[i]) || 1)));
const cos = (a, b) => {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
};
const refs = rows.map((_, i) => z[3 * i]);
const nearestIs = (v, own) => refs.map((r) => cos(v, r)).reduce((best, c, j, all) => (c > all[best] ? j : best), 0) === own;

console.log(`\nvoice paths on ${rows.length} real speakers (dubbed lines in Spanish; MFCC-statistics similarity, the quality report's figure where WeSpeaker is not installed)\n`);
console.log('speaker          set       similarity: matched  + timbre   nearest own ref: matched  + timbre');
const sums = { fit: [0, 0, 0, 0, 0], held: [0, 0, 0, 0, 0] };
for (const [i, r] of rows.entries()) {
  const a = cos(z[3 * i + 1], refs[i]);
  const b = cos(z[3 * i + 2], refs[i]);
  const na = nearestIs(z[3 * i + 1], i);
  const nb = nearestIs(z[3 * i + 2], i);
  const set = r.s.fit ? 'fit' : 'held';
  const t = sums[set];
  t[0] += a; t[1] += b; t[2] += na ? 1 : 0; t[3] += nb ? 1 : 0; t[4]++;
  console.log(`${r.s.id.padEnd(16)} ${(r.s.fit ? 'fit' : 'held out').padEnd(9)} ${a.toFixed(3).padStart(19)}  ${b.toFixed(3).padStart(8)}   ${String(na).padStart(22)}  ${String(nb).padStart(8)}`);
}
for (const [set, t] of Object.entries(sums)) if (t[4]) console.log(`${`mean (${set})`.padEnd(26)} ${(t[0] / t[4]).toFixed(3).padStart(19)}  ${(t[1] / t[4]).toFixed(3).padStart(8)}   ${`${t[2]}/${t[4]}`.padStart(22)}  ${`${t[3]}/${t[4]}`.padStart(8)}`);
const speech = rows.reduce((a, r) => a + r.plain.speechSeconds, 0);
const speechT = rows.reduce((a, r) => a + r.timbre.speechSeconds, 0);
console.log(`\nsynthesis time per second of speech: matched ${(rows.reduce((a, r) => a + r.plain.seconds, 0) / speech).toFixed(3)} s, + timbre ${(rows.reduce((a, r) => a + r.timbre.seconds, 0) / speechT).toFixed(3)} s`);
console.log(`matching per speaker: ${(rows.reduce((a, r) => a + r.matchSeconds, 0) / rows.length).toFixed(2)} s, with the timbre envelope ${(rows.reduce((a, r) => a + r.timbreMatchSeconds, 0) / rows.length).toFixed(2)} s`);
await engine.dispose();
await fsp.rm(dir, { recursive: true, force: true });
