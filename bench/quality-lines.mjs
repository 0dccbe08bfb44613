// The quality measurements after a one-line edit, on a speech timeline of `--minutes` (default 5)
// of English lines spoken by espeak-ng (two voices, one line every 5 s), en-US: back-transcription
// by pocketsphinx (when installed), MFCC speaker similarity against two reference clips, RMS per
// line, EBU R128 loudness (true peak) and probes of the AAC-encoded track.
//
// Times `measureQuality` three times through a per-line cache: every line (the first generate),
// then after one line in the middle is spoken anew (the re-dub: that line measured, the others
// from the cache), then the edited set with nothing cached (the full measure), and checks that the
// re-dub's per-line figures equal the full measure's (a line measured alone against the batch).
// Also times measureLoudness and the probes of the track on their own.
//
// Usage (after `npm run build`): node bench/quality-lines.mjs [--minutes 5]
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { silentLogger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { encodeAudio, probe, readWav, renderTimelineBuffer, runProcess, writeWav } from '@dub/media';
import { measureLoudness } from '@dub/mix';
import { measureQuality } from '@dub/pipeline';
import { asrEnginesFor } from '@dub/asr';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' } } });
const minutes = Number(values.minutes);
const SENTENCES = [
  'The weather today is sunny with a light breeze from the west.',
  'Please remember to bring your notebook to the meeting tomorrow.',
  'We found three old coins buried under the garden wall.',
  'The train leaves the station at half past seven every morning.',
  'She painted the kitchen a bright shade of yellow last summer.',
  'Our team finished the project two weeks ahead of schedule.',
  'The museum opens its new gallery to visitors next month.',
  'He cooked a simple dinner of rice and vegetables for everyone.',
];
const VOICES = { S1: ['en-us+m1', '30'], S2: ['en-us+f2', '70'] };
const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-bench-quality-'));
const seconds = (t0) => (performance.now() - t0) / 1000;

async function speak(file, text, speaker) {
  const [voice, pitch] = VOICES[speaker];
  await runProcess('espeak-ng', ['-v', voice, '-p', pitch, '-w', file, '--stdin'], { input: text });
  return readWav(file);
}

// the lines: one every 5 s, alternating speakers
const count = Math.floor((minutes * 60) / 5);
const lines = [];
for (let i = 0; i < count; i++) {
  const speaker = i % 2 ? 'S2' : 'S1';
  const text = SENTENCES[i % SENTENCES.length];
  const file = path.join(root, `line-${i}.wav`);
  const a = await speak(file, text, speaker);
  const start = i * 5 + 0.3;
  const len = a.channels[0].length / a.sampleRate;
  lines.push({ i, id: `seg-${String(i + 1).padStart(4, '0')}`, speaker, text, file, audio: a, start, end: start + len, key: `line-${i}-v1` });
}
const sr = lines[0].audio.sampleRate;
const duration = minutes * 60;
async function timeline(ls, file) {
  const buf = renderTimelineBuffer({ sampleRate: sr, channels: 1, frames: Math.round(duration * sr) }, ls.map((l) => ({ atFrame: Math.round(l.start * sr), audio: l.audio.channels })));
  await writeWav(file, { sampleRate: sr, channels: buf });
  const m4a = file.replace(/\.wav$/, '.m4a');
  await encodeAudio(file, m4a);
  return m4a;
}
const references = {};
for (const [sp, text] of [['S1', 'A reference clip of the first speaker reading a longer passage aloud.'], ['S2', 'A reference clip of the second speaker reading another passage aloud.']]) {
  references[sp] = path.join(root, `ref-${sp}.wav`);
  await speak(references[sp], text, sp);
}

const asrIds = await asrEnginesFor('en-US');
const asr = asrIds.includes('pocketsphinx') ? { engine: 'pocketsphinx' } : { engine: null, reason: 'pocketsphinx is not installed here' };
const env = { sessions: new SessionCache(), device: 'cpu', threads: 0, models: {}, tmpDir: root, media: {} };
const ctx = { logger: silentLogger };
const qualityLine = (l) => ({
  segment: { id: l.id, start: l.start, end: l.end, speaker: l.speaker, source_text: '', target_text: l.text },
  placement: { start: l.start, end: l.end },
  spokenText: l.text,
  shortening: null,
  fitted: { file: l.file, key: l.key, speechSeconds: l.end - l.start, speedFactor: 1, cutSeconds: 0 },
  regenerated: true,
});
function memoryCache() {
  const m = new Map();
  return { get: async (k) => m.get(JSON.stringify(k)), put: async (k, v) => void m.set(JSON.stringify(k), v) };
}
async function measure(ls, speechFile, m4a, store) {
  const t0 = performance.now();
  const r = await measureQuality(
    { locale: 'en-US', speechFile, sourceVideo: m4a, resultVideo: m4a, resultAudio: m4a, lines: ls.map(qualityLine), references, asr, similarity: { id: 'mfcc', embedding: 'mfcc', notApplicable: {} }, lineCache: { store, referenceKeys: { S1: 'ref-S1', S2: 'ref-S2' }, sampleRate: sr } },
    env,
    ctx,
  );
  return { seconds: seconds(t0), r };
}

const speech1 = path.join(root, 'speech-1.wav');
const m4a1 = await timeline(lines, speech1);
const cache = memoryCache();
const first = await measure(lines, speech1, m4a1, cache);

// the edit: the middle line says another sentence
const mid = Math.floor(count / 2);
const editedLine = { ...lines[mid], text: 'Nobody expected the quiet library to become so popular with students.', key: `line-${mid}-v2`, file: path.join(root, `line-${mid}-v2.wav`) };
editedLine.audio = await speak(editedLine.file, editedLine.text, editedLine.speaker);
editedLine.end = editedLine.start + editedLine.audio.channels[0].length / sr;
const edited = lines.map((l) => (l.i === mid ? editedLine : l));
const speech2 = path.join(root, 'speech-2.wav');
const m4a2 = await timeline(edited, speech2);
const redub = await measure(edited, speech2, m4a2, cache);
const full = await measure(edited, speech2, m4a2, memoryCache());

let differing = 0;
for (const l of edited) if (JSON.stringify(redub.r.lines[l.id]) !== JSON.stringify(full.r.lines[l.id])) differing++;

const tl = async (f) => {
  const t0 = performance.now();
  await f();
  return seconds(t0);
};
const loud = await tl(() => measureLoudness(m4a2));
const probes = await tl(() => Promise.all([probe(m4a2), probe(m4a2), probe(m4a2)]));

console.log(`\nquality measurements, ${minutes}-minute timeline, ${count} lines, en-US, back-transcription: ${asr.engine ?? `none (${asr.reason})`}, ${os.cpus().length} cores\n`);
console.log(`first generate (every line measured):  ${first.seconds.toFixed(2)} s  (${first.r.measuredLines.length} lines measured)`);
console.log(`re-dub (one line spoken anew):         ${redub.seconds.toFixed(2)} s  (${redub.r.measuredLines.length} measured: ${redub.r.measuredLines.join(', ')})  = ${((100 * redub.seconds) / first.seconds).toFixed(1)} % of the first`);
console.log(`full measure of the edited lines:      ${full.seconds.toFixed(2)} s  (${full.r.measuredLines.length} lines measured)`);
console.log(`per-line figures, re-dub vs full measure: ${differing} of ${edited.length} lines differ`);
console.log(`of which per generation: measureLoudness (ebur128 peak=true) of the ${minutes}-minute .m4a ${loud.toFixed(2)} s, three probes in parallel ${probes.toFixed(2)} s`);
await env.sessions.disposeAll();
await fsp.rm(root, { recursive: true, force: true });
