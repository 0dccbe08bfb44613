/**
 * The One Euro filter (Casiez, Roussel, Vogel, CHI 2012): a low-pass filter whose cut-off rises
 * with the signal's speed, so a still face does not jitter and a moving one does not lag.
 * Vector form: every component filtered with the same speed-adapted cut-off.
 */

export interface OneEuroOptions {
  /** Cut-off at rest, Hz (default 1.5). */
  minCutoff?: number;
  /** How fast the cut-off rises with speed, per (unit/s) (default 0.01). */
  beta?: number;
  /** Cut-off of the speed estimate, Hz (default 1). */
  dCutoff?: number;
}

function alpha(cutoff: number, dt: number): number {
  const tau = 1 / (2 * Math.PI * cutoff);
  return 1 / (1 + tau / dt);
}

export class OneEuroFilter {
  private readonly minCutoff: number;
  private readonly beta: number;
  private readonly dCutoff: number;
  private x: number[] | undefined;
  private dx: number[] | undefined;

  constructor(opts: OneEuroOptions = {}) {
    this.minCutoff = opts.minCutoff ?? 1.5;
    this.beta = opts.beta ?? 0.01;
    this.dCutoff = opts.dCutoff ?? 1;
  }

  /** Forget the past (a gap in the track). */
  reset(): void {
    this.x = undefined;
    this.dx = undefined;
  }

  /** Filter one sample `v` taken `dt` seconds after the previous one. */
  filter(v: readonly number[], dt: number): number[] {
    if (!this.x || !this.dx || !(dt > 0)) {
      this.x = [...v];
      this.dx = v.map(() => 0);
      return [...v];
    }
    const ad = alpha(this.dCutoff, dt);
    const dx = v.map((vi, i) => ad * ((vi - this.x![i]) / dt) + (1 - ad) * this.dx![i]);
    const speed = Math.sqrt(dx.reduce((s, d) => s + d * d, 0) / dx.length);
    const a = alpha(this.minCutoff + this.beta * speed, dt);
    this.x = v.map((vi, i) => a * vi + (1 - a) * this.x![i]);
    this.dx = dx;
    return [...this.x];
  }
}
