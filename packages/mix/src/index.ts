/**
 * @dub/mix: the dubbed audio track. Replace (background + dubbed speech) and voice-over
 * (ducked original + delayed dubbed speech), loudness-normalised (-16 LUFS, -1.5 dBTP by
 * default, BS.1770 measured in JavaScript) with a finite-memory lookahead limiter. Usable alone:
 *   import { mixReplace } from '@dub/mix';
 */
export { mixReplace, type MixReplaceOptions } from './mix-replace.js';
export { updateMixReplace, changedStretches, changedStretchesOfFiles, RESAMPLER_REACH, METER_SETTLE_SECONDS, type MixPrevious, type MixUpdateOptions, type MixUpdateResult } from './mix-update.js';
export { mixUpdateDecision, type MixUpdateDecision, type PreviousMixState } from './mix-update-decision.js';
export { mixVoiceOver, VOICE_OVER_DEFAULTS, type MixVoiceOverOptions } from './mix-voice-over.js';
export type { MixResult } from './mix-result.js';
export { resolveMixOutput, mixInput, type MixOutputOptions, type ResolvedMixOutput } from './options.js';
export { measureLoudness, measureLoudnessFrames, updateLoudnessFrames, parseFramePeak, parseEbur128Summary, STREAMING_LOUDNESS, EBU_R128_BROADCAST, type LoudnessTarget, type LoudnessMeasurement, type LoudnessFrames } from './loudness.js';
export { normalizeLoudness, normalizeLoudnessFfmpeg, chooseGain, parseLoudnormJson, INTER_SAMPLE_MARGIN_DB, DEFAULT_GAIN_TOLERANCE_DB, type NormalizeOptions, type NormalizeResult } from './normalize.js';
export { LoudnessMeter, measureBs1770, measureWavBs1770, integratedFromHops, loudnessRangeFromHops, LRA_RELATIVE_GATE_LU, meterHopFrames, kWeightingFilters, energyToLufs, ABSOLUTE_GATE_LUFS, RELATIVE_GATE_LU, type Bs1770Measurement, type Biquad } from './bs1770.js';
export { PeakLimiter, limitChunk, limiterGains, limiterHoldFrames, limiterReachFrames, LIMITER_HOLD_SECONDS, TRUE_PEAK_TAPS_HALF, type LimitOptions } from './limiter.js';
export { duckGainsDb, speechActivity, gainAt, type DuckEnvelopeOptions } from './duck-envelope.js';
