/**
 * @dub/voice: speech synthesis (Kokoro-82M ONNX by default where set-up installed it, espeak-ng everywhere, Piper/VITS ONNX on real hosts, Chatterbox zero-shot cloning on GPU hosts), classical voice
 * matching, library voices, anonymization and duration fitting. Usable alone:
 *   import { synthesize } from '@dub/voice';
 */
export { DEFAULT_VOICE, type VoiceSettings, type SynthesisRequest, type TtsCapabilities, type TtsEngine } from './types.js';
export { TTS_ENGINES, TTS_ENGINE_IDS, DEFAULT_TTS_ENGINE, espeakPoorNote, isTtsEngineId, VOICE_CONVERSION_ENGINES, VOICE_CONVERSION_IDS, type TtsEngineConfig, type TtsEngineId } from './registry.js';
export { synthesize, resolveSynthesizeOptions, type SynthesizeOptions, type ResolvedSynthesizeOptions } from './synthesize.js';
export { EspeakEngine, createEspeakEngine, espeakArgs, espeakVoiceName, ESPEAK_SAMPLE_RATE, type EspeakEngineOptions } from './engines/espeak-engine.js';
export { PiperEngine, createPiperEngine, PIPER_DEFAULT_VOICES, type PiperEngineOptions } from './engines/piper-engine.js';
export { parsePiperConfig, loadPiperConfig, PIPER_BOS, PIPER_EOS, PIPER_PAD, type PiperVoiceConfig } from './engines/piper-config.js';
export { phonemize, phonemeIds, splitClauses, type Clause, type PhonemizedSentence } from './engines/piper-phonemes.js';
export { trackPitch, medianPitch, semitones, type PitchOptions, type PitchTrack } from './analysis/pitch.js';
export { frameLevels, activeFrames, speechExtent, trimSilence, syllableRate, type ActivityOptions } from './analysis/activity.js';
export { countIpaSyllables, countSyllables, espeakIpaOf, speechSecondsOfSpans, speechSecondsOfAudio, articulationRate, paceFor, ENGINE_PACE_RANGE, PAUSE_SECONDS, type SyllableOptions } from './analysis/articulation.js';
export { analyzeVoice, genderOf, toMono, GENDER_SPLIT_HZ, type VoiceProfile, type VoiceGender } from './analysis/voice-profile.js';
export { calibrate, pitchForF0, f0ForPitch, CALIBRATION_TEXT, type PitchCalibration } from './matching/espeak-calibration.js';
export {
  VoiceMatcher,
  DEFAULT_MALE_VARIANTS,
  DEFAULT_FEMALE_VARIANTS,
  type VoiceMatcherOptions,
  type MatchRequest,
  type MatchedVoice,
} from './matching/voice-matcher.js';
export { anonymizedTarget, checkAnonymization, MAX_SHIFT_SEMITONES, type AnonymizedTarget } from './matching/anonymize.js';
export { listLibraryVoices, getLibraryVoice, libraryVoiceSettings, LIBRARY_FILE, type LibraryVoice } from './library.js';
export { INVERSE_SPEED, KOKORO_SPEED_RESPONSE, speedResponseOf, tableSpeedResponse, type SpeedResponse } from './speed-response.js';
export { fitDuration, fitPredicted, PREDICTED_MISS, resolveFitOptions, type FitDurationOptions, type FitResult, type PredictedFitResult } from './fit-duration.js';
export { timeStretch, detectStretchers, type Stretcher, type StretchOptions } from './stretch.js';
export { TIMBRE_BANDS, spectralEnvelope, timbreCorrection, applyTimbre, type TimbreOptions } from './matching/timbre.js';
export { ToneColorConverter, withToneConversion, openVoiceSpectrogram, tonePieces, TONE_PIECE_SECONDS, readOpenVoiceConfig, OPENVOICE_MODEL_ID, OPENVOICE_FILES, TONE_SIZE, type OpenVoiceConfig, type OpenVoiceOptions } from './engines/openvoice.js';
export {
  ChatterboxEngine,
  createChatterboxEngine,
  applyRepetitionPenalty,
  tokenCap,
  CHATTERBOX_MODEL_ID,
  CHATTERBOX_FILES,
  CHATTERBOX_SAMPLE_RATE,
  CHATTERBOX_TOKEN_RATE,
  START_SPEECH_TOKEN,
  STOP_SPEECH_TOKEN,
  type ChatterboxOptions,
  type ChatterboxFiles,
  type GeneratedTokens,
} from './engines/chatterbox.js';
export { BpeTokenizer, prepareChatterboxText, puncNorm, koreanNormalize, chatterboxLanguage, chatterboxTextStepNote, unportedTextStep, CHATTERBOX_LANGUAGES, CHATTERBOX_UNPORTED_STEPS, type PreparedText } from './engines/chatterbox-text.js';
export {
  KokoroEngine,
  createKokoroEngine,
  chooseKokoroVoice,
  kokoroVoices,
  kokoroVoicesFor,
  styleRow,
  KOKORO_MODEL_ID,
  KOKORO_MODEL_FILE,
  KOKORO_TOKENIZER_FILE,
  KOKORO_SAMPLE_RATE,
  KOKORO_STYLE_DIM,
  KOKORO_STYLE_ROWS,
  KOKORO_MIN_SPEED,
  KOKORO_MAX_SPEED,
  KOKORO_LOCALES,
  KOKORO_VOICES_FILE,
  type KokoroEngineOptions,
  type KokoroVoice,
  type ChosenKokoroVoice,
} from './engines/kokoro.js';
export { kokoroPhonemes, kokoroLanguage, kokoroLocaleNote, kokoroRefusal, kokoroChunks, kokoroClauseMark, kokoroJsEnglish, misakiEspeakPhonemes, KokoroTokenizer, KOKORO_LANGUAGES, KOKORO_PT_PT_NOTE, KOKORO_REFUSED, KOKORO_MAX_TOKENS, type KokoroLanguage, type KokoroClause } from './engines/kokoro-text.js';

/** Model files for library users: fetch (ensureModel, fetchModels) into modelsDir(), shared with the CLI (see @dub/core). */
export { ensureModel, fetchModels, modelsDir, resolveModelFile, type FetchedFile } from '@dub/core';
