// Back-transcription of a generation's dubbed lines by Whisper (the quality stage's ASR), decoded
// three ways on the same speech timeline, interleaved so that load on the machine hits each alike:
//   openai:   openai/whisper's defaults as source transcription runs them (language detection on,
//             224 tokens per 30 s window, temperature fallback 0.2 .. 1.0 with best of 5), the
//             timeline read in 30 s chunks;
//   chunks:   what the quality stage ran before the lines were packed: the target language forced,
//             15 tokens per second + 8, openai's fallback, the timeline read in 30 s chunks (one
//             encoder pass per 30 s of the timeline, pauses included);
//   packed:   what it runs now (BACK_TRANSCRIPTION_WHISPER of @dub/pipeline): the lines' speech
//             packed into 30 s windows (one encoder pass per 30 s of speech), fallback at 0.4 and
//             0.8 with one sample each, one call per decode unit (decodeUnits).
// Prints per variant the CPU seconds (user + system of this process) and wall seconds of decoding
// every line, the encoder passes, the mean WER against the lines' text, and the texts.
//
// Usage (after `npm run build`, on the output folder of a `dub run`):
//   node bench/back-transcription.mjs --out dub-output --locale es-ES [--rounds 2]
// It reads <out>/<locale>/report.json (placements and texts) and the run's speech timeline
// (<out>/.work/blobs/.../timeline-*/speech.wav, the newest).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { SessionCache } from '@dub/onnx';
import { transcribe, withSpeechAudio, wordErrorRate } from '@dub/asr';
import { BACK_TRANSCRIPTION_WHISPER, decodeUnits, wordsByLine, wordsOverLines } from '@dub/pipeline';

const { values } = parseArgs({ options: { out: { type: 'string' }, locale: { type: 'string', default: 'es-ES' }, rounds: { type: 'string', default: '2' } } });
if (!values.out) throw new Error('--out DIR (the output folder of a dub run) is needed');
const report = JSON.parse(fs.readFileSync(path.join(values.out, values.locale, 'report.json'), 'utf8'));
const timelines = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name === 'speech.wav' && /\/timeline-[0-9a-f]+$/.test(d)) timelines.push(p);
  }
})(path.join(values.out, '.work'));
if (!timelines.length) throw new Error(`no timeline-*/speech.wav under ${values.out}/.work`);
const timeline = timelines.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];

const lines = report.segments
  .filter((s) => s.back_transcription?.engine)
  .map((s) => ({ segment: { id: s.id }, placement: { start: s.placed.start, end: s.placed.end }, spokenText: s.spoken_text ?? s.target_text, fitted: { file: '', speechSeconds: 0, speedFactor: 1, cutSeconds: 0 } }));
const units = decodeUnits(lines, 'whisper', 30);
const speechSeconds = lines.reduce((a, l) => a + l.placement.end - l.placement.start, 0);
console.log(`${timeline}: ${lines.length} lines, ${speechSeconds.toFixed(1)} s placed, ${units.length} decode unit(s), ${values.locale}`);

const CHUNKS = { detectLanguage: false, maxTokensPerSecond: 15 };
const VARIANTS = {
  openai: { calls: 'one', whisper: {} },
  chunks: { calls: 'one', whisper: CHUNKS },
  packed: { calls: 'units', whisper: BACK_TRANSCRIPTION_WHISPER },
};
const sessions = new SessionCache();
const results = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, { cpu: [], wall: [], windows: 0, texts: undefined }]));
const placed = (spans) => ({ engine: 'placement', duration: Math.max(...spans.map((s) => s.end)), frameSeconds: 0.032, probabilities: new Float32Array(0), regions: spans.map((s) => ({ start: s.start, end: s.end, probability: 1 })) });
const spansOf = (ls) => ls.map((l) => ({ id: l.segment.id, start: l.placement.start, end: l.placement.end }));

async function run(name) {
  const v = VARIANTS[name];
  const texts = new Map();
  // encoder passes: the windows the engine decodes (it reports its progress once at the start and once per window)
  let windows = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await withSpeechAudio(timeline, {}, {}, async (audio) => {
    for (const ls of v.calls === 'one' ? [lines] : units.map((u) => u.lines)) {
      const spans = spansOf(ls);
      let words = [];
      let seen = 0;
      try {
        const t = await transcribe(audio, { locale: values.locale, engine: 'whisper', speech: placed(spans), sessions, whisper: v.whisper }, { onProgress: (p) => p.stage === 'asr' && (seen += 1) });
        words = wordsOverLines(t.segments, spans);
      } catch (e) {
        if (e.code !== 'empty_transcript') throw e;
      }
      windows += Math.max(0, seen - 1);
      for (const [id, w] of wordsByLine(spans, words)) texts.set(id, w.join(' '));
    }
  });
  const c = process.cpuUsage(c0);
  results[name].cpu.push((c.user + c.system) / 1e6);
  results[name].wall.push((performance.now() - t0) / 1000);
  results[name].windows = windows;
  results[name].texts = texts;
}

// warm the sessions (model load) outside the timings
await run('packed');
for (const r of Object.values(results)) (r.cpu.length = 0), (r.wall.length = 0);
for (let i = 0; i < Number(values.rounds); i++) for (const name of Object.keys(VARIANTS)) await run(name);
await sessions.disposeAll();

const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
for (const [name, r] of Object.entries(results)) {
  const wers = lines.map((l) => wordErrorRate(l.spokenText, r.texts.get(l.segment.id) ?? '').wer);
  console.log(`${name.padEnd(10)} cpu ${r.cpu.map((x) => x.toFixed(1)).join(' / ')} s, wall ${r.wall.map((x) => x.toFixed(1)).join(' / ')} s, ${r.windows} windows, mean WER ${mean(wers).toFixed(3)}`);
}
for (const l of lines) {
  console.log(`  ${l.segment.id} ${l.placement.start.toFixed(2)}-${l.placement.end.toFixed(2)} said: ${l.spokenText}`);
  for (const name of Object.keys(VARIANTS)) console.log(`    ${name.padEnd(10)} heard: ${results[name].texts.get(l.segment.id) ?? ''}`);
}
