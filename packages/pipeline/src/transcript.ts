/** Assembling the asset's transcript (core TranscriptSchema) from recognition and speaker turns. */
import type { RemovedRepeats, SkippedWindow } from '@dub/asr';
import type { RemovedText, Speaker, Transcript, TranscriptSegment, TranscriptSeparation } from '@dub/core';
import type { KeptOutsideSpeech, SeparationPlan } from '@dub/separation';
import type { SpeakerTurns } from './stages.js';

export function segmentId(i: number): string {
  return `seg-${String(i + 1).padStart(4, '0')}`;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function buildTranscript(
  locale: string,
  duration: number,
  engine: string,
  turns: SpeakerTurns,
  referenceKeys: Record<string, string>,
  tracks?: { speech: string; background: string },
  separation?: TranscriptSeparation,
  removedRepeats: readonly RemovedRepeats[] = [],
): Transcript {
  const removed = removedBySegment(turns.segments, removedRepeats);
  const segments: TranscriptSegment[] = turns.segments.map((s, i) => ({
    id: segmentId(i),
    start: r3(Math.max(0, s.start)),
    end: r3(Math.max(s.start, s.end)),
    speaker: s.speaker,
    text: s.text,
    words: s.words.map((w) => ({ text: w.text, start: r3(Math.max(0, w.start)), end: r3(Math.max(0, w.end)), ...(w.confidence !== undefined ? { confidence: Math.min(1, Math.max(0, w.confidence)) } : {}) })),
    ...(removed.has(i) ? { removed: removed.get(i)! } : {}),
  }));
  const speakers: Speaker[] = turns.speakers.map((sp) => ({
    id: sp.id,
    ...(referenceKeys[sp.id] ? { reference_key: referenceKeys[sp.id] } : {}),
    speech_seconds: r3(sp.speechSeconds),
  }));
  return {
    v: 1,
    locale,
    engine,
    duration: r3(duration),
    speakers,
    segments,
    ...(tracks ? { tracks } : {}),
    ...(separation ? { separation } : {}),
    ...(turns.method ? { speaker_count_method: turns.method } : {}),
    ...(turns.adjustments ? { speaker_adjustments: turns.adjustments } : {}),
  };
}

/**
 * The repeats removed from the recognition (a repetition loop cut to its first copy), by the index
 * of the segment that holds the kept copy: the segment whose span holds the copy's end, else the
 * nearest one (the speakers stage may have split or refitted the recognizer's segments).
 */
export function removedBySegment(segments: readonly { start: number; end: number }[], removed: readonly RemovedRepeats[]): Map<number, RemovedText[]> {
  const out = new Map<number, RemovedText[]>();
  for (const r of removed) {
    let at = -1;
    let best = Infinity;
    for (const [i, s] of segments.entries()) {
      const d = r.keptEnd < s.start ? s.start - r.keptEnd : r.keptEnd > s.end ? r.keptEnd - s.end : 0;
      if (d < best) [best, at] = [d, i];
    }
    if (at < 0) continue;
    out.set(at, [...(out.get(at) ?? []), { text: r.text, start: r3(Math.max(0, r.start)), end: r3(Math.max(0, r.start, r.end)), kind: 'repetition_loop', kept: r.kept, reason: r.reason }]);
  }
  return out;
}

/** One line per text removed from the transcript's segments (the asr record's notes: engines.json, `dub run`'s summary, the quality report). */
export function removedTextNotes(segments: readonly TranscriptSegment[]): string[] {
  return segments.flatMap((s) => (s.removed ?? []).map((r) => `${s.id} (${r.start.toFixed(2)}-${r.end.toFixed(2)} s): removed "${r.text}"; ${r.reason}`));
}

/** The transcript's `no_speech_windows`: the windows Whisper judged silent, left out or kept (noSpeechFallback). */
export function noSpeechWindows(skipped: readonly SkippedWindow[] | undefined): NonNullable<Transcript['no_speech_windows']> | undefined {
  if (!skipped?.length) return undefined;
  return skipped.map((w) => ({ start: r3(Math.max(0, w.start)), end: r3(Math.max(0, w.start, w.end)), no_speech_probability: Math.round(Math.min(1, Math.max(0, w.noSpeechProbability)) * 1000) / 1000, avg_logprob: Math.round(w.avgLogprob * 1000) / 1000, kept: w.kept === true }));
}

/** A line per window Whisper judged silent, for the asr record's notes and `dub run`'s warnings (never a silent drop). */
export function noSpeechNotes(windows: Transcript['no_speech_windows']): string[] {
  return (windows ?? []).map(
    (w) =>
      `${w.start.toFixed(2)}-${w.end.toFixed(2)} s: Whisper judged this speech silent (no-speech probability ${w.no_speech_probability.toFixed(2)}, average log-probability ${w.avg_logprob.toFixed(2)}); ${w.kept ? 'transcribed after all: every window was judged so, and the voice-activity detector found speech there' : 'left out of the transcript'}`,
  );
}

/** What the separation stage did and why: the engine that ran (`none`, `htdemucs`, `given_tracks`), the plan's measurement, and what the background keeps (`kept`). */
export function separationRecord(engine: string, plan: SeparationPlan | undefined, kept?: KeptOutsideSpeech): TranscriptSeparation {
  if (!plan) return { engine };
  return {
    engine,
    mode: plan.mode,
    background: plan.background,
    ...(plan.backgroundKind ? { background_kind: plan.backgroundKind } : {}),
    reason: plan.reason,
    model_seconds: plan.modelSeconds,
    spans: plan.spans,
    ...(kept
      ? {
          kept: {
            outside_speech: 'source',
            under_speech: plan.mode === 'none' ? 'silence' : 'model',
            kept_seconds: kept.keptSeconds,
            replaced_seconds: kept.replacedSeconds,
            faded_seconds: kept.fadeSeconds,
            pad_seconds: kept.pad,
            crossfade_seconds: kept.fade,
            replaced: kept.replaced,
          },
        }
      : {}),
    measurement: {
      duration: plan.measurement.duration,
      speech_seconds: plan.measurement.speechSeconds,
      gap_seconds: plan.measurement.gapSeconds,
      speech_level_db: plan.measurement.speechLevelDb,
      gap_level_db: plan.measurement.gapLevelDb,
      gap_to_speech_db: plan.measurement.gapToSpeechDb,
      gap_flatness: plan.measurement.gapFlatness,
      gap_flux_db: plan.measurement.gapFlux,
      // the pauses between words, which decide when the gaps are too short (plans made before them lack them)
      ...(plan.measurement.quietLevelDb !== undefined ? { quiet_level_db: plan.measurement.quietLevelDb, quiet_to_speech_db: plan.measurement.quietToSpeechDb, quiet_flatness: plan.measurement.quietFlatness } : {}),
    },
  };
}
