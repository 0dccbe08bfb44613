/** Seconds as ffmpeg reads them (fixed-point, never exponent notation). */
export function ffTime(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) throw new RangeError(`invalid time ${sec}`);
  return sec.toFixed(6);
}
