/**
 * Classical voice matching for pitch-controllable engines (espeak-ng): the speaker's reference
 * clip gives a median F0 and a syllable rate; the matcher picks a variant of the same voice
 * family (male/female by F0) and the pitch parameter that reproduces that F0 (through a
 * per-variant calibration), and scales the speaking rate by the speaker's syllable rate.
 * Calibrations are kept per matcher instance (create one per job or per worker).
 */
import { ValidationError, type StageContext } from '@dub/core';
import type { TtsEngine, VoiceSettings } from '../types.js';
import type { VoiceGender, VoiceProfile } from '../analysis/voice-profile.js';
import { anonymizedTarget } from './anonymize.js';
import { calibrate, CALIBRATION_TEXT, CALIBRATION_WPM, pitchForF0, type PitchCalibration } from './espeak-calibration.js';
import { spectralEnvelope, timbreCorrection, type TimbreOptions } from './timbre.js';

export interface VoiceMatcherOptions {
  /** espeak-ng variants per family, in order of preference (speakers take them in turn). */
  maleVariants?: string[];
  femaleVariants?: string[];
  /** Bounds of the matched speaking rate, words per minute (default 130..230). */
  minWordsPerMinute?: number;
  maxWordsPerMinute?: number;
}

export interface MatchRequest {
  locale: string;
  /** Index of the speaker among the asset's speakers: same-family speakers get different variants. */
  speakerIndex?: number;
  /** voice_anonymization 0..1 (default 0). */
  anonymization?: number;
  /**
   * The speaker's long-term spectral envelope (spectralEnvelope of the reference clip): the
   * settings then carry a timbre correction toward it, scaled down by the anonymization.
   */
  referenceEnvelope?: readonly number[] | null;
  timbre?: TimbreOptions;
}

export interface MatchedVoice {
  settings: VoiceSettings;
  family: VoiceGender;
  /** The F0 the settings aim at, Hz. */
  targetF0: number;
}

export const DEFAULT_MALE_VARIANTS = ['m3', 'm1', 'm7', 'm2'];
export const DEFAULT_FEMALE_VARIANTS = ['f3', 'f1', 'f2', 'f4'];

export class VoiceMatcher {
  private readonly calibrations = new Map<string, Promise<PitchCalibration>>();
  private readonly male: string[];
  private readonly female: string[];
  private readonly minWpm: number;
  private readonly maxWpm: number;

  constructor(private readonly engine: TtsEngine, opts: VoiceMatcherOptions = {}) {
    if (!engine.capabilities.pitchControl) throw new ValidationError(`engine ${engine.id} has no pitch control; voice matching needs one (espeak-ng)`);
    this.male = opts.maleVariants ?? DEFAULT_MALE_VARIANTS;
    this.female = opts.femaleVariants ?? DEFAULT_FEMALE_VARIANTS;
    this.minWpm = opts.minWordsPerMinute ?? 130;
    this.maxWpm = opts.maxWordsPerMinute ?? 230;
  }

  /** The calibration of (locale, variant), measured on first use. */
  calibration(locale: string, variant: string, ctx: StageContext): Promise<PitchCalibration> {
    const key = `${locale}|${variant}`;
    let p = this.calibrations.get(key);
    if (!p) {
      p = calibrate(this.engine, locale, variant, ctx);
      this.calibrations.set(key, p);
      p.catch(() => {
        if (this.calibrations.get(key) === p) this.calibrations.delete(key);
      });
    }
    return p;
  }

  variantOf(family: VoiceGender, index: number): string {
    const list = family === 'male' ? this.male : this.female;
    return list[((index % list.length) + list.length) % list.length]!;
  }

  /** Settings that make the engine sound like `profile` (moved away by `anonymization`). */
  async match(profile: VoiceProfile, req: MatchRequest, ctx: StageContext): Promise<MatchedVoice> {
    const f0 = profile.medianF0 > 0 ? profile.medianF0 : profile.gender === 'female' ? 210 : 120;
    const target = anonymizedTarget(f0, req.anonymization ?? 0);
    const variant = this.variantOf(target.family, (req.speakerIndex ?? 0) + target.variantShift);
    const cal = await this.calibration(req.locale, variant, ctx);
    const pitch = pitchForF0(cal, target.f0);
    let wpm = CALIBRATION_WPM;
    if (profile.syllablesPerSecond > 0 && cal.syllablesPerSecond > 0) wpm = (CALIBRATION_WPM * profile.syllablesPerSecond) / cal.syllablesPerSecond;
    wpm = Math.round(Math.min(this.maxWpm, Math.max(this.minWpm, wpm)));
    const settings: VoiceSettings = { variant, pitch, wordsPerMinute: wpm, amplitude: 100 };
    const strength = (req.timbre?.strength ?? 1) * (1 - (req.anonymization ?? 0));
    if (req.referenceEnvelope && strength > 0) {
      // the envelope of the matched voice, on the calibration text at the matched settings
      const audio = await this.engine.synthesize({ text: CALIBRATION_TEXT, locale: req.locale, speed: 1, voice: settings }, ctx);
      const voice = spectralEnvelope(audio.channels[0]!, audio.sampleRate);
      if (voice) settings.timbre = timbreCorrection(req.referenceEnvelope, voice, { ...req.timbre, strength });
    }
    return { settings, family: target.family, targetF0: target.f0 };
  }
}
