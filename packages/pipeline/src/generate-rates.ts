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
