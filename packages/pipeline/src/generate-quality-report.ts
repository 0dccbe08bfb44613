/**
 * The quality report of a generation (@dub/core QualityReportSchema, `dub.quality-report/1`),
 * joined from how each line was placed (QualityLine) and what generate-quality.ts measured
 * (QualityMeasurements): per-line flags against QUALITY_THRESHOLDS, the summary counts, the
 * background kept, the speakers, the stages and the engines.
 */
import {
  QUALITY_REPORT_SCHEMA,
  QUALITY_THRESHOLDS,
  type EngineRecords,
  type QualityFlag,
  type QualityReport,
  type QualitySegment,
  type QualitySummary,
  type Transcript,
} from '@dub/core';
import { recheckGlossaryLine } from '@dub/translate';
import type { QualityLine, QualityMeasurements } from './generate-quality.js';
import type { ResolvedGenerateJob } from './generate-job.js';

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export interface ReportInput {
  /** The generation's ids, target locale, mode and voice-over (generate-job.ts). */
  job: Pick<ResolvedGenerateJob, 'assetId' | 'versionId' | 'generation' | 'locale' | 'mode' | 'voiceOver'>;
  sourceLocale: string;
  voiceOverDelay: number;
  speedCap: number;
  speedLimit: number;
  shortening: QualityReport['placement']['shortening'];
  lines: readonly QualityLine[];
  measured: QualityMeasurements;
  similarityEngine: string;
  stages: QualityReport['stages'];
  engines: EngineRecords;
  transcript: Transcript;
  voiceSources: Readonly<Record<string, string>>;
  /** How the mix was normalised (gain, and whether a previous generation's was kept). */
  normalization?: NonNullable<QualityReport['loudness']['normalization']>;
  now: Date;
}

const ms = (seconds: number): number => Math.max(0, Math.round(seconds * 1000));

/** Join placement and measurements into the report; flags and counts against QUALITY_THRESHOLDS. */
export function buildQualityReport(r: ReportInput): QualityReport {
  const T = QUALITY_THRESHOLDS;
  const simThreshold = r.measured.similarityThreshold;
  // what the source transcription removed (a repetition loop's repeats), by source segment id
  const removed = new Map(r.transcript.segments.filter((s) => s.removed?.length).map((s) => [s.id, s.removed!]));
  const segments: QualitySegment[] = r.lines.map((l, i) => {
    const p = l.placement;
    const m = r.measured.lines[l.segment.id]!;
    const next = r.lines[i + 1];
    const speechSeconds = l.fitted?.speechSeconds ?? 0;
    const speed = r3(l.fitted?.speedFactor ?? 0);
    const overflow = ms(p.end - p.slotEnd);
    const flags: QualityFlag[] = [];
    if (speed > T.speedFactor) flags.push('speed');
    if (overflow > T.overflowMs) flags.push('overflow');
    if (m.back_transcription.wer !== null && m.back_transcription.wer > T.wer) flags.push('wer');
    const lineThreshold = m.speaker_similarity.threshold;
    if (lineThreshold !== null && m.speaker_similarity.cosine !== null && m.speaker_similarity.cosine < lineThreshold) flags.push('similarity');
    return {
      id: l.segment.id,
      speaker: l.segment.speaker,
      regenerated: l.regenerated,
      slot: { start: r3(p.slotStart), end: r3(p.slotEnd) },
      placed: { start: r3(p.start), end: r3(p.end) },
      ...(removed.has(l.segment.id) ? { source_removed: removed.get(l.segment.id)! } : {}),
      text: l.segment.target_text,
      spoken_text: l.spokenText,
      natural_seconds: r3(p.natural),
      speech_seconds: r3(speechSeconds),
      speed_factor: speed,
      ...(l.fitted?.synthesis ? { synthesis: l.fitted.synthesis } : {}),
      overflow_ms: overflow,
      resolution: p.resolution,
      gap_after_used_ms: ms(p.gapAfterUsed),
      gap_before_used_ms: ms(p.gapBeforeUsed),
      delayed_ms: ms(p.delayed),
      truncated_ms: ms(p.truncated + (l.fitted?.cutSeconds ?? 0)),
      shortening: l.shortening,
      next: next ? { id: next.segment.id, gap_ms: Math.round((next.placement.start - p.end) * 1000), source_overlap: p.sourceOverlapNext } : null,
      loudness: { rms_dbfs: m.rms_dbfs, measured_on: 'speech_track' },
      back_transcription: m.back_transcription,
      speaker_similarity: m.speaker_similarity,
      flags,
      ...(l.segment.glossary?.length ? { glossary: recheckGlossaryLine(l.segment.glossary, l.spokenText) } : {}),
    };
  });
  const count = (f: QualityFlag) => segments.filter((s) => s.flags.includes(f)).length;
  const werMeasured = segments.some((s) => s.back_transcription.wer !== null);
  const summary: QualitySummary = {
    segments: segments.length,
    flagged: segments.filter((s) => s.flags.length > 0).length,
    speed: count('speed'),
    overflow: count('overflow'),
    wer: werMeasured ? count('wer') : null,
    similarity: simThreshold !== null ? count('similarity') : null,
    forced: segments.filter((s) => ['sped_past_cap', 'delayed_next', 'overlaps_next', 'truncated'].includes(s.resolution)).length,
  };
  const t = r.transcript;
  const background = backgroundKept(r);
  const found = t.speakers.map((sp) => ({ id: sp.id, speech_seconds: sp.speech_seconds ?? null, segments: r.lines.filter((l) => l.segment.speaker === sp.id).length, voice: r.voiceSources[sp.id] ?? 'none' }));
  for (const [id, voice] of Object.entries(r.voiceSources)) if (!found.some((f) => f.id === id)) found.push({ id, speech_seconds: null, segments: r.lines.filter((l) => l.segment.speaker === id).length, voice });
  return {
    schema: QUALITY_REPORT_SCHEMA,
    asset_id: r.job.assetId,
    version_id: r.job.versionId,
    generation: r.job.generation,
    created_at: r.now.toISOString(),
    source_locale: r.sourceLocale,
    target_locale: r.job.locale,
    mode: r.job.mode,
    voice_over: r.job.voiceOver,
    thresholds: { speed_factor: T.speedFactor, overflow_ms: T.overflowMs, wer: T.wer, similarity: simThreshold, similarity_engine: r.similarityEngine },
    placement: { speed_cap: r.speedCap, speed_limit: r.speedLimit, voice_over_delay_s: r.voiceOverDelay, shortening: r.shortening },
    segments,
    loudness: { ...r.measured.loudness, ...(r.normalization ? { normalization: r.normalization } : {}) },
    durations: r.measured.durations,
    ...(background ? { background } : {}),
    stages: r.stages,
    engines: r.engines,
    speakers: { method: t.speaker_count_method ?? 'unknown', found, adjustments: t.speaker_adjustments ?? [] },
    summary,
  };
}

/** What the dubbed track keeps of the source besides the dubbed speech (the transcript's separation record, or the voice-over's original). */
function backgroundKept(r: ReportInput): QualityReport['background'] {
  if (r.job.voiceOver) return { source: 'original_ducked', under_speech: 'ducked_original', kept_seconds: r.transcript.duration, replaced_seconds: 0, reason: 'voice-over: the original audio stays, ducked under the dubbed speech' };
  const sep = r.transcript.separation;
  if (!sep) return undefined;
  if (sep.engine === 'given_tracks') return { source: 'given_tracks', under_speech: 'given', kept_seconds: null, replaced_seconds: null, reason: 'the clean background given with the asset' };
  const k = sep.kept;
  if (!k) return { source: 'separated', under_speech: sep.mode === 'none' ? 'silence' : 'model', kept_seconds: null, replaced_seconds: null, reason: `the separated background as the transcript made it (before the source's audio was kept outside speech): ${sep.reason ?? sep.engine}` };
  return {
    source: 'source_outside_speech',
    under_speech: k.under_speech,
    kept_seconds: k.kept_seconds,
    replaced_seconds: k.replaced_seconds,
    reason: `the source's audio as it is outside speech (${k.kept_seconds} s), ${k.under_speech === 'model' ? "the model's background" : 'silence'} in ${k.replaced_seconds} s of speech, ${k.faded_seconds} s of cross-fades`,
  };
}

