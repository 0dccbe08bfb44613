/** Conformance checks every voice engine runs (for engine authors and the package's own tests): `@dub/voice/testing`. */
export { TTS_CONFORMANCE_CHECKS, type ConformanceCheck, type ConformanceOptions } from './tts-conformance.js';
