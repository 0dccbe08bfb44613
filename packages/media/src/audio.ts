/** Planar audio in memory: one Float32Array per channel, all the same length. */
export interface PlanarAudio {
  sampleRate: number;
  channels: Float32Array[];
}

/** Frames (samples per channel) of planar channels; throws when the channels differ in length. */
export function frameCount(channels: readonly Float32Array[]): number {
  const n = channels[0]?.length ?? 0;
  for (const c of channels) if (c.length !== n) throw new RangeError(`channels differ in length (${n} vs ${c.length})`);
  return n;
}

/** `parts` one after another in one Float32Array (the pieces of a signal, a model's output tensors). */
export function concatSamples(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
