/**
 * The quality report of one generated version (`schema: "dub.quality-report/1"`): how every dubbed
 * line was placed (slot, natural length, speed, time past the slot and how that was resolved, gap
 * to the next line), how it measures (loudness, back-transcription word error rate, speaker
 * similarity) and, for the version, the loudness and durations of the outputs, stage times,
 * engines, speakers and the count of lines flagged against QUALITY_THRESHOLDS. Generation stores
 * it under the generation (blobKeys.qualityReport), `dub run` writes it as report.json and the API
 * serves it at GET /v1/versions/{version_id}/report. A change that removes or retypes a field
 * bumps the number after the slash; added fields keep it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EngineRecordsSchema } from './engines.js';
import { GlossaryLineSchema } from './glossary.js';
import { RemovedTextSchema, SpeakerAdjustmentSchema, SpeakerCountMethodSchema } from './script.js';

export const QUALITY_REPORT_SCHEMA = 'dub.quality-report/1' as const;

/**
 * Lines are flagged when: sped up by more than `speedFactor` (natural length / placed length),
 * any time past their slot (`overflowMs`, after rounding to whole ms), back-transcription word
 * error rate above `wer`; and below the similarity threshold of the speaker-embedding engine
 * (@dub/asr SIMILARITY_THRESHOLDS; none for the MFCC statistics). Not fitted to any recording.
 */
export const QUALITY_THRESHOLDS = Object.freeze({ speedFactor: 1.25, overflowMs: 0, wer: 0.3 });

/**
 * The pace a listener hears: a line's `rate_ratio` is its dubbed articulation rate (syllables per
 * second, pauses excluded) over its source speaker's. Flagged (`rate`) above `ratio`, the speed
 * cap of placement; `limit` is the most placement allows (its speed limit). Fixed at the
 * placement defaults, never fitted to any recording.
 */
export const RATE_RATIO_THRESHOLDS = Object.freeze({ ratio: 1.25, limit: 1.6 });

/**
 * Placement of a line that does not fit its slot: it is sped up to `speedCap`, then takes the
 * silence after it (and, in voice-over, up to the delay before it), then a shorter translation
 * when the translation engine takes a length budget, and only then is it sped past the cap, up to
 * `speedLimit`; what still does not fit delays the next line (or overlaps it where the source
 * speakers overlapped, or is cut at the end of the video).
 */
export const PLACEMENT_DEFAULTS = Object.freeze({ speedCap: 1.25, speedLimit: 1.6 });

/**
 * Turns (issue 26, item 3): lines of one speaker less than `pause` seconds apart (no other
 * speaker's line between them) form a turn. Inside a turn time moves between lines: a long line
 * borrows from a short neighbour, so the turn's fastest line is as slow as the turn allows (never
 * slower than the speaker's pace), while the turn starts where the speaker starts and ends where
 * they end or within the silence after (before the next speaker's line), and each line starts and
 * ends within `shift` seconds of its own words (the last line's end may take all of the silence
 * after). `pause` is the short pause; `shift` about two words at 4 syllables a second.
 * Both fixed when the design was made, never fitted to any recording.
 */
export const TURN_DEFAULTS = Object.freeze({ pause: 0.3, shift: 1.0 });

export const PLACEMENT_RESOLUTIONS = [
  /** Within its slot at a speed up to the cap (or slowed down / padded when short). */
  'fits',
  /** Ran into the silence after its slot. */
  'used_gap_after',
  /** Took time from a neighbour in its turn (or the silence after the turn): `turn.borrowed_ms` says how much. */
  'borrowed',
  /** Voice-over: also started earlier, within the voice-over delay. */
  'used_gap_before',
  /** A shorter translation fitted. */
  'shortened',
  /** Sped past the cap (up to the limit) to end before the next line. */
  'sped_past_cap',
  /** Longer than its room at the speed limit: the next line starts later (delayed_ms on it). */
  'delayed_next',
  /** Longer than its room at the speed limit and the source speakers overlapped: it plays over the next line. */
  'overlaps_next',
  /** The last line, longer than the video at the speed limit: cut at the end (truncated_ms). */
  'truncated',
] as const;
export type PlacementResolution = (typeof PLACEMENT_RESOLUTIONS)[number];

export const QUALITY_FLAGS = ['speed', 'overflow', 'wer', 'similarity', 'rate'] as const;
export type QualityFlag = (typeof QUALITY_FLAGS)[number];

const Lit = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));
const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);
const Span = Type.Object({ start: Type.Number(), end: Type.Number() });

export const ShorteningSchema = Type.Object({
  /** Translation engine asked (or that would have been). */
  engine: Type.String(),
  /** Whether a shorter translation was asked for. */
  attempted: Type.Boolean(),
  /** Whether the shorter line is the one spoken. */
  applied: Type.Boolean(),
  /** Character budget of the request. */
  budget_chars: Type.Optional(Type.Integer({ minimum: 0 })),
  chars_before: Type.Integer({ minimum: 0 }),
  chars_after: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * How the engine was asked: `length_budget` (one translation within budget_chars: an LLM),
   * `n_best` (the engine's alternative translations, the best-ranked within the budget taken, else
   * the shortest) or `condensed` (an engine that can do neither, e.g. apertium: the source line
   * with its hesitations, fillers, discourse markers and repeated words left out, translated
   * again); absent when nothing was asked.
   */
  method: Type.Optional(Type.Union([Type.Literal('length_budget'), Type.Literal('n_best'), Type.Literal('condensed')])),
  /** n_best: how many distinct alternatives the engine gave. */
  candidates: Type.Optional(Type.Integer({ minimum: 0 })),
  /** condensed: what was left out of the source line ("you know", "well", "I (repeated)"). */
  removed: Type.Optional(Type.Array(Type.String())),
  /** Seconds of the line at its speaker's pace before and with the shorter text (what placement compared). */
  seconds_before: Type.Optional(Type.Number({ minimum: 0 })),
  seconds_after: Type.Optional(Type.Number({ minimum: 0 })),
  reason: Type.String(),
});

/** The turn a line belongs to (TURN_DEFAULTS) and the time it took from or gave to its neighbours. */
export const LineTurnSchema = Type.Object({
  /** 1-based, in time order over the version's lines. */
  id: Type.Integer({ minimum: 1 }),
  /** The line's place in its turn (0-based) and the turn's count of lines. */
  index: Type.Integer({ minimum: 0 }),
  lines: Type.Integer({ minimum: 1 }),
  /** The turn's source span: its first line's start and last line's end, and where its room ends (the next other line's start, or the end of the video). */
  start: Type.Number(),
  end: Type.Number(),
  room_end: Type.Number(),
  /** Placed length minus slot length (ms): positive when the line took time from a neighbour or the silence after, negative when it gave. */
  borrowed_ms: Type.Integer(),
});

export const QualitySegmentSchema = Type.Object({
  id: Type.String(),
  speaker: Type.String(),
  /** Whether this generation synthesized or fitted the line anew; false when both came from an earlier generation's cache (a re-dub regenerates only the edited lines). */
  regenerated: Type.Boolean(),
  /** The source segment's time span (seconds). */
  slot: Span,
  /** Where the dubbed line plays in the speech timeline (seconds; voice-over adds its delay in the mix). */
  placed: Span,
  /**
   * Text the source transcription removed from this line's source segment (the transcript
   * segment's `removed`: a repetition loop's repeats, the first copy kept), so the line dubs the
   * phrase once; absent when nothing was removed.
   */
  source_removed: Type.Optional(Type.Array(RemovedTextSchema)),
  /** The script's target text, and the text spoken (differs when shortened). */
  text: Type.String(),
  spoken_text: Type.String(),
  /** Seconds of the synthesized line at its pace (`articulation.pace`, the speaker-matched rate input: its length at the default rate / pace; 1 in reports without it), silence trimmed. */
  natural_seconds: Type.Number({ minimum: 0 }),
  /** Seconds of speech as placed (padding excluded). */
  speech_seconds: Type.Number({ minimum: 0 }),
  /** The line's length at the voice's default rate (natural_seconds x pace) / speech_seconds: above 1 sped up, below 1 slowed down. */
  speed_factor: Type.Number({ minimum: 0 }),
  /**
   * Dubbed articulation rate / the source speaker's (syllables per second, pauses of 0.25 s or more
   * excluded): above 1 the line is spoken faster than its speaker speaks. null when not measured
   * (nothing of the line placed, no syllable or speech time); absent in older reports.
   */
  rate_ratio: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  /** The rates behind rate_ratio (syllables from espeak-ng's phonemes of the text). */
  articulation: Type.Optional(
    Type.Object({
      /** The source line's rate (its words' times), the speaker's over all their lines, and the dubbed line's as placed. */
      source_rate: Nullable(Type.Number({ minimum: 0 })),
      speaker_rate: Nullable(Type.Number({ minimum: 0 })),
      dubbed_rate: Nullable(Type.Number({ minimum: 0 })),
      source_syllables: Type.Integer({ minimum: 0 }),
      dubbed_syllables: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      /** The engine's rate input the line was synthesized at before fitting (1: the voice's default rate). */
      pace: Type.Number({ minimum: 0 }),
    }),
  ),
  /**
   * How the line was spoken to its placed time: `natural` whether its length at speed 1
   * (natural_seconds, speed_factor) was measured (the line spoken at speed 1) or predicted from its
   * length units (Kokoro's phoneme tokens) and its voice's seconds per unit in this job; `speed`
   * the engine's rate input of the placed audio; `passes` the times the fitting spoke it (0: the
   * speed-1 utterance was used as is; 2: the first pass missed its time by more than 10 % and the
   * line was spoken again); `tempo` the time stretch after (1: none). Absent in older reports.
   */
  synthesis: Type.Optional(
    Type.Object({
      natural: Type.Union([Type.Literal('measured'), Type.Literal('predicted')]),
      speed: Type.Number({ minimum: 0 }),
      passes: Type.Integer({ minimum: 0 }),
      tempo: Type.Number({ minimum: 0 }),
    }),
  ),
  /** Milliseconds the line runs past the end of its slot. */
  overflow_ms: Type.Integer({ minimum: 0 }),
  resolution: Lit(PLACEMENT_RESOLUTIONS),
  gap_after_used_ms: Type.Integer({ minimum: 0 }),
  gap_before_used_ms: Type.Integer({ minimum: 0 }),
  /** Milliseconds this line starts after its slot because the line before it ran over. */
  delayed_ms: Type.Integer({ minimum: 0 }),
  /** Milliseconds cut off at the end of the video. */
  truncated_ms: Type.Integer({ minimum: 0 }),
  shortening: Type.Union([ShorteningSchema, Type.Null()]),
  /** The turn the line belongs to (absent in older reports and when placed line by line: DUB_PLACEMENT_TURNS=off). */
  turn: Type.Optional(LineTurnSchema),
  /** The next line in time and the silence between them (negative: they overlap by that much). */
  next: Type.Union([Type.Object({ id: Type.String(), gap_ms: Type.Integer(), source_overlap: Type.Boolean() }), Type.Null()]),
  loudness: Type.Object({ rms_dbfs: Nullable(Type.Number()), measured_on: Type.Literal('speech_track') }),
  back_transcription: Type.Object({
    /** ASR engine that transcribed the dubbed line in the target language; null when none supports it here. */
    engine: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    /** Word error rate of `text` against spoken_text; null with `reason` when not measured. */
    wer: Nullable(Type.Number({ minimum: 0 })),
    reason: Type.Optional(Type.String()),
  }),
  speaker_similarity: Type.Object({
    /** Speaker-embedding engine (wespeaker, mfcc). */
    engine: Type.String(),
    /** speaker_embedding_cosine (a verification score) or mfcc_stats_cosine (a timbre statistic, not one). */
    kind: Type.String(),
    /** Cosine of the dubbed line's vector and the speaker's reference clip's; null with `reason` when not measured. */
    cosine: Nullable(Type.Number()),
    /** The engine's same-speaker threshold, null when it has none or it does not apply (library voice, anonymization). */
    threshold: Nullable(Type.Number()),
    /** The speaker whose reference clip is closest to the dubbed line (several speakers). */
    closest_speaker: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Optional(Type.String()),
  }),
  flags: Type.Array(Lit(QUALITY_FLAGS)),
  /** Glossary terms in the line's source and whether the spoken text carries each (absent without a glossary term). */
  glossary: Type.Optional(GlossaryLineSchema),
});
export type QualitySegment = Static<typeof QualitySegmentSchema>;

const StreamDurations = Type.Object({ container: Nullable(Type.Number()), video: Nullable(Type.Number()), audio: Nullable(Type.Number()) });

export const QualitySummarySchema = Type.Object({
  segments: Type.Integer({ minimum: 0 }),
  /** Lines with at least one flag. */
  flagged: Type.Integer({ minimum: 0 }),
  speed: Type.Integer({ minimum: 0 }),
  overflow: Type.Integer({ minimum: 0 }),
  /** null when not measured (no ASR for the target locale, no similarity threshold for the engine). */
  wer: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  similarity: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  /** Lines placed by force: sped past the cap, delaying or overlapping the next line, or cut at the end. */
  forced: Type.Integer({ minimum: 0 }),
  /** Lines with rate_ratio above the threshold (absent in older reports). */
  rate: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type QualitySummary = Static<typeof QualitySummarySchema>;

export const QualityReportSchema = Type.Object({
  schema: Type.Literal(QUALITY_REPORT_SCHEMA),
  asset_id: Type.String(),
  version_id: Type.String(),
  generation: Type.Integer({ minimum: 1 }),
  created_at: Type.String(),
  source_locale: Type.String(),
  target_locale: Type.String(),
  mode: Type.String(),
  voice_over: Type.Boolean(),
  thresholds: Type.Object({
    speed_factor: Type.Number(),
    overflow_ms: Type.Number(),
    wer: Type.Number(),
    similarity: Nullable(Type.Number()),
    similarity_engine: Type.String(),
    /** RATE_RATIO_THRESHOLDS: `rate` flag above rate_ratio; rate_ratio_limit the most placement allows. */
    rate_ratio: Type.Optional(Type.Number()),
    rate_ratio_limit: Type.Optional(Type.Number()),
  }),
  placement: Type.Object({
    speed_cap: Type.Number(),
    speed_limit: Type.Number(),
    /** Voice-over delay of the speech in the mix (0 for replace). */
    voice_over_delay_s: Type.Number({ minimum: 0 }),
    /** Whether a line can be re-translated shorter here, by which engine, or why not. */
    shortening: Type.Object({ engine: Type.String(), possible: Type.Boolean(), reason: Type.String(), method: Type.Optional(Type.Union([Type.Literal('length_budget'), Type.Literal('n_best'), Type.Literal('condensed')])) }),
    /** TURN_DEFAULTS when lines were placed by turns (absent in older reports and with DUB_PLACEMENT_TURNS=off). */
    turns: Type.Optional(Type.Object({ pause_s: Type.Number(), shift_s: Type.Number() })),
  }),
  segments: Type.Array(QualitySegmentSchema),
  /** EBU R128 of the dubbed audio track as delivered (result.m4a). */
  loudness: Type.Object({
    integrated_lufs: Nullable(Type.Number()),
    true_peak_dbtp: Nullable(Type.Number()),
    range_lu: Nullable(Type.Number()),
    measured_on: Type.Literal('result_audio'),
    /**
     * How the mix was brought to the target: the one gain applied (dB), the gain that would bring
     * this mix exactly to the target, and the generation whose gain was kept (a re-dub keeps the
     * previous generation's gain while the exact one is within tolerance_db of it, so that only
     * the edited lines' samples of the mix change), else null.
     */
    normalization: Type.Optional(
      Type.Object({
        target_lufs: Type.Number(),
        premix_lufs: Nullable(Type.Number()),
        gain_db: Type.Number(),
        exact_gain_db: Type.Number(),
        tolerance_db: Type.Number({ minimum: 0 }),
        kept_from_generation: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      }),
    ),
  }),
  /**
   * Seconds of the source and the outputs (container, video stream, first audio stream), and the
   * differences in ms: result_video (container), result_video_audio (its dubbed track) and
   * result_audio (result.m4a) against the source container; result_video_stream against the
   * source's video stream.
   */
  durations: Type.Object({
    source: StreamDurations,
    result_video: StreamDurations,
    result_audio: StreamDurations,
    diff_ms: Type.Object({ result_video: Nullable(Type.Number()), result_video_stream: Nullable(Type.Number()), result_video_audio: Nullable(Type.Number()), result_audio: Nullable(Type.Number()) }),
  }),
  /**
   * What the dubbed track keeps of the source besides the dubbed speech. Replace: the background
   * track, which is the source's audio as it is outside speech (`kept_seconds`) and the model's
   * background or silence in the `replaced_seconds` of speech (transcript.separation.kept); given
   * clean tracks: the given background; voice-over: the original, ducked under the dubbed speech.
   * Absent in reports of transcripts made before it was recorded.
   */
  background: Type.Optional(
    Type.Object({
      source: Type.Union([Type.Literal('source_outside_speech'), Type.Literal('given_tracks'), Type.Literal('original_ducked'), Type.Literal('separated')]),
      under_speech: Type.Union([Type.Literal('model'), Type.Literal('silence'), Type.Literal('given'), Type.Literal('ducked_original')]),
      kept_seconds: Nullable(Type.Number({ minimum: 0 })),
      replaced_seconds: Nullable(Type.Number({ minimum: 0 })),
      reason: Type.String(),
    }),
  ),
  /** Generation stages in order: seconds, and whether the output came from the cache. */
  stages: Type.Array(Type.Object({ stage: Type.String(), seconds: Type.Number({ minimum: 0 }), cached: Type.Boolean() })),
  engines: EngineRecordsSchema,
  speakers: Type.Object({
    method: Type.Union([SpeakerCountMethodSchema, Type.Literal('unknown')]),
    found: Type.Array(
      Type.Object({
        id: Type.String(),
        speech_seconds: Nullable(Type.Number()),
        segments: Type.Integer({ minimum: 0 }),
        voice: Type.String(),
        /**
         * The speaker's articulation rate (syllables per second of their words, pauses excluded),
         * the voice's at the engine's default rate (measured on a sample of the speaker's dubbed
         * lines), and the rate input used for their lines: rate / voice_rate within the engine's
         * natural range (`clamped`), or 1 with the reason.
         */
        articulation: Type.Optional(
          Type.Object({
            rate: Nullable(Type.Number({ minimum: 0 })),
            syllables: Type.Integer({ minimum: 0 }),
            speech_seconds: Type.Number({ minimum: 0 }),
            voice_rate: Nullable(Type.Number({ minimum: 0 })),
            pace: Type.Number({ minimum: 0 }),
            clamped: Type.Boolean(),
            reason: Type.Optional(Type.String()),
            /** The speech time's source: the speech track, the words' times, or the lines' spans (pauses included: the pace is then not matched). */
            basis: Type.Optional(Type.Union([Type.Literal('speech_track'), Type.Literal('words'), Type.Literal('span')])),
          }),
        ),
      }),
    ),
    adjustments: Type.Array(SpeakerAdjustmentSchema),
  }),
  summary: QualitySummarySchema,
});
export type QualityReport = Static<typeof QualityReportSchema>;
