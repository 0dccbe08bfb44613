/** Conformance suites for engine authors (vitest): `import { vadConformance } from '@dub/asr/testing'`. */
export { vadConformance, type VadConformanceOptions } from './vad-conformance.js';
export { asrConformance, type AsrConformanceOptions } from './asr-conformance.js';
export { embeddingConformance, type EmbeddingConformanceOptions } from './embedding-conformance.js';
