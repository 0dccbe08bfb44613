/** What voice matching needs to know about a speaker, measured from a reference clip. */
import type { PlanarAudio } from '@dub/media';
import { trackPitch, type PitchOptions } from './pitch.js';
import { syllableRate } from './activity.js';

export type VoiceGender = 'male' | 'female';

export interface VoiceProfile {
  /** Median F0 over voiced frames, Hz (0 when nothing voiced was found). */
  medianF0: number;
  /** Spread of F0: 10th..90th percentile in semitones. */
  f0RangeSemitones: number;
  /** Syllable nuclei per second of speaking time. */
  syllablesPerSecond: number;
  /** Seconds of non-silent audio. */
  speechSeconds: number;
  /** Voice family by F0 (below GENDER_SPLIT_HZ: male). */
  gender: VoiceGender;
}

/** Typical adult F0: male ~85-155 Hz, female ~165-255 Hz; the split sits between. */
export const GENDER_SPLIT_HZ = 160;

export function genderOf(f0: number): VoiceGender {
  return f0 >= GENDER_SPLIT_HZ ? 'female' : 'male';
}

/** Mix channels down to mono (mean). */
export function toMono(audio: PlanarAudio): Float32Array {
  const chans = audio.channels;
  if (chans.length === 1) return chans[0]!;
  const n = chans[0]?.length ?? 0;
  const out = new Float32Array(n);
  for (const c of chans) for (let i = 0; i < n; i++) out[i] = out[i]! + c[i]! / chans.length;
  return out;
}

export function analyzeVoice(audio: PlanarAudio, opts: PitchOptions = {}): VoiceProfile {
  const mono = toMono(audio);
  const track = trackPitch(mono, audio.sampleRate, opts);
  const voiced = Array.from(track.f0).filter((v) => v > 0).sort((a, b) => a - b);
  const pct = (p: number): number => voiced[Math.min(voiced.length - 1, Math.floor(p * voiced.length))] ?? 0;
  const range = voiced.length > 10 ? 12 * Math.log2(pct(0.9) / pct(0.1)) : 0;
  const rate = syllableRate(mono, audio.sampleRate);
  return {
    medianF0: track.medianHz,
    f0RangeSemitones: range,
    syllablesPerSecond: rate.perSecond,
    speechSeconds: rate.speechSeconds,
    gender: genderOf(track.medianHz || 120),
  };
}
