import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { extractAudio, readWav, type PlanarAudio } from '@dub/media';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { VoiceMatcher } from './matching/voice-matcher.js';
import { anonymizedTarget } from './matching/anonymize.js';
import { analyzeVoice } from './analysis/voice-profile.js';
import { medianPitch, semitones } from './analysis/pitch.js';
import { DEFAULT_VOICE, type VoiceSettings } from './types.js';
import { itWithMedia, media } from '../../../test/support/media.js';

const ctx = resolveContext();
const LINE = 'Hola, me llamo Laura y trabajo en una oficina en el centro de la ciudad.';
const engine = createEspeakEngine();
const matcher = new VoiceMatcher(engine);

async function speak(voice: VoiceSettings, text = LINE, locale = 'es-ES'): Promise<PlanarAudio> {
  return engine.synthesize({ text, locale, voice, speed: 1 }, ctx);
}
const f0 = (a: PlanarAudio): number => medianPitch(a.channels[0]!, a.sampleRate);

describe('voice matching', () => {
  let low: PlanarAudio;
  let high: PlanarAudio;
  let dir: string;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'voice-match-'));
    // two English reference speakers made by espeak-ng itself: a low male and a high female voice
    const ref = 'This is the reference recording of a speaker, talking for a few seconds about nothing in particular.';
    low = await engine.synthesize({ text: ref, locale: 'en-US', speed: 1, voice: { ...DEFAULT_VOICE, variant: 'm1', pitch: 15 } }, ctx);
    high = await engine.synthesize({ text: ref, locale: 'en-US', speed: 1, voice: { ...DEFAULT_VOICE, variant: 'f2', pitch: 75 } }, ctx);
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('maps a low and a high reference to different families and pitch settings', async () => {
    const pl = analyzeVoice(low);
    const ph = analyzeVoice(high);
    expect(pl.gender).toBe('male');
    expect(ph.gender).toBe('female');
    const ml = await matcher.match(pl, { locale: 'es-ES' }, ctx);
    const mh = await matcher.match(ph, { locale: 'es-ES' }, ctx);
    expect(ml.settings.variant).toMatch(/^m/);
    expect(mh.settings.variant).toMatch(/^f/);
    expect(ml.targetF0).toBeCloseTo(pl.medianF0, 6);
    // the dubbed (Spanish) voices land within 3 semitones of their speakers, far closer than the default voice
    const dl = f0(await speak(ml.settings));
    const dh = f0(await speak(mh.settings));
    const d0 = f0(await speak(DEFAULT_VOICE));
    expect(Math.abs(semitones(pl.medianF0, dl))).toBeLessThan(3);
    expect(Math.abs(semitones(ph.medianF0, dh))).toBeLessThan(3);
    expect(Math.abs(semitones(ph.medianF0, dh))).toBeLessThan(Math.abs(semitones(ph.medianF0, d0)));
  });

  itWithMedia(['voice-ref-a.mp3', 'voice-ref-b.mp3'], 'follows the real reference clips: the lower speaker gets a lower pitch and a lower dubbed F0', async () => {
    const profiles = [];
    for (const name of ['voice-ref-a', 'voice-ref-b']) {
      const wav = path.join(dir, `${name}.wav`);
      await extractAudio(media(`${name}.mp3`), wav, { sampleRate: 16000, channels: 1, end: 12 });
      profiles.push(analyzeVoice(await readWav(wav)));
    }
    const [a, b] = profiles as [ReturnType<typeof analyzeVoice>, ReturnType<typeof analyzeVoice>];
    expect(a.medianF0).toBeGreaterThan(b.medianF0 * 1.1);
    const ma = await matcher.match(a, { locale: 'es-ES' }, ctx);
    const mb = await matcher.match(b, { locale: 'es-ES' }, ctx);
    expect(ma.settings.pitch).toBeGreaterThan(mb.settings.pitch);
    const da = f0(await speak(ma.settings));
    const db = f0(await speak(mb.settings));
    expect(da).toBeGreaterThan(db * 1.05);
    expect(Math.abs(semitones(a.medianF0, da))).toBeLessThan(3);
    expect(Math.abs(semitones(b.medianF0, db))).toBeLessThan(3);
  });

  it('gives speakers of the same family different variants', async () => {
    const p = analyzeVoice(low);
    const m0 = await matcher.match(p, { locale: 'es-ES', speakerIndex: 0 }, ctx);
    const m1 = await matcher.match(p, { locale: 'es-ES', speakerIndex: 1 }, ctx);
    expect(m0.settings.variant).not.toBe(m1.settings.variant);
  });

  it('anonymization moves the measured F0 away from the speaker, growing with the amount', async () => {
    for (const ref of [low, high]) {
      const p = analyzeVoice(ref);
      const shifts: number[] = [];
      for (const amount of [0, 0.5, 1]) {
        const m = await matcher.match(p, { locale: 'es-ES', anonymization: amount }, ctx);
        shifts.push(Math.abs(semitones(p.medianF0, f0(await speak(m.settings)))));
      }
      expect(shifts[1]!).toBeGreaterThan(shifts[0]! + 1.5);
      expect(shifts[2]!).toBeGreaterThan(shifts[1]! + 1.5);
      expect(shifts[2]!).toBeGreaterThan(5);
    }
  });

  it('anonymization targets: proportional shift towards the other family, flipping it at 1', () => {
    expect(anonymizedTarget(110, 0)).toMatchObject({ f0: 110, family: 'male', variantShift: 0 });
    expect(anonymizedTarget(110, 0.5).semitones).toBeCloseTo(4, 6);
    expect(anonymizedTarget(110, 1).family).toBe('female');
    expect(anonymizedTarget(220, 1).family).toBe('male');
    expect(anonymizedTarget(220, 1).semitones).toBeCloseTo(-8, 6);
    expect(() => anonymizedTarget(110, 1.5)).toThrow(/voice_anonymization/);
  });
});
