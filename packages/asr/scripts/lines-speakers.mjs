#!/usr/bin/env node
/**
 * Lines and speakers of recordings, as the prepare stage makes them: Silero VAD -> Whisper ->
 * diarize (estimated count, default mfcc engine). Prints per file the line count, line durations
 * (median, max), the speaker count and the line boundaries (with --bounds).
 *   node packages/asr/scripts/lines-speakers.mjs [--bounds] [--no-asr] [--before] file.wav...
 * --no-asr: one segment per VAD region, a placeholder word every 0.25 s, instead of Whisper (fast).
 * --before: also the rules before issue #26 (unnormalized BIC, ASR segments kept as lines), on the
 *   same VAD and transcript. --locale=es-ES: the transcript's locale (default en-US).
 */
import { detectSpeech, transcribe, diarize } from '@dub/asr';
import { SessionCache } from '@dub/onnx';

const args = process.argv.slice(2);
const bounds = args.includes('--bounds');
const noAsr = args.includes('--no-asr');
const withBefore = args.includes('--before');
const locale = args.find((a) => a.startsWith('--locale='))?.slice(9) ?? 'en-US';
const files = args.filter((a) => !a.startsWith('--'));
const sessions = new SessionCache();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
/** A segment over [start, end] with a placeholder word every 0.25 s (as lines-speakers.test.ts). */
function placeholder(start, end) {
  const words = [];
  for (let t = start, i = 0; t < end - 1e-9; t += 0.25, i++) words.push({ text: `w${i}`, start: t, end: Math.min(end, t + 0.25), confidence: 1 });
  return { start, end, text: words.map((w) => w.text).join(' '), words };
}
for (const file of files) {
  const t0 = Date.now();
  const speech = await detectSpeech(file, { sessions });
  const segments = noAsr
    ? speech.regions.map((r) => placeholder(r.start, r.end))
    : (await transcribe(file, { locale, speech, sessions })).segments;
  for (const before of withBefore ? [true, false] : [false]) {
    const d = await diarize(file, { speech, segments, sessions, locale, referenceClips: false, ...(before ? { bicReferenceSeconds: Infinity, lines: false } : {}) });
    const lens = d.segments.map((s) => s.end - s.start);
    const r2 = (x) => Math.round(x * 100) / 100;
    console.log(JSON.stringify({ file: file.split('/').pop(), rules: before ? 'before' : 'after', duration: r2(speech.duration), regions: speech.regions.length, asrSegments: segments.length, lines: d.segments.length, medianLine: r2(median(lens)), maxLine: r2(Math.max(...lens)), speakers: d.speakers.length, method: d.method, seconds: Math.round((Date.now() - t0) / 1000) }));
    if (bounds) console.log(d.segments.map((s) => `${s.start.toFixed(2)}-${s.end.toFixed(2)} ${s.speaker}`).join('\n'));
  }
}
sessions.disposeAll?.();
