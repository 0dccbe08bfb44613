/**
 * The quality report of a generation as the studio shows it (GET /v1/versions/{id}/report,
 * schema `dub.quality-report/1`): per segment the speed factor, the rate ratio next to it (the
 * dubbed line's articulation rate over its speaker's; reports that have it), the time past its slot
 * (with the turn the line was placed in and the time it borrowed, in reports placed by turns), the
 * back-transcription word error rate and the speaker similarity, each marked when the report
 * flags it; for the version, the summary counts. The types are @dub/core's (type-only imports,
 * erased: the page loads no @dub/core code).
 */

import type { QualityFlag, QualityReport, QualitySegment, QualitySummary } from '@dub/core';

export type { QualityFlag };
/** One line of the report (QualitySegmentSchema of @dub/core). */
export type ReportSegment = QualitySegment;
export type ReportSummary = QualitySummary;
/** The report fields the page reads (QualityReportSchema of @dub/core). */
export type QualityReportView = Pick<QualityReport, 'schema' | 'version_id' | 'generation' | 'created_at' | 'thresholds' | 'segments' | 'summary'>;

export interface Figure {
  flag: QualityFlag;
  /** Short label, e.g. "speed". */
  label: string;
  /** The value as shown, e.g. "1.32x". */
  value: string;
  flagged: boolean;
  /** What it means and the threshold, for a tooltip and screen readers. */
  title: string;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The figures of one segment (four, five with the rate ratio), in a fixed order; a figure that was not measured says so. */
export function segmentFigures(s: ReportSegment, th: QualityReportView['thresholds']): Figure[] {
  const f = new Set(s.flags);
  const out: Figure[] = [
    {
      flag: 'speed',
      label: 'speed',
      value: `${s.speed_factor.toFixed(2)}x`,
      flagged: f.has('speed'),
      title: `The dubbed line plays at ${s.speed_factor.toFixed(2)} times its natural speed (flagged above ${th.speed_factor}x).`,
    },
    ...(s.rate_ratio === undefined ? [] : [rateFigure(s, th, f.has('rate'))]),
    {
      flag: 'overflow',
      label: 'over',
      value: `${(s.overflow_ms / 1000).toFixed(2)} s${s.turn ? `, turn ${s.turn.id}` : ''}`,
      flagged: f.has('overflow'),
      title: `The dubbed line runs ${s.overflow_ms} ms past the end of its segment (${s.resolution.replace(/_/g, ' ')}; flagged above ${th.overflow_ms} ms).${s.turn ? ` ${turnText(s.turn)}` : ''}`,
    },
    {
      flag: 'wer',
      label: 'WER',
      value: s.back_transcription.wer === null ? 'n/a' : pct(s.back_transcription.wer),
      flagged: f.has('wer'),
      title:
        s.back_transcription.wer === null
          ? `Back-transcription not measured${s.back_transcription.reason ? `: ${s.back_transcription.reason}` : ''}.`
          : `Word error rate of the dubbed line transcribed back (${s.back_transcription.engine ?? 'ASR'}: \u201c${s.back_transcription.text ?? ''}\u201d) against its text (flagged above ${pct(th.wer)}).`,
    },
    {
      flag: 'similarity',
      label: 'voice',
      value: s.speaker_similarity.cosine === null ? 'n/a' : s.speaker_similarity.cosine.toFixed(2),
      flagged: f.has('similarity'),
      title:
        s.speaker_similarity.cosine === null
          ? `Speaker similarity not measured${s.speaker_similarity.reason ? `: ${s.speaker_similarity.reason}` : ''}.`
          : `Similarity of the dubbed voice to ${s.speaker}'s source voice (${s.speaker_similarity.kind}, ${s.speaker_similarity.engine}${s.speaker_similarity.threshold === null ? '; no threshold for this engine' : `; flagged below ${s.speaker_similarity.threshold}`}).`,
    },
  ];
  return out;
}

/** Where a line placed by turns sits in its turn and what it took from or gave to its neighbours. */
function turnText(t: NonNullable<ReportSegment['turn']>): string {
  const b = t.borrowed_ms;
  const moved = b > 0 ? `took ${(b / 1000).toFixed(2)} s from its neighbours or the silence after the turn` : b < 0 ? `gave ${(-b / 1000).toFixed(2)} s to its neighbours` : 'kept its own time';
  return `Line ${t.index + 1} of ${t.lines} of turn ${t.id} (${t.start.toFixed(2)}-${t.end.toFixed(2)} s, room to ${t.room_end.toFixed(2)} s); it ${moved}.`;
}

/** The rate ratio: the dubbed line's syllables a second over its speaker's, pauses excluded. */
function rateFigure(s: ReportSegment, th: QualityReportView['thresholds'], flagged: boolean): Figure {
  const a = s.articulation;
  const r = s.rate_ratio;
  return {
    flag: 'rate',
    label: 'pace',
    value: r == null ? 'n/a' : `${r.toFixed(2)}x`,
    flagged,
    title:
      r == null
        ? 'Rate ratio not measured (no syllables or speech time for the line or its speaker).'
        : `The dubbed line is spoken at ${r.toFixed(2)} times ${s.speaker}'s pace (${a?.dubbed_rate?.toFixed(1) ?? '?'} against ${a?.speaker_rate?.toFixed(1) ?? '?'} syllables a second, pauses excluded; flagged above ${th.rate_ratio ?? 1.25}x).`,
  };
}

/** One line for the header: how many lines are flagged and for what. */
export function summaryText(r: QualityReportView): string {
  const s = r.summary;
  const parts = [`${s.speed} too fast`, ...(s.rate === undefined ? [] : [`${s.rate} faster than their speaker`]), `${s.overflow} over time`];
  parts.push(s.wer === null ? 'WER not measured' : `${s.wer} with a high WER`);
  parts.push(s.similarity === null ? 'voice similarity not judged' : `${s.similarity} with a different voice`);
  return `Quality (generation ${r.generation}): ${s.flagged} of ${s.segments} lines flagged \u2014 ${parts.join(', ')}${s.forced ? `; ${s.forced} placed by force` : ''}.`;
}

/** The report's segments by id. */
export function reportIndex(r: QualityReportView | undefined): Map<string, ReportSegment> {
  return new Map((r?.segments ?? []).map((s) => [s.id, s]));
}
