/** Separation quality measures (for tests and benchmarks). */

/**
 * Scale-invariant signal-to-distortion ratio in dB of `estimate` against `reference` (channels
 * concatenated, each channel's mean removed): 10 log10(|a s|^2 / |a s - e|^2), a = <e,s>/|s|^2.
 */
export function siSdr(estimate: readonly Float32Array[], reference: readonly Float32Array[]): number {
  if (estimate.length !== reference.length) throw new RangeError(`channel counts differ (${estimate.length} vs ${reference.length})`);
  let dot = 0;
  let ref2 = 0;
  let est2 = 0;
  for (let c = 0; c < reference.length; c++) {
    const e = estimate[c]!;
    const s = reference[c]!;
    if (e.length !== s.length) throw new RangeError(`lengths differ (${e.length} vs ${s.length})`);
    const me = mean(e);
    const ms = mean(s);
    for (let i = 0; i < s.length; i++) {
      const ev = e[i]! - me;
      const sv = s[i]! - ms;
      dot += ev * sv;
      ref2 += sv * sv;
      est2 += ev * ev;
    }
  }
  if (ref2 === 0) return -Infinity;
  const a = dot / ref2;
  const target = a * a * ref2;
  // |a s - e|^2 = a^2 |s|^2 - 2 a <e,s> + |e|^2
  const noise = Math.max(target - 2 * a * dot + est2, 1e-20);
  return 10 * Math.log10(Math.max(target, 1e-20) / noise);
}

function mean(x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]!;
  return x.length ? s / x.length : 0;
}

/** Root mean square over all channels. */
export function rms(channels: readonly Float32Array[]): number {
  let s = 0;
  let n = 0;
  for (const c of channels) {
    for (let i = 0; i < c.length; i++) s += c[i]! * c[i]!;
    n += c.length;
  }
  return n ? Math.sqrt(s / n) : 0;
}
