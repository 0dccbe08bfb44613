/**
 * The quality report on real recordings, through prepare-asset, prepare-version and
 * generate-version with the offline engines:
 * - jfk.wav dubbed into English (en-US -> en-US through a reference SRT of the speech's words):
 *   the dubbed lines are transcribed again by Whisper (base q8, from npm: auto's choice) and
 *   scored against the script;
 * - talking-head-480.mp4 (a real person) en-US -> es-ES: every field, the Spanish lines
 *   back-transcribed by Whisper in Spanish, durations of the outputs against the source, no two
 *   lines at once. (pocketsphinx's back-transcription: packages/pipeline generate-quality-cache.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, QUALITY_REPORT_SCHEMA, QualityReportSchema, validate, type GenerateVersionJob, type PrepareAssetJob, type QualityReport, type VersionScript } from '@dub/core';
import { wordErrorRate } from '@dub/asr';
import { generateVersion, prepareAsset, prepareVersion } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { makeRuntime, MEDIA, videoFromWav, type TestRuntime } from './prepare-helpers.js';
import { describeWithMedia } from './support/media.js';

const translate = loadTranslateConfig({});
const JFK = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
/** The speech's words as a reference SRT, one cue per phrase at the phrases' times (Silero VAD regions of jfk.wav). */
const JFK_SRT = [
  [0.2, 2.3, 'And so my fellow Americans,'],
  [3.2, 4.4, 'ask not'],
  [5.3, 7.7, 'what your country can do for you,'],
  [8.1, 10.7, 'ask what you can do for your country.'],
]
  .map(([a, b, t], i) => `${i + 1}\n${srtTime(a as number)} --> ${srtTime(b as number)}\n${t}\n`)
  .join('\n');

function srtTime(s: number): string {
  const ms = Math.round(s * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
}

async function dub(rt: TestRuntime, assetId: string, upload: string, source: string, target: { locale: string; srt?: string }): Promise<{ report: QualityReport; script: VersionScript }> {
  await rt.store.putFile(blobKeys.sourceUpload(assetId), upload);
  const versionId = `ver_${assetId.slice(4)}`;
  const job: PrepareAssetJob = { v: 1, type: 'prepare-asset', job_id: `${assetId}-prep`, asset_id: assetId, locale: source, media: { blob: blobKeys.sourceUpload(assetId) }, versions: [{ version_id: versionId, dubbing_id: `dub_${assetId.slice(4)}`, ...target }] };
  const prepared = await prepareAsset(job, rt);
  await prepareVersion(prepared.versionJobs[0]!, rt, { translate });
  const gen: GenerateVersionJob = { v: 1, type: 'generate-version', job_id: `${assetId}-gen`, asset_id: assetId, version_id: versionId, locale: target.locale, mode: 'no_lips', script_key: blobKeys.script(versionId), generation: 1, options: {} };
  const r = await generateVersion(gen, rt, { translate });
  const stored = JSON.parse((await rt.store.getBuffer(blobKeys.qualityReport(versionId, 1))).toString('utf8')) as QualityReport;
  expect(stored).toEqual(r.report);
  validate(QualityReportSchema, stored, 'quality report');
  const script = JSON.parse((await rt.store.getBuffer(blobKeys.script(versionId))).toString('utf8')) as VersionScript;
  return { report: stored, script };
}

/** No two placed lines overlap unless their source segments did. */
function expectNoOverlapUnlessSource(report: QualityReport): void {
  const s = report.segments;
  for (let i = 0; i + 1 < s.length; i++) {
    const sourceOverlap = s[i + 1]!.slot.start < s[i]!.slot.end;
    expect(s[i]!.next!.source_overlap, s[i]!.id).toBe(sourceOverlap);
    if (!sourceOverlap) expect(s[i]!.next!.gap_ms, s[i]!.id).toBeGreaterThanOrEqual(0);
    if (!sourceOverlap) expect(s[i + 1]!.placed.start, s[i]!.id).toBeGreaterThanOrEqual(s[i]!.placed.end - 0.0005);
  }
}

describeWithMedia(['jfk.wav'], 'quality report: jfk.wav dubbed into English, measured by Whisper', () => {
  let rt: TestRuntime;
  beforeAll(() => void (rt = makeRuntime()));
  afterAll(async () => {
    await rt.sessions.disposeAll();
    fs.rmSync(rt.dir, { recursive: true, force: true });
  });

  it('every dubbed line is transcribed again in en-US and scored against the words it speaks', async () => {
    const video = videoFromWav(path.join(MEDIA, 'jfk.wav'), path.join(rt.dir, 'jfk.mp4'));
    const { report, script } = await dub(rt, 'ast_qjfk', video, 'en-US', { locale: 'en-US', srt: JFK_SRT });
    expect(report.target_locale).toBe('en-US');
    expect(script.translation_engine).toBe('reference_srt');
    expect(report.segments.map((s) => s.text).join(' ').replace(/\s+/g, ' ')).toBe(JFK);
    let words = 0;
    for (const s of report.segments) {
      const bt = s.back_transcription;
      expect(bt.engine, s.id).toBe('whisper');
      expect(bt.reason).toBeUndefined();
      expect(typeof bt.text).toBe('string');
      // the figure is the word error rate of what Whisper heard against what the line says
      expect(bt.wer, s.id).toBe(Math.round(wordErrorRate(s.spoken_text, bt.text!).wer * 1000) / 1000);
      expect(s.flags.includes('wer'), s.id).toBe(bt.wer! > 0.3);
      words += bt.text!.split(' ').filter(Boolean).length;
    }
    // Whisper hears words in the synthesized English
    expect(words).toBeGreaterThan(5);
    const all = wordErrorRate(JFK, report.segments.map((s) => s.back_transcription.text).join(' ')).wer;
    expect(all).toBeLessThan(0.8);
    expect(report.summary.wer).toBe(report.segments.filter((s) => s.flags.includes('wer')).length);
    expect(report.engines.asr).toMatchObject({ id: 'whisper', label: 'Whisper base q8', model: 'encoder_model_quantized.onnx' });
  }, 600_000);
});

describeWithMedia(['talking-head-480.mp4'], 'quality report: a real talking head en-US -> es-ES', () => {
  let rt: TestRuntime;
  let report: QualityReport;
  beforeAll(async () => {
    rt = makeRuntime();
    ({ report } = await dub(rt, 'ast_qhead', path.join(MEDIA, 'talking-head-480.mp4'), 'en-US', { locale: 'es-ES' }));
  }, 900_000);
  afterAll(async () => {
    await rt.sessions.disposeAll();
    fs.rmSync(rt.dir, { recursive: true, force: true });
  });

  it('has every field for every line: placement, speed, overflow and its resolution, loudness, similarity, back-transcription in Spanish', () => {
    expect(report).toMatchObject({ schema: QUALITY_REPORT_SCHEMA, source_locale: 'en-US', target_locale: 'es-ES', voice_over: false });
    expect(report.segments.length).toBeGreaterThan(2);
    // what Whisper heard is Spanish, close to what the lines say (a loose bound, not fitted)
    const heard = report.segments.map((s) => s.back_transcription.text ?? '').join(' ');
    expect(wordErrorRate(report.segments.map((s) => s.spoken_text).join(' '), heard).wer, heard).toBeLessThan(0.8);
    for (const s of report.segments) {
      expect(s.natural_seconds, s.id).toBeGreaterThan(0);
      expect(s.speech_seconds, s.id).toBeGreaterThan(0);
      // natural_seconds is the line at its pace (the speaker-matched rate input): at the voice's default rate it is natural_seconds x pace
      expect(s.speed_factor, s.id).toBeCloseTo((s.natural_seconds * (s.articulation?.pace ?? 1)) / s.speech_seconds, 1);
      expect(s.placed.end, s.id).toBeGreaterThan(s.placed.start);
      expect(s.overflow_ms, s.id).toBe(Math.max(0, Math.round((s.placed.end - s.slot.end) * 1000)));
      expect(s.flags.includes('overflow'), s.id).toBe(s.overflow_ms > 0);
      expect(s.flags.includes('speed'), s.id).toBe(s.speed_factor > 1.25);
      // over the cap only when the line had no room: every other resolution keeps the speed at the cap (a line that borrowed in its turn too)
      if (['fits', 'used_gap_after', 'used_gap_before', 'borrowed'].includes(s.resolution)) expect(s.speed_factor, s.id).toBeLessThanOrEqual(1.251);
      if (s.resolution === 'fits') expect(s.overflow_ms, s.id).toBe(0);
      // shortening is asked only of a line that does not fit even with the silence around it (or the time of its turn)
      if (['fits', 'used_gap_after', 'used_gap_before', 'borrowed'].includes(s.resolution)) expect(s.shortening, s.id).toBeNull();
      else if (s.resolution !== 'truncated') expect(s.shortening, s.id).toMatchObject({ engine: 'apertium', attempted: false });
      expect(s.loudness.rms_dbfs!, s.id).toBeLessThan(0);
      expect(s.loudness.rms_dbfs!, s.id).toBeGreaterThan(-60);
      // Whisper decodes the Spanish lines in Spanish (BACK_TRANSCRIPTION_WHISPER)
      const bt = s.back_transcription;
      expect(bt.engine, s.id).toBe('whisper');
      expect(bt.wer, s.id).toBe(Math.round(wordErrorRate(s.spoken_text, bt.text!).wer * 1000) / 1000);
      expect(s.flags.includes('wer'), s.id).toBe(bt.wer! > 0.3);
      expect(s.speaker_similarity).toMatchObject({ engine: 'mfcc', kind: 'mfcc_stats_cosine', threshold: null });
      expect(Math.abs(s.speaker_similarity.cosine!), s.id).toBeLessThanOrEqual(1);
    }
    expectNoOverlapUnlessSource(report);
  });

  it('per version: loudness of the dubbed track, durations against the source within a frame, stages, engines, speakers, counts', () => {
    expect(Math.abs(report.loudness.integrated_lufs! - -16)).toBeLessThan(1.5);
    expect(report.loudness.true_peak_dbtp!).toBeLessThanOrEqual(-1);
    const frame = 1 / 25;
    expect(report.durations.source.container!).toBeGreaterThan(33);
    for (const k of ['result_video', 'result_video_stream', 'result_audio'] as const) expect(Math.abs(report.durations.diff_ms[k]!) / 1000, k).toBeLessThanOrEqual(frame + 0.001);
    expect(report.stages.map((s) => s.stage)).toEqual(['source', 'voices', 'synthesis', 'timeline', 'background', 'mix', 'audio', 'video', 'quality', 'publish']);
    expect(Object.keys(report.engines)).toEqual(['separation', 'vad', 'asr', 'speakers', 'translation', 'tts', 'voice_conversion', 'time_stretch']);
    expect(report.engines.asr!.id).toBe('whisper');
    expect(report.speakers.method).toBe('bic');
    expect(report.speakers.found.length).toBeGreaterThan(0);
    for (const sp of report.speakers.found) expect(sp.voice).toBe('matched');
    expect(report.speakers.found.reduce((a, sp) => a + sp.segments, 0)).toBe(report.segments.length);
    for (const adj of report.speakers.adjustments) expect(report.speakers.found.map((f) => f.id)).toContain(adj.into);
    const count = (f: string) => report.segments.filter((s) => (s.flags as string[]).includes(f)).length;
    expect(report.summary).toEqual({
      segments: report.segments.length,
      flagged: report.segments.filter((s) => s.flags.length > 0).length,
      speed: count('speed'),
      overflow: count('overflow'),
      wer: count('wer'),
      rate: count('rate'),
      similarity: null,
      forced: report.segments.filter((s) => ['sped_past_cap', 'delayed_next', 'overlaps_next', 'truncated'].includes(s.resolution)).length,
    });
  });
});
