/**
 * A model-free VAD: frame log-energy against a tracked noise floor, mapped through a logistic
 * curve to a probability. Coarse (music and loud noise count as speech) but needs nothing
 * installed; a fallback and a second engine for the conformance suite.
 */
import type { VadEngine, VadEngineFactory, VadStream } from './types.js';

const FRAME = 480; // 30 ms

class EnergyStream implements VadStream {
  private floor = Number.NaN;
  async process(samples: Float32Array): Promise<Float32Array> {
    if (samples.length % FRAME !== 0) throw new RangeError(`energy VAD takes multiples of ${FRAME} samples, got ${samples.length}`);
    const n = samples.length / FRAME;
    const out = new Float32Array(n);
    for (let f = 0; f < n; f++) {
      let e = 0;
      for (let i = f * FRAME; i < (f + 1) * FRAME; i++) e += samples[i]! * samples[i]!;
      const db = 10 * Math.log10(e / FRAME + 1e-10);
      if (db < -60) {
        out[f] = 0; // digital silence says nothing about the noise floor
        continue;
      }
      if (Number.isNaN(this.floor)) this.floor = db;
      // The floor falls fast and rises slowly (about 6 dB per second).
      this.floor = db < this.floor ? 0.7 * this.floor + 0.3 * db : this.floor + 0.2;
      out[f] = 1 / (1 + Math.exp(-(db - this.floor - 15) / 2.5));
    }
    return out;
  }
}

export const createEnergyVad: VadEngineFactory = async () => {
  const engine: VadEngine = { id: 'energy', label: 'energy VAD', frameSamples: FRAME, createStream: () => new EnergyStream(), dispose: async () => {} };
  return engine;
};
