/** Conformance checks every lips engine runs (for engine authors and the package's own tests): `@dub/lips/testing`. */
export { LIPS_CONFORMANCE_CHECKS, type LipsConformanceFixture, type LipsConformanceCheck } from './lips-conformance.js';
