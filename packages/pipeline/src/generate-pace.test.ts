import { describe, expect, it } from 'vitest';
import { resolveContext, type ScriptSegment } from '@dub/core';
import { articulationRate, countSyllables, createEspeakEngine, DEFAULT_VOICE, speechSecondsOfAudio } from '@dub/voice';
import { calibrationText, planPace, sourceSpeechSeconds } from './generate-pace.js';

const ctx = resolveContext();
const engine = createEspeakEngine();
const seg = (id: string, speaker: string, start: number, end: number, en: string, es: string, words: [number, number][]): ScriptSegment => ({
  id, start, end, speaker, source_text: en, target_text: es,
  source_words: words.map(([s, e], i) => ({ text: en.split(' ')[i] ?? '', start: s, end: e })),
});
// S1 speaks fast (16 syllables in 2.0 s of words, a 0.6 s pause left out), S2 slowly (4 syllables in 1.6 s)
const SEGMENTS = [
  seg('a', 'S1', 0, 2.6, 'I think we should probably leave before the traffic', 'Creo que deberíamos irnos antes del tráfico', [[0, 0.2], [0.2, 0.5], [0.5, 0.7], [0.7, 1.0], [1.6, 2.0], [2.0, 2.2], [2.2, 2.4], [2.4, 2.5], [2.5, 2.6]]),
  seg('b', 'S2', 3, 4.6, 'Yes, okay then', 'Sí, vale entonces', [[3, 3.5], [3.6, 4.1], [4.2, 4.6]]),
];

describe('the speaker pace plan', () => {
  it('measures source speech without pauses, and samples whole dubbed lines per speaker', () => {
    expect(sourceSpeechSeconds(SEGMENTS[0]!, SEGMENTS[0]!.source_words)).toBeCloseTo(2.0, 6);
    expect(sourceSpeechSeconds({ start: 1, end: 2.5 }, [])).toBe(1.5); // no word times: the span
    expect(calibrationText(SEGMENTS, 'S2')).toBe('Sí, vale entonces');
    expect(calibrationText(SEGMENTS, 'S3')).toBe('');
  });

  it('gives each speaker the espeak-ng rate input that matches their rate, within 0.75..1.5, and a line spoken at it comes near that rate', async () => {
    const speak = (text: string, voice = DEFAULT_VOICE, speed = 1) => engine.synthesize({ text, locale: 'es-ES', voice, speed }, ctx);
    const plan = await planPace({ engineId: 'espeak-ng', sourceLocale: 'en-US', targetLocale: 'es-ES', segments: SEGMENTS, transcriptWords: new Map(), voices: { S1: DEFAULT_VOICE, S2: DEFAULT_VOICE }, enabled: true, speak }, ctx);
    const s1 = plan.speakers.S1!;
    const s2 = plan.speakers.S2!;
    expect(plan.lines.a).toMatchObject({ sourceSyllables: 13, sourceSeconds: 2 }); // I think we should prob-a-bly leave be-fore the traf-fic
    expect(s1.rate).toBeCloseTo(13 / 2, 3);
    expect(s2.rate).toBeCloseTo(plan.lines.b!.sourceSyllables / 1.6, 3);
    for (const s of [s1, s2]) {
      const wanted = s.rate! / s.voiceRate!;
      expect(Math.abs(s.pace - Math.min(1.5, Math.max(0.75, wanted)))).toBeLessThanOrEqual(0.025 + 1e-9); // in steps of 0.05
      expect(s.clamped).toBe(wanted < 0.75 || wanted > 1.5);
    }
    expect(s1.pace).toBeGreaterThan(s2.pace);
    // S1's line at S1's pace: its articulation rate is near S1's (within 20 %, unless the range clamped it)
    const text = SEGMENTS[0]!.target_text;
    const a = await speak(text, DEFAULT_VOICE, s1.pace);
    const rate = articulationRate(await countSyllables(text, 'es-ES'), speechSecondsOfAudio(a.channels[0]!, a.sampleRate))!;
    if (!s1.clamped) expect(Math.abs(rate / s1.rate! - 1)).toBeLessThan(0.2);
    else expect(rate).toBeLessThan(s1.rate!);
  });

  it('with the speech track: the speech in the line\'s span, a pause in it left out', async () => {
    const en = async (t: string) => (await engine.synthesize({ text: t, locale: 'en-US', voice: DEFAULT_VOICE, speed: 1 }, ctx)).channels[0]!;
    const [p1, p2] = [await en('I think we should probably leave'), await en('before the traffic')];
    const sr = 22050;
    const pause = Math.round(0.6 * sr);
    const track = new Float32Array(p1.length + pause + p2.length);
    track.set(p1, 0);
    track.set(p2, p1.length + pause);
    const line = seg('a', 'S1', 0, track.length / sr, SEGMENTS[0]!.source_text, SEGMENTS[0]!.target_text, []);
    const plan = await planPace({ engineId: 'espeak-ng', sourceLocale: 'en-US', targetLocale: 'es-ES', segments: [line], transcriptWords: new Map(), voices: { S1: DEFAULT_VOICE }, enabled: false, speak: () => Promise.reject(new Error('off')), sourceSpeech: { samples: track, sampleRate: sr } }, ctx);
    const spoken = speechSecondsOfAudio(p1, sr) + speechSecondsOfAudio(p2, sr);
    expect(Math.abs(plan.lines.a!.sourceSeconds - spoken)).toBeLessThan(0.15); // the frames at the joins
    expect(plan.lines.a!.sourceSeconds).toBeLessThan(track.length / sr - 0.6);
  });

  it('off: every voice at the default rate, said; Chatterbox: no rate input, said', async () => {
    const speak = () => Promise.reject(new Error('not called'));
    const off = await planPace({ engineId: 'espeak-ng', sourceLocale: 'en-US', targetLocale: 'es-ES', segments: SEGMENTS, transcriptWords: new Map(), voices: { S1: DEFAULT_VOICE }, enabled: false, speak }, ctx);
    expect(off.speakers.S1).toMatchObject({ pace: 1, voiceRate: null, reason: expect.stringMatching(/DUB_SPEAKER_PACE=off/) });
    const cb = await planPace({ engineId: 'chatterbox', sourceLocale: 'en-US', targetLocale: 'es-ES', segments: SEGMENTS, transcriptWords: new Map(), voices: { S1: DEFAULT_VOICE }, enabled: true, speak }, ctx);
    expect(cb.speakers.S1).toMatchObject({ pace: 1, reason: expect.stringMatching(/Chatterbox takes no rate input/) });
  });
});
