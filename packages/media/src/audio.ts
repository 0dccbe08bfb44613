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
