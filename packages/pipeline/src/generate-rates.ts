/**
 * The report's pace figures (issue 26, item 5): per line the source and dubbed articulation rates
 * and `rate_ratio` (the dubbed line's rate over its source speaker's: what a listener hears as
 * hurried), flagged `rate` above RATE_RATIO_THRESHOLDS.ratio; per speaker their rate, their
 * voice's and the rate input used; the thresholds. Added to the report buildQualityReport made,
 * from the synthesis result (the pace plan, and each fitted line's syllables and speech seconds).
 * The flag `speed` keeps its meaning (the speed-up over the voice's default rate).
 */
import { RATE_RATIO_THRESHOLDS, type QualityReport, type QualitySegment } from '@dub/core';
import type { PacePlan } from './generate-pace.js';
import type { PlacedSegment } from './generate-synthesis.js';

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export function withRates(report: QualityReport, pace: PacePlan, segments: readonly PlacedSegment[]): QualityReport {
  const T = RATE_RATIO_THRESHOLDS;
  const placed = new Map(segments.map((s) => [s.slot.segment.id, s]));
  const lines: QualitySegment[] = report.segments.map((seg) => {
    const p = placed.get(seg.id);
    const src = pace.lines[seg.id];
    const speaker = pace.speakers[seg.speaker];
    const v = p?.result?.value;
    const dubbedRate = v && v.syllables != null && v.syllables > 0 && v.articulationSeconds && v.articulationSeconds > 0 ? v.syllables / v.articulationSeconds : null;
    const speakerRate = speaker?.rate ?? null;
    const ratio = dubbedRate !== null && speakerRate !== null && speakerRate > 0 ? r3(dubbedRate / speakerRate) : null;
    const flags = ratio !== null && ratio > T.ratio && !seg.flags.includes('rate') ? [...seg.flags, 'rate' as const] : seg.flags;
    return {
      ...seg,
      rate_ratio: ratio,
      articulation: {
        source_rate: src?.sourceRate != null ? r3(src.sourceRate) : null,
        speaker_rate: speakerRate !== null ? r3(speakerRate) : null,
        dubbed_rate: dubbedRate !== null ? r3(dubbedRate) : null,
        source_syllables: src?.sourceSyllables ?? 0,
        dubbed_syllables: v?.syllables ?? null,
        pace: v?.pace ?? speaker?.pace ?? 1,
      },
      flags,
    };
  });
  const found = report.speakers.found.map((f) => {
    const sp = pace.speakers[f.id];
    if (!sp) return f;
    return {
      ...f,
      articulation: {
        rate: sp.rate !== null ? r3(sp.rate) : null,
        syllables: sp.syllables,
        speech_seconds: r3(sp.speechSeconds),
        voice_rate: sp.voiceRate !== null ? r3(sp.voiceRate) : null,
        pace: sp.pace,
        clamped: sp.clamped,
        ...(sp.reason ? { reason: sp.reason } : {}),
        ...(sp.basis ? { basis: sp.basis } : {}),
      },
    };
  });
  return {
    ...report,
    thresholds: { ...report.thresholds, rate_ratio: T.ratio, rate_ratio_limit: T.limit },
    segments: lines,
    speakers: { ...report.speakers, found },
    summary: { ...report.summary, flagged: lines.filter((s) => s.flags.length > 0).length, rate: lines.filter((s) => s.flags.includes('rate')).length },
  };
}

/**
 * The report's turns (issue 26, item 3): per line the turn it was placed in and the time it took
 * from its neighbours or the silence after the turn (`borrowed_ms`, negative when it gave), and
 * the turn settings under `placement.turns`. A report of lines placed one by one is unchanged.
 */
export function withTurns(report: QualityReport, segments: readonly PlacedSegment[], turns: { pause: number; shift: number } | false): QualityReport {
  if (!turns) return report;
  const placed = new Map(segments.map((s) => [s.slot.segment.id, s.placement]));
  return {
    ...report,
    placement: { ...report.placement, turns: { pause_s: turns.pause, shift_s: turns.shift } },
    segments: report.segments.map((seg) => {
      const t = placed.get(seg.id)?.turn;
      if (!t) return seg;
      return { ...seg, turn: { id: t.id, index: t.index, lines: t.lines, start: r3(t.start), end: r3(t.end), room_end: r3(t.roomEnd), borrowed_ms: Math.round(t.borrowed * 1000) } };
    }),
  };
}
