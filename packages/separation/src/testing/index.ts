/** Test and benchmark helpers that need no test runner: `@dub/separation/testing/fixtures`. */
export { siSdr, rms } from './metrics.js';
export { makeSpeechMusicMix, loadMixFixture, type MixFixture, type MixFixtureOptions, type LoadedMixFixture } from './fixtures.js';
export { ScaledSegmentModel } from './scaled-model.js';
