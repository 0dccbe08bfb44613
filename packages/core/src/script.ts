/**
 * The transcript and the editable script of a version: what prepare produces, what the studio
 * edits, what SRT downloads and generation read.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EngineRecordSchema, EngineRecordsSchema } from './engines.js';
import { GlossaryLineSchema } from './glossary.js';

export const WordSchema = Type.Object({
  text: Type.String(),
  start: Type.Number({ minimum: 0 }),
  end: Type.Number({ minimum: 0 }),
  confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});
export type Word = Static<typeof WordSchema>;

/**
 * A speaker's voice, chosen in the studio and saved in the script (it overrides the version's
 * voice_library_id and voice_anonymization for this speaker): `speaker` (their own voice: matched,
 * converted where a converter is installed), `library` (a library voice, `library_voice_id`) or
 * `anonymized` (moved away from theirs by `anonymization`, default 1).
 */
export const SpeakerVoiceSchema = Type.Object({
  source: Type.Union([Type.Literal('speaker'), Type.Literal('library'), Type.Literal('anonymized')]),
  library_voice_id: Type.Optional(Type.String({ maxLength: 200 })),
  anonymization: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});
export type SpeakerVoice = Static<typeof SpeakerVoiceSchema>;

export const SpeakerSchema = Type.Object({
  id: Type.String(),
  /** Display name given in the studio. */
  name: Type.Optional(Type.String({ maxLength: 200 })),
  voice: Type.Optional(SpeakerVoiceSchema),
  /** Blob key of the speaker's reference clip (cleanest 6-20 s of separated speech). */
  reference_key: Type.Optional(Type.String()),
  /** Seconds of speech attributed to this speaker. */
  speech_seconds: Type.Optional(Type.Number()),
});
export type Speaker = Static<typeof SpeakerSchema>;

/** What a transcript segment and a script segment both have: the id, the time (seconds) and the speaker id. */
/** A span of the timeline, in seconds. */
const SPAN = { start: Type.Number({ minimum: 0 }), end: Type.Number({ minimum: 0 }) };

const SEGMENT_PLACE = { id: Type.String(), ...SPAN, speaker: Type.String() };

/**
 * Text the recognizer decoded that was taken out of a transcript segment, and why: the repeats of
 * a repetition loop (Whisper decoding one phrase again and again at every temperature, a
 * hallucination), the first copy (`kept`) left in the segment. `start`/`end`: where the removed
 * words were (seconds).
 */
export const RemovedTextSchema = Type.Object({
  text: Type.String(),
  ...SPAN,
  kind: Type.Literal('repetition_loop'),
  kept: Type.String(),
  reason: Type.String(),
});
export type RemovedText = Static<typeof RemovedTextSchema>;

export const TranscriptSegmentSchema = Type.Object({
  ...SEGMENT_PLACE,
  text: Type.String(),
  words: Type.Array(WordSchema),
  /** Text removed from this segment (never silently), with the reason; absent when none was. */
  removed: Type.Optional(Type.Array(RemovedTextSchema)),
});
export type TranscriptSegment = Static<typeof TranscriptSegmentSchema>;

/**
 * What the separation stage did: the engine (`htdemucs`, `none` when no model ran, `given_tracks`)
 * and, when it was planned, where the model ran and the measurement that decided it.
 */
export const TranscriptSeparationSchema = Type.Object({
  engine: Type.String(),
  /** none: no model; spans: the model ran on `spans` only; full: everywhere. */
  mode: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('spans'), Type.Literal('full')])),
  /** Whether the source has a background worth separating (none + false: the speech track is the source, the background the source outside speech: see `kept`). */
  background: Type.Optional(Type.Boolean()),
  background_kind: Type.Optional(Type.Union([Type.Literal('music'), Type.Literal('noise')])),
  reason: Type.Optional(Type.String()),
  /** Seconds of audio the model ran on. */
  model_seconds: Type.Optional(Type.Number({ minimum: 0 })),
  spans: Type.Optional(Type.Array(Type.Object({ start: Type.Number({ minimum: 0 }), end: Type.Number({ minimum: 0 }) }))),
  /** Levels in dBFS / dB, flatness 0..1, seconds; null where there was nothing to measure. */
  measurement: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]))),
  /**
   * What the background track holds: the source's audio as it is outside speech, the model's
   * background (`model`) or silence (no model ran) in the `replaced` regions (the speech padded by
   * `pad_seconds`), cross-faded over `crossfade_seconds` beyond each of their edges
   * (`faded_seconds` in all). Only speech is replaced.
   */
  kept: Type.Optional(
    Type.Object({
      outside_speech: Type.Literal('source'),
      under_speech: Type.Union([Type.Literal('model'), Type.Literal('silence')]),
      kept_seconds: Type.Number({ minimum: 0 }),
      replaced_seconds: Type.Number({ minimum: 0 }),
      faded_seconds: Type.Number({ minimum: 0 }),
      pad_seconds: Type.Number({ minimum: 0 }),
      crossfade_seconds: Type.Number({ minimum: 0 }),
      replaced: Type.Array(Type.Object({ start: Type.Number({ minimum: 0 }), end: Type.Number({ minimum: 0 }) })),
    }),
  ),
});
export type TranscriptSeparation = Static<typeof TranscriptSeparationSchema>;

/**
 * A cluster of speech that did not become a speaker of its own, and why: `folded` (under the
 * minimum share of the speech, its windows went to the nearest speaker) or `merged` (the count
 * estimate preferred it joined to another speaker).
 */
export const SpeakerAdjustmentSchema = Type.Object({
  kind: Type.Union([Type.Literal('folded'), Type.Literal('merged')]),
  /** The speaker that took (most of) its speech. */
  into: Type.String(),
  /** Speech windows of the cluster (1.5 s every 0.75 s of speech) and their share of all windows. */
  windows: Type.Integer({ minimum: 0 }),
  share: Type.Number({ minimum: 0, maximum: 1 }),
  reason: Type.String(),
});
export type SpeakerAdjustment = Static<typeof SpeakerAdjustmentSchema>;

/** How the speakers were found: the count given (speakers_count), estimated (bic, threshold), or none (no speech windows). */
export const SpeakerCountMethodSchema = Type.Union([Type.Literal('speakers_count'), Type.Literal('bic'), Type.Literal('threshold'), Type.Literal('none')]);

/** Source-language transcript of an asset (times relative to the trimmed source). */
export const TranscriptSchema = Type.Object({
  v: Type.Literal(1),
  locale: Type.String(),
  /** Engine that produced it: an ASR engine id, or "source_srt". */
  engine: Type.String(),
  duration: Type.Number(),
  speakers: Type.Array(SpeakerSchema),
  segments: Type.Array(TranscriptSegmentSchema),
  /** Blob keys of the separated (or given) speech and background tracks this transcript was made from. */
  tracks: Type.Optional(Type.Object({ speech: Type.String(), background: Type.String() })),
  separation: Type.Optional(TranscriptSeparationSchema),
  /** The speaker-embedding engine that told the speakers apart, its model file, and how it was chosen. */
  speaker_engine: Type.Optional(EngineRecordSchema),
  /** The engine each prepare stage ran (separation, vad, asr, speakers): model, sha256, provider, selection and reason. */
  engines: Type.Optional(EngineRecordsSchema),
  /** How the speaker count was reached. */
  speaker_count_method: Type.Optional(SpeakerCountMethodSchema),
  /** Clusters folded or merged into another speaker, with the reason. */
  speaker_adjustments: Type.Optional(Type.Array(SpeakerAdjustmentSchema)),
  /**
   * Windows of speech (found by the VAD) that Whisper judged silent (openai's no-speech check:
   * no-speech probability over 0.6 with an average log-probability under -1): left out, or
   * transcribed after all (`kept`) when every window was judged so, rather than an empty transcript.
   */
  no_speech_windows: Type.Optional(Type.Array(Type.Object({ ...SPAN, no_speech_probability: Type.Number({ minimum: 0, maximum: 1 }), avg_logprob: Type.Number(), kept: Type.Boolean() }))),
});
export type Transcript = Static<typeof TranscriptSchema>;

export const ScriptSegmentSchema = Type.Object({
  ...SEGMENT_PLACE,
  source_text: Type.String(),
  target_text: Type.String(),
  source_words: Type.Optional(Type.Array(WordSchema)),
  /** Target words with timings, once synthesis has placed them. */
  target_words: Type.Optional(Type.Array(WordSchema)),
  /** The glossary terms found in source_text and whether the translation carried each (glossary.ts). */
  glossary: Type.Optional(GlossaryLineSchema),
});
export type ScriptSegment = Static<typeof ScriptSegmentSchema>;

/** The editable script of one version. */
export const VersionScriptSchema = Type.Object({
  v: Type.Literal(1),
  asset_id: Type.String(),
  version_id: Type.String(),
  source_locale: Type.String(),
  target_locale: Type.String(),
  /** Translation engine id, or "reference_srt". */
  translation_engine: Type.String(),
  /** The engines that made this script: the transcript's (separation, vad, asr, speakers) and translation. */
  engines: Type.Optional(EngineRecordsSchema),
  speakers: Type.Array(SpeakerSchema),
  segments: Type.Array(ScriptSegmentSchema),
  updated_at: Type.String(),
});
export type VersionScript = Static<typeof VersionScriptSchema>;
