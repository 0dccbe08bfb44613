/**
 * Speaking a line once: placement needs every line's length at speed 1 before any line is fitted,
 * and fitting then speaks most lines again at the speed their time asks for. With an engine that
 * counts a line's length units (TtsEngine.lengthUnits; Kokoro: the phoneme tokens its model reads,
 * pads included) and has rate control, each voice's first lines in time order are spoken at speed
 * 1 (the calibration: at least CALIBRATION.lines lines and CALIBRATION.units units, or all its
 * lines); their measured lengths give the voice's seconds per unit (total seconds / total units)
 * and the share of that which is speech without pauses (for the line's pace, generate-pace.ts).
 * Every other line's length at speed 1 is predicted as units x seconds per unit, placement reads
 * the prediction, and fitting speaks the line once, at the speed the prediction asks for, and a
 * second time only when the real length misses its time by more than 10 % (fitPredicted in
 * @dub/voice); the report's per-line `synthesis` says which (`natural`: measured or predicted,
 * `passes`, `speed`, `tempo`). The prediction depends only on the lines' texts, voices and the
 * calibration lines' audio, in time order: the same input gives the same lengths. A voice's rate
 * is kept per asset by voice (`length-rate`, not keyed by the lines it came from): a later
 * generation or re-dub that edits a voice's first line keeps the rate, so no other line moves.
 *
 * DUB_SYNTH_PREDICT=off (options.synthesis.predict = false) speaks every line at speed 1 first,
 * as before, for before/after measurements (bench/synth-once.mjs).
 */

/** Bump when predictions change for the same inputs. */
export const PREDICT_VERSION = 1;

/** A voice's calibration: its first lines in time order until there are this many lines and units. */
export const CALIBRATION = Object.freeze({ lines: 2, units: 100 });

/** A line spoken at speed 1: its length units, seconds (silence trimmed) and seconds of speech without pauses. */
export interface LengthSample {
  units: number;
  natural: number;
  speechSeconds: number;
}

/** A voice's length model: seconds per unit at speed 1, and the share of them that is speech without pauses. */
export interface LengthRate {
  secondsPerUnit: number;
  speechShare: number;
  /** Lines and units it was measured over. */
  lines: number;
  units: number;
}

export interface LineUnits {
  id: string;
  /** The voice the line is spoken with (lines of one voice share a rate). */
  voice: string;
  units: number;
}

/**
 * The lines to speak at speed 1 (in `lines`' order, time order): per voice, its lines until it has
 * CALIBRATION.lines of them and CALIBRATION.units units; lines without units are always spoken.
 */
export function calibrationLines(lines: readonly LineUnits[], calibration: { lines: number; units: number } = CALIBRATION): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, { lines: number; units: number }>();
  for (const l of lines) {
    if (!(l.units > 0)) {
      out.add(l.id);
      continue;
    }
    const s = seen.get(l.voice) ?? { lines: 0, units: 0 };
    if (s.lines >= calibration.lines && s.units >= calibration.units) continue;
    out.add(l.id);
    seen.set(l.voice, { lines: s.lines + 1, units: s.units + l.units });
  }
  return out;
}

/** The rate of one voice from its lines at speed 1; undefined without units or seconds. */
export function lengthRate(samples: readonly LengthSample[]): LengthRate | undefined {
  const ok = samples.filter((s) => s.units > 0 && s.natural > 0);
  const units = ok.reduce((a, s) => a + s.units, 0);
  const seconds = ok.reduce((a, s) => a + s.natural, 0);
  if (!(units > 0 && seconds > 0)) return undefined;
  const speech = ok.reduce((a, s) => a + Math.min(s.speechSeconds, s.natural), 0);
  return { secondsPerUnit: r6(seconds / units), speechShare: r6(speech / seconds), lines: ok.length, units };
}

/** A line's predicted length at speed 1 (silence trimmed) and its speech without pauses. */
export function predictLength(rate: LengthRate, units: number): { natural: number; speechSeconds: number } {
  const natural = r6(units * rate.secondsPerUnit);
  return { natural, speechSeconds: r6(natural * rate.speechShare) };
}

function r6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
