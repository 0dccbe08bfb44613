/**
 * Voice anonymization as the contract's voice_anonymization (0..1): the target F0 moves away
 * from the speaker's by up to MAX_SHIFT_SEMITONES, towards the other voice family (a male voice
 * goes up, a female voice goes down), so at 1 the family (and with it espeak-ng's formant set)
 * flips; from 1/3 on the variant inside the family changes too. Proportional in between.
 */
import { ValidationError } from '@dub/core';
import { genderOf, type VoiceGender } from '../analysis/voice-profile.js';

export const MAX_SHIFT_SEMITONES = 8;
/** From this amount on, another formant variant of the family is used. */
export const VARIANT_CHANGE_AT = 1 / 3;

export interface AnonymizedTarget {
  /** Target median F0, Hz. */
  f0: number;
  family: VoiceGender;
  /** Shift of the variant index inside the family (0 = the matched variant). */
  variantShift: number;
  semitones: number;
}

export function checkAnonymization(amount: number): number {
  if (!(amount >= 0 && amount <= 1)) throw new ValidationError(`voice_anonymization must be within 0..1, got ${amount}`, { field: 'voice_anonymization' });
  return amount;
}

export function anonymizedTarget(f0: number, amount: number): AnonymizedTarget {
  checkAnonymization(amount);
  const from = genderOf(f0);
  const direction = from === 'male' ? 1 : -1;
  const semitones = direction * MAX_SHIFT_SEMITONES * amount;
  const target = f0 * Math.pow(2, semitones / 12);
  return { f0: target, family: genderOf(target), variantShift: amount >= VARIANT_CHANGE_AT ? 1 : 0, semitones };
}
