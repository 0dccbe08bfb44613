import { createSeparationEngine } from '../registry.js';
import { separationConformance } from '../testing/conformance.js';
import { describeWithMedia, MEDIA_DIR } from '../../../../test/support/media.js';

describeWithMedia(['jfk.wav', 'music-coffee.wav'], 'htdemucs on a speech + music mix', () => {
  separationConformance('htdemucs', () => createSeparationEngine('htdemucs'), { mediaDir: MEDIA_DIR });
});
