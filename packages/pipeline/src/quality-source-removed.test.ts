/**
 * The quality report's line for a segment whose source text had a repetition loop's repeats
 * removed (the transcript segment's `removed`) says so (`source_removed`), schema-validated;
 * the other lines carry no such field.
 */
import { describe, expect, it } from 'vitest';
import { QualityReportSchema, validate, type QualityReport, type ScriptSegment } from '@dub/core';
import { buildQualityReport, type ReportInput } from './generate-quality-report.js';
import type { QualityLine } from './generate-quality.js';
import type { SpeakerTurns } from './stages.js';
import { buildTranscript } from './transcript.js';

const words = (text: string, start: number) => text.split(' ').map((t, i) => ({ text: t, start: start + i * 0.5, end: start + (i + 1) * 0.5 }));

describe('quality report: source text removed by the transcription', () => {
  it('is on the line of the segment that kept the first copy, and validates', () => {
    const turns: SpeakerTurns = {
      engine: 'mfcc',
      segments: [
        { start: 0, end: 2, text: "So I'm a d-", words: words("So I'm a d-", 0), speaker: 'spk_1' },
        { start: 9, end: 10, text: 'Right, so.', words: words('Right, so.', 9), speaker: 'spk_1' },
      ],
      speakers: [{ id: 'spk_1', speechSeconds: 3 }],
    };
    const loop = { start: 2, end: 8, text: "I'm a d- I'm a d- I'm a d- I'm a d-", kept: "I'm a d-", keptStart: 0.5, keptEnd: 2, period: 3, copies: 5, reason: 'repetition loop: kept once' };
    const transcript = buildTranscript('en-US', 10, 'whisper', turns, {}, undefined, undefined, [loop]);
    expect(transcript.segments[0]!.removed).toHaveLength(1);

    const lines: QualityLine[] = transcript.segments.map((s) => {
      const segment: ScriptSegment = { id: s.id, start: s.start, end: s.end, speaker: s.speaker, source_text: s.text, target_text: `es ${s.text}` };
      const placement = { id: s.id, slotStart: s.start, slotEnd: s.end, start: s.start, end: s.end, seconds: s.end - s.start, natural: s.end - s.start, speed: 1, resolution: 'fits' as const, shortened: false, gapAfterUsed: 0, gapBeforeUsed: 0, delayed: 0, truncated: 0, sourceOverlapNext: false, demand: s.end - s.start };
      return { segment, placement, spokenText: segment.target_text, shortening: null, fitted: { file: 'x.wav', speechSeconds: s.end - s.start, speedFactor: 1, cutSeconds: 0 }, regenerated: true };
    });
    const measurement = { rms_dbfs: -20, back_transcription: { engine: null, text: null, wer: null, reason: 'none here' }, speaker_similarity: { engine: 'mfcc', kind: 'mfcc_stats_cosine', cosine: 0.9, threshold: null, closest_speaker: null } };
    const none = { container: null, video: null, audio: null };
    const input: ReportInput = {
      job: { assetId: 'ast_1', versionId: 'ver_1', generation: 1, locale: 'es-ES', mode: 'no_lips', voiceOver: false } as ReportInput['job'],
      sourceLocale: 'en-US',
      voiceOverDelay: 0,
      speedCap: 1.25,
      speedLimit: 1.6,
      shortening: { engine: 'apertium', possible: false, reason: 'no' },
      lines,
      measured: {
        lines: Object.fromEntries(lines.map((l) => [l.segment.id, measurement])) as ReportInput['measured']['lines'],
        loudness: { integrated_lufs: null, true_peak_dbtp: null, range_lu: null, measured_on: 'result_audio' },
        durations: { source: none, result_video: none, result_audio: none, diff_ms: { result_video: null, result_video_stream: null, result_video_audio: null, result_audio: null } },
        similarityThreshold: null,
        similarityKind: 'mfcc_stats_cosine',
        measuredLines: lines.map((l) => l.segment.id),
      },
      similarityEngine: 'mfcc',
      stages: [],
      engines: {},
      transcript,
      voiceSources: { spk_1: 'matched' },
      now: new Date(0),
    };
    const report = validate<QualityReport>(QualityReportSchema, buildQualityReport(input), 'report');
    expect(report.segments.map((s) => s.id)).toEqual(['seg-0001', 'seg-0002']);
    expect(report.segments[0]!.source_removed).toEqual([
      { text: "I'm a d- I'm a d- I'm a d- I'm a d-", start: 2, end: 8, kind: 'repetition_loop', kept: "I'm a d-", reason: 'repetition loop: kept once' },
    ]);
    expect('source_removed' in report.segments[1]!).toBe(false);
    // the schema checks the entries
    const bad = structuredClone(report);
    (bad.segments[0]!.source_removed![0] as { kind: string }).kind = 'other';
    expect(() => validate(QualityReportSchema, bad, 'report')).toThrow();
  });
});
