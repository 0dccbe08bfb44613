/**
 * How an espeak-ng voice answers its pitch parameter: the median F0 it produces at a few -p
 * values (measured once per language+variant by synthesizing a calibration phrase), so a
 * target F0 can be turned into a -p value by interpolating in log-frequency.
 */
import type { StageContext } from '@dub/core';
import type { TtsEngine } from '../types.js';
import { medianPitch } from '../analysis/pitch.js';
import { syllableRate } from '../analysis/activity.js';

/** Digits read in every language (espeak-ng says them in the voice's language). */
export const CALIBRATION_TEXT = '12, 34, 56, 78, 90. 21, 43, 65, 87, 9.';
export const CALIBRATION_PITCHES = [0, 25, 50, 75, 99] as const;
export const CALIBRATION_WPM = 165;

export interface PitchCalibration {
  locale: string;
  variant: string;
  /** Median F0 (Hz) at each of CALIBRATION_PITCHES. */
  f0: number[];
  /** Syllables per second of the calibration phrase at CALIBRATION_WPM, pitch 50. */
  syllablesPerSecond: number;
}

export async function calibrate(engine: TtsEngine, locale: string, variant: string, ctx: StageContext): Promise<PitchCalibration> {
  const f0: number[] = [];
  let syllablesPerSecond = 0;
  for (const pitch of CALIBRATION_PITCHES) {
    const audio = await engine.synthesize(
      { text: CALIBRATION_TEXT, locale, speed: 1, voice: { variant, pitch, wordsPerMinute: CALIBRATION_WPM, amplitude: 100 } },
      ctx,
    );
    const mono = audio.channels[0]!;
    f0.push(medianPitch(mono, audio.sampleRate, { minHz: 50, maxHz: 500 }));
    if (pitch === 50) syllablesPerSecond = syllableRate(mono, audio.sampleRate).perSecond;
  }
  // keep the curve monotonic (a failed measurement would otherwise fold it)
  for (let i = 1; i < f0.length; i++) if (!(f0[i]! > f0[i - 1]!)) f0[i] = f0[i - 1]! * 1.05;
  return { locale, variant, f0, syllablesPerSecond };
}

/** The -p value (0..99) whose F0 is closest to `targetHz` (clamped to what the variant reaches). */
export function pitchForF0(cal: PitchCalibration, targetHz: number): number {
  const xs = CALIBRATION_PITCHES;
  const ys = cal.f0.map((v) => Math.log(Math.max(1, v)));
  const y = Math.log(Math.max(1, targetHz));
  if (y <= ys[0]!) return xs[0]!;
  for (let i = 1; i < xs.length; i++) {
    if (y <= ys[i]!) {
      const t = (y - ys[i - 1]!) / (ys[i]! - ys[i - 1]!);
      return Math.round(xs[i - 1]! + t * (xs[i]! - xs[i - 1]!));
    }
  }
  return xs[xs.length - 1]!;
}

/** The F0 (Hz) a -p value gives, from the calibration curve. */
export function f0ForPitch(cal: PitchCalibration, pitch: number): number {
  const xs = CALIBRATION_PITCHES;
  const p = Math.min(99, Math.max(0, pitch));
  for (let i = 1; i < xs.length; i++) {
    if (p <= xs[i]!) {
      const t = (p - xs[i - 1]!) / (xs[i]! - xs[i - 1]!);
      return Math.exp(Math.log(cal.f0[i - 1]!) + t * (Math.log(cal.f0[i]!) - Math.log(cal.f0[i - 1]!)));
    }
  }
  return cal.f0[cal.f0.length - 1]!;
}
