/**
 * Band-limited resampling of audio held in memory (windowed sinc, 16 zero crossings, Hann
 * window). Files go through ffmpeg instead (@dub/media extractAudio).
 */
export function resampleSinc(input: Float32Array, fromRate: number, toRate: number, zeroCrossings = 16): Float32Array {
  if (fromRate === toRate) return input;
  if (!(fromRate > 0 && toRate > 0)) throw new RangeError(`invalid sample rates ${fromRate} -> ${toRate}`);
  const ratio = toRate / fromRate;
  const outLen = Math.floor(input.length * ratio);
  const out = new Float32Array(outLen);
  const cutoff = Math.min(1, ratio) * 0.97;
  const half = Math.ceil(zeroCrossings / cutoff);
  for (let j = 0; j < outLen; j++) {
    const center = j / ratio;
    const lo = Math.max(0, Math.ceil(center - half));
    const hi = Math.min(input.length - 1, Math.floor(center + half));
    let acc = 0;
    let norm = 0;
    for (let i = lo; i <= hi; i++) {
      const x = (i - center) * cutoff;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const w = 0.5 + 0.5 * Math.cos((Math.PI * (i - center)) / (half + 1));
      const k = sinc * w;
      acc += input[i]! * k;
      norm += k;
    }
    out[j] = norm !== 0 ? acc / norm : 0;
  }
  return out;
}

/** Average planar channels into one. */
export function downmix(channels: readonly Float32Array[]): Float32Array {
  if (channels.length === 1) return channels[0]!;
  const n = channels[0]?.length ?? 0;
  const out = new Float32Array(n);
  for (const c of channels) for (let i = 0; i < n; i++) out[i] = out[i]! + c[i]!;
  const g = 1 / channels.length;
  for (let i = 0; i < n; i++) out[i] = out[i]! * g;
  return out;
}
