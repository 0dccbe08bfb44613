/**
 * Only speech is replaced (issue 24 item 2): the source's audio outside the speech stays in the
 * dub at its level, through prepare-asset, prepare-version and generate-version, whatever the
 * background check decides (and whether or not a separation model runs).
 *
 * The source is built here, 18 s at 44.1 kHz stereo:
 *   0-5 s     a music intro (music-coffee.wav at -34 dBFS RMS, as in the issue)
 *   5-8 s     line 1 (voice-ref-a.mp3, 1-4 s)
 *   8-10 s    the quiet music bed alone (music-coffee at -46 dBFS RMS, under everything)
 *   10-11.5 s generated effects: three 1 kHz beeps peaking at -6 dBFS and a noise burst
 *   12-15 s   line 2 (voice-ref-a.mp3, 8-11 s)
 *   15-18 s   a music outro (-34 dBFS)
 * By default no separation model runs (separation engine none: what the issue saw when the check
 * decided there was no background to separate), which keeps the test short; the model's path is
 * covered with a stand-in engine in @dub/separation's keep-outside-speech.test.ts, and
 * DUB_KEEP_TEST_SEPARATION=auto (or htdemucs, htdemucs-int8) runs this file with the real model
 * (minutes on 2 cores: HTDemucs runs on all 18 s).
 * The speech and the translation come as SRTs (source_srt and the version's srt), so the lines
 * sit where they were placed; the dubbed lines are short, so they end well inside their slots.
 * Held out: voice-ref-a.mp3 was not among the recordings the background check's thresholds were
 * fitted on (two-speakers-call.wav, jfk.wav and their mixes with music-coffee.wav); the keep
 * parameters (0.1 s pad, 0.1 s fade, 0.5 s join) were not fitted on any recording.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { blobKeys, QualityReportSchema, TranscriptSchema, validate, type GenerateVersionJob, type PrepareAssetJob, type QualityReport, type Transcript } from '@dub/core';
import { readWav, runFfmpeg, writeWav } from '@dub/media';
import { generateVersion, prepareAsset, prepareVersion } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { makeRuntime, MEDIA, videoFromWav, type TestRuntime } from './prepare-helpers.js';
import { describeWithMedia } from './support/media.js';

const SEPARATION = (process.env.DUB_KEEP_TEST_SEPARATION ?? 'none') as 'none' | 'auto' | 'htdemucs' | 'htdemucs-int8';
const RATE = 44100;
const SECONDS = 18;
const LINES = [
  { at: 5, from: 1, to: 4, source: 'Well this is the first thing I wanted to say.', target: 'Hola.' },
  { at: 12, from: 8, to: 11, source: 'And here is the second thing for you.', target: 'Adiós.' },
];
/** Spans without speech in the source, at least 0.4 s from it: what they hold, and where. */
const KEPT = [
  { what: 'music intro', start: 0.2, end: 4.5 },
  { what: 'quiet music bed', start: 8.4, end: 9.6 },
  { what: 'effects', start: 10, end: 11.5 },
  { what: 'music outro', start: 15.5, end: 17.8 },
];

const dbfs = (x: Float32Array, a: number, b: number, rate: number): number => {
  const s = x.subarray(Math.round(a * rate), Math.round(b * rate));
  return 10 * Math.log10(s.reduce((t, v) => t + v * v, 0) / Math.max(1, s.length) + 1e-20);
};

function setRms(x: Float32Array, db: number): Float32Array {
  const now = Math.sqrt(x.reduce((t, v) => t + v * v, 0) / x.length);
  const g = 10 ** (db / 20) / now;
  return x.map((v) => v * g);
}

/** Correlation of two signals over [a, b) seconds (same rate). */
function correlation(x: Float32Array, y: Float32Array, a: number, b: number, rate: number): number {
  let xy = 0;
  let xx = 0;
  let yy = 0;
  for (let i = Math.round(a * rate); i < Math.round(b * rate); i++) {
    xy += x[i]! * y[i]!;
    xx += x[i]! * x[i]!;
    yy += y[i]! * y[i]!;
  }
  return xy / Math.sqrt(xx * yy + 1e-30);
}

function srt(cues: { start: number; end: number; text: string }[]): string {
  const t = (s: number) => `00:00:${String(Math.floor(s)).padStart(2, '0')},${String(Math.round((s % 1) * 1000)).padStart(3, '0')}`;
  return cues.map((c, i) => `${i + 1}\n${t(c.start)} --> ${t(c.end)}\n${c.text}\n`).join('\n');
}

/** The source described above: its samples (mono, both channels alike) and a video with it as its audio. */
async function buildSource(dir: string): Promise<{ source: Float32Array; video: string }> {
  const voiceWav = path.join(dir, 'voice.wav');
  const musicWav = path.join(dir, 'music.wav');
  await runFfmpeg(['-i', path.join(MEDIA, 'voice-ref-a.mp3'), '-af', 'pan=mono|c0=0.5*c0+0.5*c1', '-ar', String(RATE), '-c:a', 'pcm_f32le', '-f', 'wav', voiceWav]);
  await runFfmpeg(['-i', path.join(MEDIA, 'music-coffee.wav'), '-ac', '1', '-ar', String(RATE), '-c:a', 'pcm_f32le', '-f', 'wav', musicWav]);
  const voice = (await readWav(voiceWav)).channels[0]!;
  const music = (await readWav(musicWav)).channels[0]!;
  const n = SECONDS * RATE;
  const mix = new Float32Array(n);
  const add = (x: Float32Array, at: number) => mix.set(x.map((v, i) => v + (mix[at + i] ?? 0)).subarray(0, Math.max(0, n - at)), at);
  const fade = (x: Float32Array, s = 0.02) => x.map((v, i) => v * Math.min(1, i / (s * RATE), (x.length - 1 - i) / (s * RATE)));
  add(setRms(music.slice(20 * RATE, 20 * RATE + n), -46), 0); // the bed
  add(fade(setRms(music.slice(0, 5 * RATE), -34)), 0); // intro
  add(fade(setRms(music.slice(40 * RATE, 43 * RATE), -34)), 15 * RATE); // outro
  for (const l of LINES) add(fade(setRms(voice.slice(l.from * RATE, l.to * RATE), -18)), l.at * RATE);
  // effects: three beeps (1 kHz, 150 ms, peak -6 dBFS) and a 300 ms noise burst
  for (const b of [10.1, 10.4, 10.7]) add(fade(Float32Array.from({ length: 0.15 * RATE }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 1000 * i) / RATE)), 0.005), Math.round(b * RATE));
  let seed = 7;
  const noise = Float32Array.from({ length: 0.3 * RATE }, () => ((seed = (seed * 1103515245 + 12345) >>> 0), seed / 2 ** 32 - 0.5));
  add(fade(setRms(noise, -24), 0.05), Math.round(11.05 * RATE));
  const wav = path.join(dir, 'source.wav');
  await writeWav(wav, { sampleRate: RATE, channels: [mix, mix] }, { format: 'float32' });
  const video = videoFromWav(wav, path.join(dir, 'source.mp4'));
  return { source: mix, video };
}

describeWithMedia(['voice-ref-a.mp3', 'music-coffee.wav'], 'the source outside speech stays in the dub', () => {
  let rt: TestRuntime;
  let source: Float32Array;
  let out: Float32Array;
  let report: QualityReport;
  let transcript: Transcript;
  let video: string;

  beforeAll(async () => {
    rt = makeRuntime();
    ({ source, video } = await buildSource(rt.dir));
    const asset = 'ast_keep';
    await rt.store.putFile(blobKeys.sourceUpload(asset), video);
    const cues = LINES.map((l) => ({ start: l.at, end: l.at + l.to - l.from }));
    const job: PrepareAssetJob = {
      v: 1,
      type: 'prepare-asset',
      job_id: 'keep-prep',
      asset_id: asset,
      locale: 'en-US',
      media: { blob: blobKeys.sourceUpload(asset) },
      source_srt: srt(cues.map((c, i) => ({ ...c, text: LINES[i]!.source }))),
      speakers_count: 1,
      versions: [{ version_id: 'ver_keep', dubbing_id: 'dub_keep', locale: 'es-ES', srt: srt(cues.map((c, i) => ({ ...c, text: LINES[i]!.target }))) }],
    };
    // No separation model by default (the issue's case: the check decides none), the fast engines: the test is about the mix, not the voices.
    const prepared = await prepareAsset(job, rt, { separationEngine: SEPARATION, speakerEngine: 'mfcc' });
    transcript = validate<Transcript>(TranscriptSchema, prepared.transcript, 'transcript');
    const translate = loadTranslateConfig({});
    await prepareVersion(prepared.versionJobs[0]!, rt, { translate });
    const gen: GenerateVersionJob = { v: 1, type: 'generate-version', job_id: 'keep-gen', asset_id: asset, version_id: 'ver_keep', locale: 'es-ES', mode: 'no_lips', script_key: blobKeys.script('ver_keep'), generation: 1, options: {} };
    const r = await generateVersion(gen, rt, { translate, voiceConversion: 'none', tts: { engine: 'espeak-ng' }, quality: { asr: 'pocketsphinx', speaker: 'mfcc' } });
    report = validate<QualityReport>(QualityReportSchema, r.report, 'quality report');
    console.log(rt.events.filter((e) => e.type === 'stage_done').map((e) => `${(e as { stage: string }).stage} ${((e as { seconds?: number }).seconds ?? 0).toFixed(1)}`).join(', '));
    // the dubbed track as delivered, decoded back at the source's rate
    const dubbed = path.join(rt.dir, 'dubbed.wav');
    // (both channels are the same: the left one; ffmpeg's stereo-to-mono downmix would add 3 dB)
    await runFfmpeg(['-i', rt.store.localPath(blobKeys.resultAudio('ver_keep', 1))!, '-ar', String(RATE), '-c:a', 'pcm_f32le', '-f', 'wav', dubbed]);
    out = (await readWav(dubbed)).channels[0]!;
  }, SEPARATION === 'none' ? 300_000 : 1_800_000);

  afterAll(async () => {
    if (!rt) return;
    await rt.sessions.disposeAll();
    fs.rmSync(rt.dir, { recursive: true, force: true });
  });

  it('intro, bed between lines, effects and outro come out at the source level (±3 dB), as the source itself', () => {
    const gain = report.loudness.normalization?.gain_db ?? 0;
    const rows = KEPT.map((k) => ({ ...k, source: dbfs(source, k.start, k.end, RATE), dub: dbfs(out, k.start, k.end, RATE), corr: correlation(source, out, k.start, k.end, RATE) }));
    console.log(`mode ${transcript.separation?.mode}, engine ${transcript.separation?.engine}, mix gain ${gain} dB\n${rows.map((r) => `${r.what}: source ${r.source.toFixed(1)} dBFS, dub ${r.dub.toFixed(1)} dBFS, correlation ${r.corr.toFixed(3)}`).join('\n')}`);
    for (const r of rows) {
      expect(Math.abs(r.dub - r.source), r.what).toBeLessThanOrEqual(3);
      // the source's own audio (not a model's rendering of it or something else at that level)
      expect(r.corr, r.what).toBeGreaterThan(0.9);
    }
  });

  it("the speech spans hold the dubbed speech, not the source's", () => {
    for (const l of LINES) {
      const span = { start: l.at + 0.1, end: l.at + l.to - l.from - 0.1 };
      // the source line is gone: what is left of it correlates with nothing
      expect(Math.abs(correlation(source, out, span.start, span.end, RATE)), `line at ${l.at} s`).toBeLessThan(0.2);
      // the dubbed line sounds there
      expect(dbfs(out, l.at, l.at + 1, RATE), `line at ${l.at} s`).toBeGreaterThan(-35);
    }
  });

  it('the transcript and the quality report say what was kept', () => {
    const kept = transcript.separation!.kept!;
    expect(kept.outside_speech).toBe('source');
    expect(kept.under_speech).toBe(transcript.separation!.mode === 'none' ? 'silence' : 'model');
    if (SEPARATION === 'none') expect(transcript.separation).toMatchObject({ engine: 'none', mode: 'none', background: false, model_seconds: 0 });
    // both lines replaced, the rest kept: about 18 - 2 x 3.2 s
    expect(kept.replaced.length).toBeGreaterThanOrEqual(2);
    expect(kept.kept_seconds).toBeGreaterThan(10);
    expect(report.background).toMatchObject({ source: 'source_outside_speech', kept_seconds: kept.kept_seconds, replaced_seconds: kept.replaced_seconds });
    expect(report.engines.separation!.reason).toMatch(/outside speech/);
  });

  it('the background track is the source outside speech (±1 dB, the same samples), silence in the speech without a model', async () => {
    const bg = (await readWav(rt.store.localPath(transcript.tracks!.background)!)).channels[0]!;
    for (const k of KEPT) {
      const [src, got] = [dbfs(source, k.start, k.end, RATE), dbfs(bg, k.start, k.end, RATE)];
      expect(Math.abs(got - src), k.what).toBeLessThanOrEqual(1);
      expect(correlation(source, bg, k.start, k.end, RATE), k.what).toBeGreaterThan(0.99);
    }
    // the replaced regions cover both lines; without a model they hold silence
    const replaced = transcript.separation!.kept!.replaced;
    if (transcript.separation!.mode === 'none') for (const r of replaced) expect(dbfs(bg, r.start + 0.01, r.end - 0.01, RATE)).toBe(-200);
    for (const l of LINES) expect(replaced.some((r) => r.start <= l.at + 0.3 && r.end >= l.at + l.to - l.from - 0.3), `line at ${l.at} s`).toBe(true);
  });
});
