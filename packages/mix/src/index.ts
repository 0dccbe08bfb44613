/**
 * @dub/mix: the dubbed audio track. Replace (background + dubbed speech) and voice-over
 * (ducked original + delayed dubbed speech), loudness-normalised (-16 LUFS, -1.5 dBTP by
 * default) with a true-peak limiter. Usable alone:
 *   import { mixReplace } from '@dub/mix';
 */
export { mixReplace, type MixReplaceOptions } from './mix-replace.js';
export { mixVoiceOver, VOICE_OVER_DEFAULTS, type MixVoiceOverOptions } from './mix-voice-over.js';
export type { MixResult } from './mix-result.js';
export { resolveMixOutput, type MixOutputOptions, type ResolvedMixOutput } from './options.js';
export { measureLoudness, parseEbur128Summary, STREAMING_LOUDNESS, EBU_R128_BROADCAST, type LoudnessTarget, type LoudnessMeasurement } from './loudness.js';
export { normalizeLoudness, parseLoudnormJson, type NormalizeOptions } from './normalize.js';
export { duckGainsDb, speechActivity, gainAt, type DuckEnvelopeOptions } from './duck-envelope.js';
