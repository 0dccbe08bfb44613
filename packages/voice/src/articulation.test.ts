import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { articulationRate, countIpaSyllables, countSyllables, paceFor, speechSecondsOfAudio, speechSecondsOfSpans, ENGINE_PACE_RANGE, PAUSE_SECONDS } from './analysis/articulation.js';
import { createEspeakEngine } from './engines/espeak-engine.js';
import { DEFAULT_VOICE } from './types.js';
import { KOKORO_SPEED_RESPONSE } from './speed-response.js';

/** Sentences with their syllables counted by hand (as spoken: French mute e unspoken, "día" two, diphthongs one). */
const HAND_COUNTED: [string, string, number][] = [
  ['en-US', 'And so my fellow Americans, ask not what your country can do for you.', 19],
  ['en-US', 'The button is hidden under the water bottle.', 13],
  ['es-ES', 'El día que mi tío vio la ciudad, buenos aires.', 15],
  ['es-ES', 'Hoy quiero comprar un poco de pan en la tienda.', 14],
  ['fr-FR', 'Bonjour, je voudrais un croissant et du pain.', 11],
  ['fr-FR', 'Les oiseaux chantent dans le jardin.', 8],
  ['de-DE', 'Meine Freunde haben heute keine Zeit.', 11],
  ['de-DE', 'Das Theater ist aber schön.', 8],
  ['it-IT', 'Buongiorno, come stai oggi?', 8],
  ['pt-BR', 'Eu gosto muito de café.', 8],
];

describe('syllables from espeak-ng phonemes', () => {
  it('counts vowel nuclei: tied diphthongs once, hiatus twice, syllabic consonants, no flags', () => {
    expect(countIpaSyllables('ðˈia')).toBe(2); // día
    expect(countIpaSyllables('bwˈenos ˈa^ɪɾes')).toBe(4); // buenos aires
    expect(countIpaSyllables('ðə bˈʌʔn̩')).toBe(3); // the button
    expect(countIpaSyllables('tˈiː')).toBe(1); // tea: the length mark is no vowel
    expect(countIpaSyllables('kʁwasˈɑ̃')).toBe(2); // croissant: the nasal mark joins its vowel
    expect(countIpaSyllables('(en)wˈiːkɛnd(es)')).toBe(2); // language-switch flags are not letters
    expect(countIpaSyllables('bʊond^ʒˈɔrno')).toBe(3); // buongiorno: ʊ before a vowel is a glide
    expect(countIpaSyllables('')).toBe(0);
  });

  for (const [locale, text, n] of HAND_COUNTED) {
    it(`${locale}: "${text}" has ${n}`, async () => {
      expect(await countSyllables(text, locale)).toBe(n);
    });
  }
});

describe('espeak-ng read once per text', () => {
  it('a text read again takes the IPA already read, without a process', async () => {
    // an espeak-ng that logs each call, then runs the real one
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-espeak-once-'));
    try {
      const log = path.join(dir, 'calls');
      const bin = path.join(dir, 'espeak-ng');
      fs.writeFileSync(bin, `#!/bin/sh\necho x >> '${log}'\nexec espeak-ng "$@"\n`, { mode: 0o755 });
      const text = 'Hoy quiero comprar un poco de pan en la tienda.';
      const first = await countSyllables(text, 'es-ES', { espeakPath: bin });
      const again = await countSyllables(text.replace(' ', '  '), 'es-ES', { espeakPath: bin });
      expect(first).toBe(14);
      expect(again).toBe(first);
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
      // another voice is another read
      await countSyllables(text, 'it-IT', { espeakPath: bin });
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('speech time with pauses left out', () => {
  it('merges word spans across short gaps and drops pauses', () => {
    const words = [
      { start: 0, end: 0.3 },
      { start: 0.35, end: 0.8 }, // 50 ms join: speech
      { start: 1.5, end: 2 }, // 0.7 s pause: left out
      { start: 2.1, end: 2.4 },
    ];
    expect(speechSecondsOfSpans(words)).toBeCloseTo(0.8 + 0.9, 6);
    expect(speechSecondsOfSpans([])).toBe(0);
    expect(PAUSE_SECONDS).toBe(0.25);
  });

  it('in audio: two 0.5 s bursts 0.6 s apart are 1 s of speech; a 0.1 s gap counts as speech', () => {
    const sr = 16000;
    const burst = (s: number, e: number, x: Float32Array) => {
      for (let i = Math.round(s * sr); i < Math.round(e * sr); i++) x[i] = 0.3 * Math.sin((2 * Math.PI * 200 * i) / sr);
    };
    const a = new Float32Array(sr * 3);
    burst(0.2, 0.7, a);
    burst(1.3, 1.8, a);
    expect(speechSecondsOfAudio(a, sr)).toBeCloseTo(1, 1);
    const b = new Float32Array(sr * 3);
    burst(0.2, 0.7, b);
    burst(0.8, 1.3, b);
    expect(speechSecondsOfAudio(b, sr)).toBeCloseTo(1.1, 1);
  });

  it('espeak-ng at 1.3 times its rate articulates about 1.3 times as many syllables a second', async () => {
    const engine = createEspeakEngine();
    const ctx = resolveContext();
    const text = 'Hoy quiero comprar un poco de pan en la tienda.';
    const syl = await countSyllables(text, 'es-ES');
    const rate = async (speed: number) => {
      const a = await engine.synthesize({ text, locale: 'es-ES', voice: DEFAULT_VOICE, speed }, ctx);
      return articulationRate(syl, speechSecondsOfAudio(a.channels[0]!, a.sampleRate))!;
    };
    const r1 = await rate(1);
    const r13 = await rate(1.3);
    // espeak-ng's Spanish at its default 165 words a minute: a natural 4..9 syllables a second
    expect(r1).toBeGreaterThan(4);
    expect(r1).toBeLessThan(9);
    expect(r13 / r1).toBeGreaterThan(1.15);
    expect(r13 / r1).toBeLessThan(1.45);
  });
});

describe('the engine rate input for a speaker', () => {
  it('is the speaker rate over the voice rate, inside the engine natural range', () => {
    expect(paceFor('kokoro', 6, 5)).toEqual({ pace: 1.2, clamped: false });
    expect(paceFor('kokoro', 9, 5)).toEqual({ pace: ENGINE_PACE_RANGE.kokoro!.max, clamped: true });
    expect(paceFor('espeak-ng', 3, 6)).toEqual({ pace: 0.75, clamped: true });
    expect(paceFor('piper', null, 5).pace).toBe(1);
    expect(paceFor('kokoro', 5.3, 5).pace).toBe(1.05); // 1.06 in steps of 0.05
    expect(paceFor('kokoro', 5.1, 5).pace).toBe(1);
    const c = paceFor('chatterbox', 6, 5);
    expect(c.pace).toBe(1);
    expect(c.reason).toMatch(/no rate input/);
    expect(articulationRate(0, 1)).toBeNull();
    expect(articulationRate(5, 0)).toBeNull();
  });

  it("reads the input from the engine's measured length response where it has one", () => {
    // a speaker at 6 syllables a second, the voice at 5: the speech must last 5/6 of its default length;
    // Kokoro answers speed 1.2 with 0.868 of it, so it needs more than 1.2 (1.228, in steps of 0.05: 1.25)
    expect(paceFor('kokoro', 6, 5, KOKORO_SPEED_RESPONSE)).toEqual({ pace: 1.25, clamped: false });
    expect(KOKORO_SPEED_RESPONSE.lengthRatio(1.25)).toBeCloseTo(5 / 6, 1);
    // a slower speaker: 5 / 4.4 = 1.136 times as long; 1/speed says 0.88 (0.9 in steps), Kokoro's response 0.869 (0.85)
    expect(paceFor('kokoro', 4.4, 5).pace).toBe(0.9);
    expect(paceFor('kokoro', 4.4, 5, KOKORO_SPEED_RESPONSE).pace).toBe(0.85);
    expect(paceFor('kokoro', 4.1, 5, KOKORO_SPEED_RESPONSE)).toEqual({ pace: 0.8, clamped: false });
    // the range bounds the input, not the rate ratio
    expect(paceFor('kokoro', 8, 5, KOKORO_SPEED_RESPONSE)).toEqual({ pace: ENGINE_PACE_RANGE.kokoro!.max, clamped: true });
  });
});
