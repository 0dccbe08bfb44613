import { describe, expect, it } from 'vitest';
import { KOKORO_SPEED_RESPONSE } from '@dub/voice';
import { lineLength } from './generate-synthesis.js';
import type { LinePace } from './generate-pace.js';

const pace = (p: number): LinePace => ({ syllables: 20, voiceSeconds: 3.6, voiceRate: 5.5, pace: p, clamped: false });

describe('lineLength (a line\'s length at its pace, for placement)', () => {
  it('counts the length at the pace by the engine\'s response, 1/pace without one', () => {
    // Kokoro at 0.8 speaks 1.265 times longer, not 1.25; at 1.4 0.659 times as long, not 0.714
    expect(lineLength(4, pace(0.8), null, KOKORO_SPEED_RESPONSE).natural).toBeCloseTo(4 * 1.265, 6);
    expect(lineLength(4, pace(1.4), null, KOKORO_SPEED_RESPONSE).natural).toBeCloseTo(4 * 0.659, 6);
    expect(lineLength(4, pace(0.8), null).natural).toBeCloseTo(5, 9);
    expect(lineLength(4, pace(1), null, KOKORO_SPEED_RESPONSE).natural).toBe(4);
    expect(lineLength(4, undefined, null, KOKORO_SPEED_RESPONSE).natural).toBe(4);
  });

  it('leaves the length at the speaker\'s rate to the rates', () => {
    const l = lineLength(4, pace(0.8), 4.4, KOKORO_SPEED_RESPONSE);
    expect(l.atSpeakerRate).toBeCloseTo((4 * 5.5) / 4.4, 9);
  });
});
