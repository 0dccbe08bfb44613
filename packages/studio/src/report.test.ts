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
  it('the rate ratio sits next to the speed, flagged above its threshold; older reports have no such figure', () => {
    const f = segmentFigures(seg({ speed_factor: 1.4, rate_ratio: 1.31, articulation: { source_rate: 5.9, speaker_rate: 5.2, dubbed_rate: 6.81, source_syllables: 12, dubbed_syllables: 15, pace: 1.2 }, flags: ['speed', 'rate'] }), { ...th, rate_ratio: 1.25, rate_ratio_limit: 1.6 });
    expect(f.map((x) => [x.flag, x.label, x.value, x.flagged])).toEqual([
      ['speed', 'speed', '1.40x', true],
      ['rate', 'pace', '1.31x', true],
      ['overflow', 'over', '0.00 s', false],
      ['wer', 'WER', '10%', false],
      ['similarity', 'voice', '0.62', false],
    ]);
    expect(f[1]!.title).toBe("The dubbed line is spoken at 1.31 times S1's pace (6.8 against 5.2 syllables a second, pauses excluded; flagged above 1.25x).");
    // a line placed by turns: the turn next to the time past its slot, and what it borrowed
    const t = segmentFigures(seg({ overflow_ms: 400, resolution: 'borrowed', turn: { id: 3, index: 0, lines: 2, start: 4, end: 7.5, room_end: 8, borrowed_ms: 400 }, flags: ['overflow'] }), th);
    expect(t.find((x) => x.flag === 'overflow')).toMatchObject({ value: '0.40 s, turn 3', flagged: true });
    expect(t.find((x) => x.flag === 'overflow')!.title).toMatch(/\(borrowed; .*Line 1 of 2 of turn 3 \(4.00-7.50 s, room to 8.00 s\); it took 0.40 s from its neighbours/);
    const n = segmentFigures(seg({ rate_ratio: null }), th);
    expect(n[1]).toMatchObject({ flag: 'rate', value: 'n/a', flagged: false });
    expect(segmentFigures(seg({}), th).map((x) => x.flag)).toEqual(['speed', 'overflow', 'wer', 'similarity']);
    const r = { schema: 'dub.quality-report/1', version_id: 'v', generation: 1, created_at: '', thresholds: th, segments: [], summary: { segments: 3, flagged: 1, speed: 1, overflow: 0, wer: 0, similarity: null, forced: 0, rate: 1 } } as QualityReportView;
    expect(summaryText(r)).toBe('Quality (generation 1): 1 of 3 lines flagged \u2014 1 too fast, 1 faster than their speaker, 0 over time, 0 with a high WER, voice similarity not judged.');
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
