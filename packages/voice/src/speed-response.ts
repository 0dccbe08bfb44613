/**
 * How an engine's length answers its rate input: `lengthRatio(speed)` is a line's length at
 * `speed` over its length at speed 1, `speedFor(ratio)` the speed that gives a length `ratio`
 * times the speed-1 length (its inverse). Duration fitting converts a wanted length into a speed
 * with it, and a length measured at a speed back into the length at speed 1.
 *
 * INVERSE_SPEED takes the length as inversely proportional to the speed (1/speed), what fitting
 * assumed for every engine before. KOKORO_SPEED_RESPONSE is Kokoro's, measured
 * (bench/kokoro-speed.mjs): the length is not 1/speed (speed 0.9: 1.07 times longer, not 1.11;
 * 1.4: 0.65 times as long, not 0.71).
 */

export interface SpeedResponse {
  /** Names the response in cache keys and reports. */
  readonly id: string;
  /** Length at `speed` over the length at speed 1 (decreasing in speed, 1 at speed 1). */
  lengthRatio(speed: number): number;
  /** The speed whose length is `ratio` times the length at speed 1 (the inverse of lengthRatio). */
  speedFor(ratio: number): number;
}

/** Length inversely proportional to the speed. */
export const INVERSE_SPEED: SpeedResponse = Object.freeze({
  id: 'inverse',
  lengthRatio: (speed: number) => 1 / speed,
  speedFor: (ratio: number) => 1 / ratio,
});

/**
 * A response through measured points (speed, length ratio), linear between them in log speed
 * and log ratio, the end segments extended past the first and last points; (1, 1) is added when
 * absent. The ratios must fall strictly as the speed grows, so every ratio has one speed.
 */
export function tableSpeedResponse(id: string, points: readonly (readonly [number, number])[]): SpeedResponse {
  const pts = [...points.filter(([s]) => s !== 1), [1, 1] as const].sort((a, b) => a[0] - b[0]).map(([s, r]) => [Math.log(s), Math.log(r)] as const);
  if (pts.length < 2) throw new Error(`speed response ${id}: at least one point besides speed 1`);
  for (const [i, [s, r]] of pts.entries()) {
    if (!Number.isFinite(s) || !Number.isFinite(r)) throw new Error(`speed response ${id}: speeds and ratios must be positive`);
    if (i > 0 && !(s > pts[i - 1]![0] && r < pts[i - 1]![1])) throw new Error(`speed response ${id}: the length ratio must fall as the speed grows (at speed ${Math.exp(s)})`);
  }
  // the segment [i, i+1] that holds x along coordinate c (0: log speed, 1: log ratio, which falls)
  const segment = (x: number, c: 0 | 1): number => {
    let i = 0;
    while (i < pts.length - 2 && (c === 0 ? x > pts[i + 1]![0] : x < pts[i + 1]![1])) i++;
    return i;
  };
  const along = (x: number, i: number, from: 0 | 1): number => {
    const a = pts[i]!;
    const b = pts[i + 1]!;
    const to = from === 0 ? 1 : 0;
    return a[to] + ((x - a[from]) * (b[to] - a[to])) / (b[from] - a[from]);
  };
  return Object.freeze({
    id,
    lengthRatio(speed: number): number {
      const x = Math.log(speed);
      return Math.exp(along(x, segment(x, 0), 0));
    },
    speedFor(ratio: number): number {
      const y = Math.log(ratio);
      return Math.exp(along(y, segment(y, 1), 1));
    },
  });
}

/**
 * Kokoro-82M v1.0 int8's length response (bench/kokoro-speed.mjs, 09:34-09:45 UTC 2026-11-27):
 * 8 sentences written for it (Spanish, French, Italian, English; 7 to 80 tokens; ef_dora, em_alex,
 * ff_siwis, if_sara, im_nicola, af_heart, am_adam) at speeds 0.7..1.6, each point the geometric
 * mean of their length ratios (silence trimmed). Not a power of the speed: 0.9 and 1.2 answer less
 * than 1/speed, 0.7 and 1.4 more. On 8 other sentences (held out; 23 to 122 tokens) it predicts a
 * line's length at a speed from its length at speed 1 within 3.2 % on average, 5.8 % at p90, 8.6 %
 * at most (1/speed: 4.6 %, 9.6 %, 13 %; the best single power s^-1.10: 4.4 %, 8.3 %, 9.9 %).
 */
export const KOKORO_SPEED_RESPONSE: SpeedResponse = tableSpeedResponse('kokoro-v1', [
  [0.7, 1.521],
  [0.8, 1.265],
  [0.9, 1.087],
  [1.2, 0.868],
  [1.4, 0.659],
  [1.6, 0.608],
]);

/** The measured response of engine `engineId` (fitting converts lengths to its speeds with it); undefined where none was measured (1/speed). */
export function speedResponseOf(engineId: string): SpeedResponse | undefined {
  return engineId === 'kokoro' ? KOKORO_SPEED_RESPONSE : undefined;
}
