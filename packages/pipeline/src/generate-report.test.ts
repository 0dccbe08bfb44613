/**
 * The quality report and the placement of overlong lines, end to end on a generated edge case: a
 * 6 s video whose script gives a Spanish line about four times too long for its 0.8 s slot, then
 * another long line right after it (two adjacent long lines), then a short one. es-ES has no
 * speech recognition engine here, so back-transcription is null with the reason. A segment with
 * an unknown speaker fails the generation naming it.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blobKeys,
  FsBlobStore,
  loadConfig,
  QUALITY_REPORT_SCHEMA,
  QualityReportSchema,
  silentLogger,
  validate,
  type EmittedEvent,
  type GenerateVersionJob,
  type JobRuntime,
  type QualityReport,
  type Transcript,
  type VersionScript,
} from '@dub/core';
import { wordErrorRate } from '@dub/asr';
import { SessionCache } from '@dub/onnx';
import { readWav, renderTimelineBuffer, runFfmpeg, runProcess, writeWav } from '@dub/media';
import { loadTranslateConfig } from '@dub/translate';
import { detectStretchers } from '@dub/voice';
import { ArtifactCache } from './artifacts.js';
import { generateVersion } from './generate.js';
import { stretchRecord } from './generate-synthesis.js';

const ASSET = 'ast_reporttest';
const VERSION = 'ver_reporttest';
const DURATION = 6;
const SOURCE = [
  { id: 'seg-0001', start: 0.4, end: 1.2, speaker: 'S1', voice: 'en-us+m1', pitch: '20', en: 'Hello everyone.', es: 'Hola a todos, bienvenidos al programa de esta noche en directo.' },
  { id: 'seg-0002', start: 1.3, end: 2.3, speaker: 'S2', voice: 'en-us+f2', pitch: '70', en: 'Thank you.', es: 'Gracias, es un placer enorme estar aquí con todos vosotros.' },
  { id: 'seg-0003', start: 3.8, end: 5.0, speaker: 'S1', voice: 'en-us+m1', pitch: '20', en: 'Yes.', es: 'Sí.' },
];

let dir: string;
let store: FsBlobStore;
let script: VersionScript;

function runtime(events: EmittedEvent[]): JobRuntime {
  return {
    store,
    ctx: { logger: silentLogger, onProgress: () => undefined },
    config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp') }),
    sessions: new SessionCache(),
    emit: async (e) => void events.push(e),
    enqueue: async () => undefined,
    attempt: 1,
  };
}

function job(generation: number): GenerateVersionJob {
  return { v: 1, type: 'generate-version', job_id: `job-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'es-ES', mode: 'no_lips', script_key: blobKeys.script(VERSION), generation, options: {} };
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'generate-report-test-'));
  await fsp.mkdir(path.join(dir, 'tmp'));
  store = new FsBlobStore(path.join(dir, 'store'));
  const clips = [];
  for (const [i, l] of SOURCE.entries()) {
    const f = path.join(dir, `line-${i}.wav`);
    await runProcess('espeak-ng', ['-v', l.voice, '-p', l.pitch, '-w', f, '--stdin'], { input: l.en });
    clips.push({ file: f, audio: await readWav(f) });
  }
  const sr = clips[0]!.audio.sampleRate;
  const speech = renderTimelineBuffer({ sampleRate: sr, channels: 1, frames: Math.round(DURATION * sr) }, SOURCE.map((l, i) => ({ atFrame: Math.round(l.start * sr), audio: clips[i]!.audio.channels })));
  const speechFile = path.join(dir, 'speech.wav');
  await writeWav(speechFile, { sampleRate: sr, channels: speech });
  const sourceFile = path.join(dir, 'source.mp4');
  await runFfmpeg([
    '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=25:duration=${DURATION}`, '-i', speechFile,
    '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-t', String(DURATION), sourceFile,
  ]);
  await store.putFile(blobKeys.sourceVideo(ASSET), sourceFile);
  // each speaker's reference clip: their own line (as prepare-asset stores them)
  const refs: Record<string, string> = {};
  for (const [i, l] of SOURCE.entries()) {
    if (refs[l.speaker]) continue;
    refs[l.speaker] = blobKeys.artifact(ASSET, 'speakers', 'test', `reference-${l.speaker}.wav`);
    await store.putFile(refs[l.speaker]!, clips[i]!.file);
  }
  const cache = new ArtifactCache(store, ASSET, { tmpDir: dir });
  const separated = await cache.run('separation', { mix: 'report-test' }, { logger: silentLogger }, async (out) => {
    const bg = path.join(out.dir, 'background.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${DURATION}:c=pink:a=0.005:r=44100`, '-ac', '2', bg]);
    out.addFile('background.wav', bg);
    out.addFile('speech.wav', speechFile);
    return { engine: 'test' };
  });
  const transcript: Transcript = {
    v: 1, locale: 'en-US', engine: 'test', duration: DURATION,
    speakers: [{ id: 'S1', reference_key: refs.S1!, speech_seconds: 2 }, { id: 'S2', reference_key: refs.S2!, speech_seconds: 1 }],
    segments: SOURCE.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: l.speaker, text: l.en, words: [] })),
    tracks: { speech: separated.files['speech.wav']!, background: separated.files['background.wav']! },
    speaker_count_method: 'bic',
    speaker_adjustments: [{ kind: 'folded', into: 'S1', windows: 1, share: 0.05, reason: 'a cluster with 5% of the speech windows, under the 10% minimum share of a speaker (minSpeakerShare), was folded into the nearest speaker' }],
  };
  await store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript));
  script = {
    v: 1, asset_id: ASSET, version_id: VERSION, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'apertium',
    speakers: transcript.speakers,
    segments: SOURCE.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: l.speaker, source_text: l.en, target_text: l.es })),
    updated_at: new Date().toISOString(),
  };
  await store.put(blobKeys.script(VERSION), JSON.stringify(script));
}, 120_000);

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('the quality report of a generation', () => {
  let report: QualityReport;
  let event: Extract<EmittedEvent, { type: 'version_generated' }>;

  it('places overlong lines without overlap and records how; es-ES: back-transcribed by Whisper in Spanish', async () => {
    const events: EmittedEvent[] = [];
    // at the voice's default rate (speaker pace off): the placement figures below were written for it; generate-pace.test.ts tests the pace
    const result = await generateVersion(job(1), runtime(events), { translate: loadTranslateConfig({}), tts: { engine: 'espeak-ng' }, synthesis: { speakerPace: false } });
    event = events.find((e): e is typeof event => e.type === 'version_generated')!;
    report = JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, 1))).toString('utf8')) as QualityReport;
    expect(result.report).toEqual(report);
    expect(validate(QualityReportSchema, report)).toBeTruthy();
    expect(report).toMatchObject({ schema: QUALITY_REPORT_SCHEMA, asset_id: ASSET, version_id: VERSION, generation: 1, source_locale: 'en-US', target_locale: 'es-ES', mode: 'no_lips', voice_over: false });
    expect(report.thresholds).toEqual({ speed_factor: 1.25, overflow_ms: 0, wer: 0.3, similarity: null, similarity_engine: 'mfcc', rate_ratio: 1.25, rate_ratio_limit: 1.6 });
    expect(report.placement).toMatchObject({ speed_cap: 1.25, speed_limit: 1.6, voice_over_delay_s: 0, shortening: { engine: 'apertium', possible: true, method: 'condensed' }, turns: { pause_s: 0.3, shift_s: 1 } });
    // placed by turns: each line its turn (three speakers' turns here) and the time it took or gave
    expect(report.segments.map((s) => [s.turn?.id, s.turn?.lines])).toEqual([[1, 1], [2, 1], [3, 1]]);
    for (const s of report.segments) expect(Math.abs(s.turn!.borrowed_ms - Math.round((s.placed.end - s.placed.start - (s.slot.end - s.slot.start)) * 1000)), s.id).toBeLessThanOrEqual(1);
    const [a, b, c] = report.segments;
    expect(report.segments.map((s) => s.id)).toEqual(['seg-0001', 'seg-0002', 'seg-0003']);

    // The first line is more than three times its 0.8 s slot: it runs at the 1.6 limit past its slot and the next line waits for it.
    expect(a!.natural_seconds).toBeGreaterThan(3 * 0.8);
    expect(a!.slot).toEqual({ start: 0.4, end: 1.2 });
    expect(a!.resolution).toBe('delayed_next');
    expect(a!.speed_factor).toBeCloseTo(1.6, 1);
    // espeak-ng counts no length units: the line was spoken at speed 1 (measured), then once at the speed its time asked for
    expect(a!.synthesis).toMatchObject({ natural: 'measured', passes: 1 });
    expect(a!.synthesis!.speed).toBeGreaterThan(1.4);
    expect(a!.placed.start).toBe(0.4);
    expect(a!.placed.end).toBeCloseTo(0.4 + a!.natural_seconds / 1.6, 2);
    expect(a!.overflow_ms).toBe(Math.round((a!.placed.end - 1.2) * 1000));
    expect(a!.gap_after_used_ms).toBe(100);
    expect(a!.flags).toEqual(expect.arrayContaining(['speed', 'overflow', 'rate']));
    // apertium gives no shorter line; the source, read text, has nothing to condense (condense.ts): nothing asked, said
    expect(a!.shortening).toMatchObject({ engine: 'apertium', attempted: false, applied: false, chars_before: SOURCE[0]!.es.length, reason: expect.stringMatching(/nothing|no hesitation.*apertium translates at its own length/) });
    // The second line starts when the first ends: delayed, no overlap; long too, it delays the third.
    expect(b!.placed.start).toBeCloseTo(a!.placed.end, 3);
    expect(b!.delayed_ms).toBe(Math.round((a!.placed.end - 1.3) * 1000));
    expect(a!.next).toEqual({ id: 'seg-0002', gap_ms: 0, source_overlap: false });
    expect(b!.resolution).toBe('delayed_next');
    expect(b!.speed_factor).toBeCloseTo(1.6, 1);
    expect(c!.delayed_ms).toBeGreaterThan(0);
    expect(c!.placed.start).toBeCloseTo(b!.placed.end, 3);
    expect(c!.resolution).toBe('used_gap_after');
    expect(c!.next).toBeNull();
    for (const [i, s] of report.segments.entries()) {
      expect(s.placed.end, s.id).toBeLessThanOrEqual(DURATION);
      if (i + 1 < report.segments.length) expect(s.next!.gap_ms, s.id).toBeGreaterThanOrEqual(0);
      // the fitted speech lasts the placed time (no tail spilling onto the next line)
      expect(s.speech_seconds, s.id).toBeLessThanOrEqual(s.placed.end - s.placed.start + 0.002);
      expect(s.spoken_text).toBe(s.text);
      expect(s.loudness.measured_on).toBe('speech_track');
      expect(s.loudness.rms_dbfs!, s.id).toBeLessThan(-3);
      expect(s.loudness.rms_dbfs!, s.id).toBeGreaterThan(-50);
      // es-ES: pocketsphinx is English only; Whisper base q8 (npm ci) decodes the line in Spanish
      expect(s.back_transcription, s.id).toMatchObject({ engine: 'whisper', text: expect.any(String) });
      expect(s.back_transcription.wer, s.id).toBe(Math.round(wordErrorRate(s.spoken_text, s.back_transcription.text!).wer * 1000) / 1000);
      // MFCC statistics: a figure, marked as such, without a threshold
      expect(s.speaker_similarity).toMatchObject({ engine: 'mfcc', kind: 'mfcc_stats_cosine', threshold: null, reason: expect.stringMatching(/MFCC statistics have no same-speaker threshold/) });
      expect(Math.abs(s.speaker_similarity.cosine!)).toBeLessThanOrEqual(1);
      expect(['S1', 'S2']).toContain(s.speaker_similarity.closest_speaker);
    }
    // In the speech timeline each line's speech lies inside its placed span.
    const tl = await readWav(store.localPath(event.speech_key!)!);
    const x = tl.channels[0]!;
    const rms = (from: number, to: number) => {
      let e = 0;
      const i0 = Math.round(from * tl.sampleRate);
      const i1 = Math.round(to * tl.sampleRate);
      for (let i = i0; i < i1; i++) e += x[i]! * x[i]!;
      return 10 * Math.log10(e / Math.max(1, i1 - i0) + 1e-20);
    };
    expect(rms(0, 0.39)).toBeLessThan(-80); // nothing before the first line
    expect(rms(c!.placed.end + 0.01, DURATION)).toBeLessThan(-80); // nothing after the last
    for (const s of report.segments) expect(rms(s.placed.start, s.placed.end), s.id).toBeGreaterThan(-45);

    // Per version: loudness of the delivered track, durations against the source, stages, engines, speakers, counts.
    expect(report.loudness.measured_on).toBe('result_audio');
    expect(Math.abs(report.loudness.integrated_lufs! - -16)).toBeLessThan(1.5);
    expect(report.loudness.true_peak_dbtp!).toBeLessThanOrEqual(-1);
    expect(Math.abs(report.durations.source.container! - DURATION)).toBeLessThan(0.05);
    for (const k of ['result_video', 'result_audio'] as const) expect(Math.abs(report.durations.diff_ms[k]!), k).toBeLessThan(50);
    expect(report.stages.map((s) => s.stage)).toEqual(expect.arrayContaining(['source', 'voices', 'synthesis', 'timeline', 'mix', 'audio', 'video', 'quality', 'publish']));
    for (const s of report.stages) expect(s.seconds).toBeGreaterThanOrEqual(0);
    // espeak-ng chosen explicitly (auto speaks Spanish with Kokoro): the report's figures below were written for its lines
    expect(report.engines.tts).toMatchObject({ id: 'espeak-ng', label: 'espeak-ng', selected: 'explicit' });
    expect(report.engines.translation).toEqual({ id: 'apertium', label: 'Apertium', selected: 'auto' });
    const stretch = (await detectStretchers())[0] ?? 'atempo';
    expect(report.engines.time_stretch).toEqual({ id: stretch, label: stretch, selected: 'auto', reason: stretchRecord(stretch).reason });
    expect(report.speakers).toEqual({
      method: 'bic',
      found: [
        { id: 'S1', speech_seconds: 2, segments: 2, voice: 'matched', articulation: expect.objectContaining({ rate: expect.any(Number), pace: 1 }) },
        { id: 'S2', speech_seconds: 1, segments: 1, voice: 'matched', articulation: expect.objectContaining({ rate: expect.any(Number), pace: 1 }) },
      ],
      adjustments: [expect.objectContaining({ kind: 'folded', into: 'S1', reason: expect.stringMatching(/folded into the nearest speaker/) })],
    });
    const flagged = (f: string) => report.segments.filter((s) => (s.flags as string[]).includes(f)).length;
    expect(report.summary).toEqual({ segments: 3, flagged: report.segments.filter((s) => s.flags.length).length, speed: flagged('speed'), overflow: flagged('overflow'), wer: flagged('wer'), similarity: null, forced: 2, rate: flagged('rate') });
    expect(report.summary.overflow).toBe(3);
    expect(event.quality).toEqual({ report_key: blobKeys.qualityReport(VERSION, 1), ...report.summary });
    expect(result.overlongSegments).toEqual(['seg-0001', 'seg-0002', 'seg-0003']);
  }, 240_000);

  it('reports each speaker\'s articulation rate and the rate ratio of every line', () => {
    for (const f of report.speakers.found) {
      const a = f.articulation!;
      // measured in the speech track over the lines' spans (espeak-ng's English, leading and trailing silence left out)
      expect(a.speech_seconds, f.id).toBeGreaterThan(f.id === 'S1' ? 0.8 : 0.4);
      expect(a.speech_seconds, f.id).toBeLessThanOrEqual(f.id === 'S1' ? 0.8 + 1.2 : 1);
      expect(a.rate!, f.id).toBeCloseTo(a.syllables / a.speech_seconds, 2);
      expect(a, f.id).toMatchObject({ pace: 1, voice_rate: expect.any(Number), clamped: false, reason: expect.stringMatching(/DUB_SPEAKER_PACE=off/) });
    }
    for (const s of report.segments) {
      const speaker = report.speakers.found.find((f) => f.id === s.speaker)!.articulation!;
      const r = s.articulation!;
      expect(r.pace, s.id).toBe(speaker.pace);
      expect(r.speaker_rate, s.id).toBeCloseTo(speaker.rate!, 2);
      expect(r.source_syllables, s.id).toBe([5, 2, 1][report.segments.indexOf(s)]); // hel-lo ev-ery-one, thank you, yes
      expect(r.dubbed_syllables, s.id).toBeGreaterThan(0);
      expect(s.rate_ratio!, s.id).toBeCloseTo(r.dubbed_rate! / r.speaker_rate!, 2);
      expect((s.flags as string[]).includes('rate'), s.id).toBe(s.rate_ratio! > 1.25);
    }
    // the two overlong lines run at the 1.6 speed limit over their pace: a ratio well above 1 (pauses aside)
    expect(report.segments[0]!.rate_ratio!).toBeGreaterThan(1.2);
  });

  it('the script\'s target word timings follow the placed lines', async () => {
    const saved = JSON.parse((await store.getBuffer(blobKeys.script(VERSION))).toString()) as VersionScript;
    for (const [i, s] of saved.segments.entries()) {
      const r = report.segments[i]!;
      expect(s.target_words![0]!.start).toBeGreaterThanOrEqual(r.placed.start - 0.001);
      expect(s.target_words!.at(-1)!.end).toBeLessThanOrEqual(r.placed.end + 0.001);
    }
  });

  it('a segment whose speaker is not one of the script\'s fails the generation naming the segment, never another speaker\'s voice', async () => {
    const bad: VersionScript = { ...script, segments: script.segments.map((s, i) => (i === 2 ? { ...s, speaker: 'ghost' } : s)) };
    await store.put(blobKeys.script(VERSION), JSON.stringify(bad));
    const events: EmittedEvent[] = [];
    await expect(generateVersion(job(2), runtime(events))).rejects.toThrow('segment seg-0003: speaker "ghost" is not one of the script\'s speakers (S1, S2)');
    expect(events.some((e) => e.type === 'version_generated')).toBe(false);
    expect(await store.has(blobKeys.qualityReport(VERSION, 2))).toBe(false);
    await store.put(blobKeys.script(VERSION), JSON.stringify(script));
  });
});
