/** The closed-form test signals of scripts/reference_signals.py (make_signal), rebuilt in TypeScript for the front-end reference tests. */

export interface SignalSpec {
  rate: number;
  length: number;
  chirp?: { amp: number; f0: number; f1: number; am: number };
  tones?: [number, number][];
  noiseAmp?: number;
  seed?: number;
  silences?: [number, number][];
}

/** The closed-form signal of scripts/reference_signals.py make_signal. */
export function makeSignal(s: SignalSpec): Float32Array {
  const out = new Float32Array(s.length);
  const total = s.length / s.rate;
  const silences = (s.silences ?? []).map(([a, b]) => [Math.floor(a * s.rate), Math.floor(b * s.rate)] as const);
  let state = (s.seed ?? 1) >>> 0;
  for (let i = 0; i < s.length; i++) {
    const t = i / s.rate;
    let v = 0;
    const c = s.chirp;
    if (c) {
      const env = 1 - c.am + c.am * Math.sin(2 * Math.PI * 3 * t);
      v += c.amp * env * Math.sin(2 * Math.PI * (c.f0 * t + ((c.f1 - c.f0) * t * t) / (2 * total)));
    }
    for (const [a, hz] of s.tones ?? []) v += a * Math.sin(2 * Math.PI * hz * t);
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    v += (s.noiseAmp ?? 0) * (2 * (state / 4294967296) - 1);
    if (silences.some(([a, b]) => a <= i && i < b)) v = 0;
    out[i] = v;
  }
  return out;
}
