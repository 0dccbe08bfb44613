import { describe, expect, it } from 'vitest';
import { reportIndex, segmentFigures, summaryText, type QualityReportView, type ReportSegment } from './report.js';

const th: QualityReportView['thresholds'] = { speed_factor: 1.25, overflow_ms: 0, wer: 0.3, similarity: 0.4, similarity_engine: 'wespeaker' };
const seg = (over: Partial<ReportSegment>): ReportSegment =>
  ({
    id: 'a',
    speaker: 'S1',
    speed_factor: 1.1,
    overflow_ms: 0,
    resolution: 'fits',
    back_transcription: { engine: 'whisper', text: 'hola', wer: 0.1 },
    speaker_similarity: { engine: 'wespeaker', kind: 'speaker_embedding_cosine', cosine: 0.62, threshold: 0.4, closest_speaker: 'S1' },
    flags: [],
    ...over,
  }) as ReportSegment;

describe('segmentFigures', () => {
  it('shows the four figures, the flagged ones marked', () => {
    const f = segmentFigures(seg({ speed_factor: 1.4, overflow_ms: 230, resolution: 'delayed_next', flags: ['speed', 'overflow'] }), th);
    expect(f.map((x) => [x.flag, x.value, x.flagged])).toEqual([
      ['speed', '1.40x', true],
      ['overflow', '0.23 s', true],
      ['wer', '10%', false],
      ['similarity', '0.62', false],
    ]);
    expect(f[0]!.title).toMatch(/flagged above 1.25x/);
    expect(f[1]!.title).toMatch(/230 ms past the end of its segment \(delayed next/);
  });
  it('a figure that was not measured says so, with the reason', () => {
    const f = segmentFigures(seg({ back_transcription: { engine: null, text: null, wer: null, reason: 'no ASR for es-ES' }, speaker_similarity: { engine: 'mfcc', kind: 'mfcc_stats_cosine', cosine: null, threshold: null, closest_speaker: null, reason: 'library voice' } }), th);
    expect(f[2]!.value).toBe('n/a');
    expect(f[2]!.title).toBe('Back-transcription not measured: no ASR for es-ES.');
    expect(f[3]!.title).toBe('Speaker similarity not measured: library voice.');
  });
});

describe('summaryText and reportIndex', () => {
  it('one line for the header; segments by id', () => {
    const r = { schema: 'dub.quality-report/1', version_id: 'v', generation: 2, created_at: '', thresholds: th, segments: [seg({}), seg({ id: 'b', flags: ['wer'] })], summary: { segments: 2, flagged: 1, speed: 0, overflow: 0, wer: 1, similarity: null, forced: 0 } } as QualityReportView;
    expect(summaryText(r)).toBe('Quality (generation 2): 1 of 2 lines flagged \u2014 0 too fast, 0 over time, 1 with a high WER, voice similarity not judged.');
    expect([...reportIndex(r).keys()]).toEqual(['a', 'b']);
    expect(reportIndex(undefined).size).toBe(0);
  });
});
