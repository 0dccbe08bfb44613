/** concatSamples (audio.ts): pieces one after another, as diarization's windows and BlazeFace's output tensors use it. */
import { describe, expect, it } from 'vitest';
import { concatSamples } from './audio.js';

describe('concatSamples', () => {
  it('puts the parts one after another, empty parts included', () => {
    const out = concatSamples([Float32Array.of(1, 2), new Float32Array(0), Float32Array.of(-0.5), Float32Array.of(3, 4, 5)]);
    expect([...out]).toEqual([1, 2, -0.5, 3, 4, 5]);
  });

  it('is a new array (the parts are not shared) and empty for no parts', () => {
    const part = Float32Array.of(7);
    const out = concatSamples([part]);
    out[0] = 8;
    expect(part[0]).toBe(7);
    expect(concatSamples([]).length).toBe(0);
  });
});
