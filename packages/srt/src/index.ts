export type { SrtCue, SubtitleSegment, SubtitleWord } from './types.js';
export { parseSrt, validateSrt, type SrtParseErrorReason, type SrtValidation, type ValidateSrtOptions } from './parse.js';
export {
  readSrt,
  checkSrt,
  srtNoteMessages,
  looksLikeWebVtt,
  sourceSrtNotes,
  type ReadCue,
  type ReadSrtOptions,
  type SrtReadCheck,
  type SrtReadErrorReason,
  type SrtReadNote,
  type SrtReadNoteKind,
  type SrtReading,
} from './read.js';
export { decodeSrtBytes, type DecodeSrtOptions, type DecodedSrt } from './decode.js';
export { serializeSrt, type SerializeSrtOptions } from './serialize.js';
export { formatSrtTimestamp } from './timestamp.js';
export { countGraphemes } from './graphemes.js';
export {
  SRT_PROFILE_NAMES,
  SRT_PROFILE_LIMITS,
  DEFAULT_SRT_PROFILE,
  isSrtProfileName,
  type SrtProfileName,
  type SrtProfileLimits,
} from './profiles.js';
export {
  DEFAULT_MIN_GAP,
  DEFAULT_MIN_DURATION,
  DEFAULT_MAX_PAUSE,
  type FormatSubtitlesOptions,
} from './options.js';
export {
  formatSubtitles,
  formatSubtitlesWithReport,
  type FormatReport,
  type SrtViolation,
  type SrtViolationKind,
} from './format.js';
export { transcriptSubtitles, scriptSubtitles } from './from-script.js';
export { fitsLanguage, legacyEncodings, knowsLetters } from './letters.js';
