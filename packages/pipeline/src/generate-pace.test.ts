import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext, type ScriptSegment } from '@dub/core';
import { WavReader, writeWav, type AudioSource } from '@dub/media';
import { articulationRate, countSyllables, createEspeakEngine, DEFAULT_VOICE, KOKORO_SPEED_RESPONSE, speechSecondsOfAudio } from '@dub/voice';
import { linePace, linePaceOf, planPace, sourceSpeechSeconds, withLinePaces } from './generate-pace.js';

const ctx = resolveContext();
/** Audio in memory as an AudioSource, counting the frames read. */
const inMemory = (channels: Float32Array[], sampleRate: number): AudioSource & { framesRead: number } => ({
  sampleRate,
  channelCount: channels.length,
  frames: channels[0]!.length,
  framesRead: 0,
  async read(start: number, count: number) {
    const n = Math.max(0, Math.min(count, this.frames - start));
    this.framesRead += n;
    return channels.map((c) => c.slice(start, start + n));
  },
});
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
  it('measures source speech without pauses (words, else the span)', () => {
    expect(sourceSpeechSeconds(SEGMENTS[0]!, SEGMENTS[0]!.source_words)).toBeCloseTo(2.0, 6);
    expect(sourceSpeechSeconds({ start: 1, end: 2.5 }, [])).toBe(1.5); // no word times: the span
  });

  it('gives each line the espeak-ng rate input that brings it to its speaker\'s rate, within 0.75..1.5; spoken at it, it comes near that rate', async () => {
    const speak = (text: string, speed = 1) => engine.synthesize({ text, locale: 'es-ES', voice: DEFAULT_VOICE, speed }, ctx);
    const plan = await planPace({ sourceLocale: 'en-US', segments: SEGMENTS, transcriptWords: new Map(), speakers: ['S1', 'S2'] }, ctx);
    expect(plan.lines.a).toMatchObject({ sourceSyllables: 13, sourceSeconds: 2, basis: 'words' }); // I think we should prob-a-bly leave be-fore the traf-fic
    expect(plan.speakers.S1!.basis).toBe('words');
    // without words or a speech track: the span, and the speaker's rate is not matched
    const spans = await planPace({ sourceLocale: 'en-US', segments: [{ ...SEGMENTS[0]!, source_words: [] }], transcriptWords: new Map(), speakers: ['S1'] }, ctx);
    expect(spans.speakers.S1).toMatchObject({ basis: 'span', speechSeconds: 2.6 });
    expect(withLinePaces(spans, new Map([['a', { speaker: 'S1', pace: await linePace('espeak-ng', 'Hola', 'es-ES', await speak('Hola'), null, true, ctx) }]])).speakers.S1).toMatchObject({ pace: 1, reason: expect.stringMatching(/not matched/) });
    expect(plan.speakers.S1!.rate).toBeCloseTo(13 / 2, 3);
    expect(plan.speakers.S2!.rate).toBeCloseTo(plan.lines.b!.sourceSyllables / 1.6, 3);
    const lines = new Map<string, { speaker: string; pace: Awaited<ReturnType<typeof linePace>> }>();
    for (const s of SEGMENTS) {
      const lp = await linePace('espeak-ng', s.target_text, 'es-ES', await speak(s.target_text), plan.speakers[s.speaker]!.rate, true, ctx);
      const wanted = plan.speakers[s.speaker]!.rate! / lp.voiceRate!;
      expect(Math.abs(lp.pace - Math.min(1.5, Math.max(0.75, wanted)))).toBeLessThanOrEqual(0.025 + 1e-9); // in steps of 0.05
      expect(lp.clamped).toBe(wanted < 0.75 || wanted > 1.5);
      lines.set(s.id, { speaker: s.speaker, pace: lp });
    }
    const a = lines.get('a')!.pace;
    expect(a.syllables).toBe(await countSyllables(SEGMENTS[0]!.target_text, 'es-ES'));
    expect(a.pace).toBeGreaterThan(lines.get('b')!.pace.pace);
    // S1's line at its pace: its articulation rate is near S1's (within 20 %, unless the range held it)
    const at = await speak(SEGMENTS[0]!.target_text, a.pace);
    const rate = articulationRate(a.syllables!, speechSecondsOfAudio(at.channels[0]!, at.sampleRate))!;
    if (!a.clamped) expect(Math.abs(rate / plan.speakers.S1!.rate! - 1)).toBeLessThan(0.2);
    else expect(rate).toBeLessThan(plan.speakers.S1!.rate!);
    // per speaker: the voice's pooled rate and the median pace
    const done = withLinePaces(plan, lines);
    expect(done.speakers.S1).toMatchObject({ rate: plan.speakers.S1!.rate, voiceRate: a.voiceRate, pace: a.pace, clamped: a.clamped });
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
    const plan = await planPace({ sourceLocale: 'en-US', segments: [line], transcriptWords: new Map(), speakers: ['S1'], sourceSpeech: inMemory([track], sr) }, ctx);
    const spoken = speechSecondsOfAudio(p1, sr) + speechSecondsOfAudio(p2, sr);
    expect(Math.abs(plan.lines.a!.sourceSeconds - spoken)).toBeLessThan(0.15); // the frames at the joins
    expect(plan.speakers.S1!.basis).toBe('speech_track');
    expect(plan.lines.a!.sourceSeconds).toBeLessThan(track.length / sr - 0.6);
  });

  it('reads only the lines\' spans of the track, from a stereo WAV on disk as from memory', async () => {
    const sr = 22050;
    const p = await engine.synthesize({ text: 'I think we should probably leave', locale: 'en-US', voice: DEFAULT_VOICE, speed: 1 }, ctx);
    const voice = p.channels[0]!;
    // 20 s of track, one line at 2 s and one at 12 s; the right channel at half the level
    const left = new Float32Array(20 * sr);
    left.set(voice, 2 * sr);
    left.set(voice, 12 * sr);
    const right = left.map((x) => x / 2);
    const dur = voice.length / sr;
    const lines = [seg('a', 'S1', 2, 2 + dur, 'I think we should probably leave', 'x', []), seg('b', 'S1', 12, 12 + dur, 'I think we should probably leave', 'x', [])];
    const mem = inMemory([left, right], sr);
    const fromMemory = await planPace({ sourceLocale: 'en-US', segments: lines, transcriptWords: new Map(), speakers: ['S1'], sourceSpeech: mem }, ctx);
    expect(mem.framesRead).toBeLessThanOrEqual(2 * voice.length + 2); // the spans, not the 20 s
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pace-'));
    try {
      const file = path.join(dir, 'speech.wav');
      await writeWav(file, { channels: [left, right], sampleRate: sr }, { format: 'float32' });
      const reader = await WavReader.open(file);
      const fromDisk = await planPace({ sourceLocale: 'en-US', segments: lines, transcriptWords: new Map(), speakers: ['S1'], sourceSpeech: reader }, ctx).finally(() => reader.close());
      expect(fromDisk).toEqual(fromMemory);
      // the span's speech, measured on the channels' mean
      const mono = voice.map((x) => (x + x / 2) / 2);
      expect(fromDisk.lines.b!.sourceSeconds).toBeCloseTo(speechSecondsOfAudio(mono, sr), 3);
      expect(fromDisk.speakers.S1!.basis).toBe('speech_track');
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it('off: the default rate, said; Chatterbox: no rate input, said', async () => {
    const audio = await engine.synthesize({ text: 'Sí, vale entonces', locale: 'es-ES', voice: DEFAULT_VOICE, speed: 1 }, ctx);
    const off = await linePace('espeak-ng', 'Sí, vale entonces', 'es-ES', audio, 6, false, ctx);
    expect(off).toMatchObject({ pace: 1, syllables: 6, reason: expect.stringMatching(/DUB_SPEAKER_PACE=off/) });
    expect(off.voiceRate).toBeGreaterThan(2);
    const cb = await linePace('chatterbox', 'Sí, vale entonces', 'es-ES', audio, 6, true, ctx);
    expect(cb).toMatchObject({ pace: 1, reason: expect.stringMatching(/Chatterbox takes no rate input/) });
  });

  it("a Kokoro line's input comes from its measured length response", async () => {
    // 6 syllables in 1.2 s: 5 a second; the speaker speaks 6 a second, so the line must last 5/6 as long
    const inverse = await linePaceOf('kokoro', 'Sí, vale entonces', 'es-ES', 1.2, 6, true, ctx);
    const measured = await linePaceOf('kokoro', 'Sí, vale entonces', 'es-ES', 1.2, 6, true, ctx, KOKORO_SPEED_RESPONSE);
    expect(inverse).toMatchObject({ syllables: 6, voiceRate: 5, pace: 1.2 });
    expect(measured).toMatchObject({ syllables: 6, voiceRate: 5, pace: 1.25 });
  });
});
