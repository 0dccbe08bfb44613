/**
 * A repetition loop that survives every temperature, in a transcript that is dubbed: its repeats
 * are removed (dropLoopRepeats; the speaker said the phrase once), the words and times of what
 * stays unchanged, the segment's span and text fitted to them, and each removal listed. Through
 * the engine on a scripted decoder (no model runs): `removeLoopRepeats` cuts the loop and lists
 * it in `removedRepeats`; without it (a back-transcription) the loop stays, marked.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import type { AsrSegment, AsrWord } from './asr/types.js';
import { WhisperFeatureExtractor } from './dsp/whisper-mel.js';
import { openSpeechAudio } from './speech-audio.js';
import type { WindowDecoder } from './whisper/decode.js';
import { whisperOver, type LoadedWhisper } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { dropLoopRepeats, hasRepetitionLoop } from './whisper/repetition.js';
import { WhisperTokenizer } from './whisper/tokenizer.js';

/** Words of `text` from `start`, `step` seconds each. */
function timed(text: string, start: number, step: number): AsrWord[] {
  return text.split(' ').map((t, i) => ({ text: t, start: start + i * step, end: start + (i + 1) * step, confidence: 0.9 }));
}
function seg(text: string, start: number, end: number, step: number): AsrSegment {
  return { start, end, text, words: timed(text, start, step) };
}
const REASON = /^repetition loop: "I'm a d-" decoded 4 times in a row at every temperature \(a hallucination, not speech\): kept once, the repeats removed$/;

describe('dropLoopRepeats', () => {
  it('keeps the first copy inside a segment; the words after the loop and the span stay', () => {
    const s = seg("So I'm a d- I'm a d- I'm a d- I'm a d- right.", 0, 7, 0.5);
    const { segments, removed } = dropLoopRepeats([s], 'en-US');
    expect(segments).toEqual([
      {
        start: 0,
        end: 7,
        text: "So I'm a d- right.",
        words: [
          { text: 'So', start: 0, end: 0.5, confidence: 0.9 },
          { text: "I'm", start: 0.5, end: 1, confidence: 0.9 },
          { text: 'a', start: 1, end: 1.5, confidence: 0.9 },
          { text: 'd-', start: 1.5, end: 2, confidence: 0.9 },
          { text: 'right.', start: 6.5, end: 7, confidence: 0.9 },
        ],
      },
    ]);
    expect(removed).toEqual([{ start: 2, end: 6.5, text: "I'm a d- I'm a d- I'm a d-", kept: "I'm a d-", keptStart: 0.5, keptEnd: 2, period: 3, copies: 4, reason: expect.stringMatching(REASON) }]);
    // the input is left as it was
    expect(s.words).toHaveLength(14);
  });

  it('a segment that is nothing but the loop keeps one copy (a partial last copy goes too) and ends where it ends', () => {
    const { segments, removed } = dropLoopRepeats([seg("I'm a d- I'm a d- I'm a d- I'm a d- I'm", 3, 9.5, 0.5)], 'en-US');
    expect(segments).toEqual([{ start: 3, end: 4.5, text: "I'm a d-", words: timed("I'm a d-", 3, 0.5) }]);
    expect(removed).toMatchObject([{ start: 4.5, end: 9.5, text: "I'm a d- I'm a d- I'm a d- I'm", kept: "I'm a d-", keptStart: 3, keptEnd: 4.5, period: 3, copies: 4 }]);
  });

  it('a last word that begins the next copy (a decoding stopped at the loop) goes with the repeats', () => {
    const { segments, removed } = dropLoopRepeats([seg('Ich bin ein d- Ich bin ein d- Ich bin ein d- I', 0, 6.5, 0.5)], 'de-DE');
    expect(segments).toEqual([{ start: 0, end: 2, text: 'Ich bin ein d-', words: timed('Ich bin ein d-', 0, 0.5) }]);
    expect(removed).toMatchObject([{ start: 2, end: 6.5, text: 'Ich bin ein d- Ich bin ein d- I', copies: 3 }]);
    // not when another word follows, nor when it does not begin the next copy
    expect(dropLoopRepeats([seg('Ich bin ein d- Ich bin ein d- Ich bin ein d- I see', 0, 7, 0.5)], 'de-DE').segments[0]!.text).toBe('Ich bin ein d- I see');
    expect(dropLoopRepeats([seg('Ich bin ein d- Ich bin ein d- Ich bin ein d- Ja', 0, 6.5, 0.5)], 'de-DE').segments[0]!.text).toBe('Ich bin ein d- Ja');
  });

  it("the kept copy's last word takes the loop's last punctuation", () => {
    const { segments, removed } = dropLoopRepeats([seg('o país morre do palco, o país morre do palco, o país morre do palco.', 10, 16, 0.4)], 'pt-PT');
    expect(segments.map((s) => [s.start, s.end, s.text])).toEqual([[10, 12, 'o país morre do palco.']]);
    expect(segments[0]!.words.map((w) => [w.text, w.start, w.end])).toEqual([
      ['o', 10, 10.4],
      ['país', 10.4, 10.8],
      ['morre', 10.8, 11.2],
      ['do', 11.2, 11.6],
      ['palco.', 11.6, 12],
    ]);
    expect(removed[0]).toMatchObject({ start: 12, end: 16, text: 'o país morre do palco, o país morre do palco.', kept: 'o país morre do palco,', copies: 3 });
  });

  it('across segments (one copy per segment): segments of repeats alone are dropped, one that goes on starts at its first kept word', () => {
    const segments = [
      seg('Hello.', 0, 0.5, 0.5),
      seg('Thank you for watching.', 0.5, 2.5, 0.5),
      seg('Thank you for watching.', 2.5, 4.5, 0.5),
      seg('Thank you for watching.', 4.5, 6.5, 0.5),
      { ...seg('Thank you for watching. And now', 6.5, 10, 0.5), end: 10 },
    ];
    const r = dropLoopRepeats(segments, 'en-US');
    expect(r.segments).toEqual([segments[0], segments[1], { start: 8.5, end: 10, text: 'And now', words: timed('And now', 8.5, 0.5) }]);
    expect(r.removed).toMatchObject([{ start: 2.5, end: 8.5, text: 'Thank you for watching. Thank you for watching. Thank you for watching.', kept: 'Thank you for watching.', keptStart: 0.5, keptEnd: 2.5, period: 4, copies: 4 }]);
  });

  it('leaves segments without a loop as they are', () => {
    const segments = [seg('Não, não, não.', 0, 1.5, 0.5), seg('ask not what your country can do for you', 2, 6.5, 0.5)];
    expect(dropLoopRepeats(segments, 'pt-PT')).toEqual({ segments, removed: [] });
  });
});

// ---------------------------------------------------------------- through the engine
const tok = WhisperTokenizer.fromFile(fileURLToPath(new URL('../fixtures/whisper-tiny-test/tokenizer.json', import.meta.url)));
const LOOP = 'Ich bin ein d- Ich bin ein d- Ich bin ein d- Ich bin ein d- Ich bin ein d-';

/** Sessions whose every decoding reads out `text` (each step's logits peak on its next token, then the end token). */
function readingSessions(text: string): LoadedWhisper['sessions'] {
  const ids = [...tok.encode(text), tok.eot];
  const decoder: WindowDecoder = {
    startDecoding() {
      let prompt = true;
      let n = 0;
      let past = 0;
      return {
        get pastLength() {
          return past;
        },
        async step(step: readonly number[]) {
          if (prompt) prompt = false;
          else n += step.length;
          past += step.length;
          const row = new Float32Array(tok.vocabSize);
          row[ids[Math.min(n, ids.length - 1)]!] = 10;
          return row;
        },
        positionLogits: () => new Float32Array(tok.vocabSize),
      };
    },
  };
  return { ...decoder, encode: async () => ({}) } as unknown as LoadedWhisper['sessions'];
}

describe('the Whisper engine with a loop every temperature decodes', () => {
  it('removeLoopRepeats: the segment keeps the first copy with its words and times, the removal is listed; without it the loop stays, marked', async () => {
    const w: LoadedWhisper = { sessions: readingSessions(LOOP), tokenizer: tok, features: new WhisperFeatureExtractor(80) };
    // no suppressed tokens: the tiny tokenizer has no " -" token, so openai's list would take its first token, the space
    const engine = whisperOver(w, resolveWhisperOptions({ detectLanguage: false, timestamps: false, bestOf: 1, suppressTokens: [] }));
    const audio = await openSpeechAudio({ samples: new Float32Array(16000 * 4), sampleRate: 16000 });
    const request = { locale: 'de-DE', language: 'de', regions: [{ start: 0.5, end: 3.5, probability: 1 }] };
    try {
      const marked = await engine.transcribe(audio, request, resolveContext());
      expect(marked.removedRepeats).toBeUndefined();
      expect(marked.segments).toHaveLength(1);
      const loop = marked.segments[0]!;
      expect(hasRepetitionLoop(loop.text)).toBe(true);
      expect(loop.text.startsWith('Ich bin ein d- Ich bin ein d- Ich bin ein d-')).toBe(true);
      // the decoding stops once its complete words hold the loop (stopOnLoop): the piece of the next copy it had begun is not marked
      const looped = loop.words.filter((x) => x.loop).length;
      expect(looped).toBeGreaterThanOrEqual(12);
      expect(loop.words.slice(looped).map((x) => x.text)).toEqual(['I']);

      const cut = await engine.transcribe(audio, { ...request, removeLoopRepeats: true }, resolveContext());
      const first = loop.words.slice(0, 4);
      expect(cut.segments).toEqual([{ ...loop, end: first[3]!.end, text: 'Ich bin ein d-', words: first }]);
      expect(cut.removedRepeats).toEqual([
        {
          start: loop.words[4]!.start,
          end: loop.words[loop.words.length - 1]!.end,
          text: loop.words.slice(4).map((x) => x.text).join(' '),
          kept: 'Ich bin ein d-',
          keptStart: first[0]!.start,
          keptEnd: first[3]!.end,
          period: 4,
          copies: looped / 4,
          reason: expect.stringMatching(/^repetition loop: "Ich bin ein d-" decoded \d+ times in a row at every temperature/),
        },
      ]);
    } finally {
      await audio.close();
    }
  });
});
