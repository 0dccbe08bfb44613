/**
 * A back-transcription's words split into the dubbed lines (quality-words.ts): each line's text comes
 * from the words heard inside its own span, and a repetition loop (a Whisper hallucination) is
 * reported on every line it reaches into, not only where it starts.
 */
import { describe, expect, it } from 'vitest';
import { lineTranscripts, wordsByLine, wordsOverLines, type TimedWord } from './quality-words.js';

const lines = [
  { id: 'a', start: 0, end: 5 },
  { id: 'b', start: 6, end: 8.5 },
  { id: 'c', start: 9, end: 12 },
];
const words = (texts: string, start: number, end: number, loop = false): TimedWord[] => {
  const t = texts.split(' ');
  return t.map((text, i) => ({ text, start: start + ((end - start) * i) / t.length, end: start + ((end - start) * (i + 1)) / t.length, ...(loop ? { loop: true } : {}) }));
};

describe("a back-transcription's words by line", () => {
  it("each line's text is the words heard in its span, in order", () => {
    const heard = [...words('e o mundo que me usa', 0, 5), ...words('o país está para ti', 6, 8.5), ...words('pedir que podes fazer', 9, 12)];
    const t = lineTranscripts(lines, heard);
    expect(Object.fromEntries(t)).toEqual({
      a: { text: 'e o mundo que me usa', loop: false },
      b: { text: 'o país está para ti', loop: false },
      c: { text: 'pedir que podes fazer', loop: false },
    });
    expect(Object.fromEntries(wordsByLine(lines, heard))).toEqual({ a: 'e o mundo que me usa'.split(' '), b: 'o país está para ti'.split(' '), c: 'pedir que podes fazer'.split(' ') });
  });

  it('a loop the engine marked over two lines reaches both; a line with none of its words stays measured', () => {
    // one Whisper segment from 6 to 12 s: "o país morre do palco," four times, laid over lines b and c
    const looped = wordsOverLines([{ start: 6, end: 12, words: words('o país morre do palco, o país morre do palco, o país morre do palco, o país morre do palco,', 6, 12, true) }], lines);
    expect(looped.every((w) => w.loop === true)).toBe(true);
    const t = lineTranscripts(lines, [...words('e o mundo que me usa', 0, 5), ...looped]);
    expect(t.get('a')).toEqual({ text: 'e o mundo que me usa', loop: false });
    // 5.5 s of lines under the segment (2.5 s of b, 3 of c): 20 words by character share, 9 in b
    expect(t.get('b')).toEqual({ text: 'o país morre do palco, o país morre do', loop: true });
    expect(t.get('c')).toEqual({ text: 'palco, o país morre do palco, o país morre do palco,', loop: true });
  });

  it("a loop inside one line's own words is found there even unmarked; a word between two lines goes to the nearest", () => {
    const t = lineTranscripts(lines, [...words('ha ha ha ha ha ha', 0, 5), { text: 'sim', start: 8.6, end: 8.7 }]);
    expect(t.get('a')).toEqual({ text: 'ha ha ha ha ha ha', loop: true });
    expect(t.get('b')).toEqual({ text: 'sim', loop: false });
    expect(t.get('c')).toEqual({ text: '', loop: false });
  });

  it('words the engine timed on their own (cross-attention) keep their times; the others are laid over the lines by character share', () => {
    // one segment over lines b and c: "Canselleto, el generato rezo", the engine's times put "el" at c's start
    const aligned = [
      { text: 'Canselleto,', start: 6.02, end: 8.3, aligned: true },
      { text: 'el', start: 9.0, end: 9.2, aligned: true },
      { text: 'generato', start: 9.2, end: 9.9, aligned: true },
      { text: 'rezo', start: 9.9, end: 10.4, aligned: true },
    ];
    const laid = wordsOverLines([{ start: 6, end: 10.4, words: aligned }], lines);
    expect(laid).toEqual(aligned.map(({ text, start, end }) => ({ text, start, end })));
    expect(Object.fromEntries(wordsByLine(lines, laid))).toEqual({ a: [], b: ['Canselleto,'], c: ['el', 'generato', 'rezo'] });
    // by character share over the 2.5 + 1.4 s of lines under the segment, "el" falls in b (its middle 1.87 s into the 3.9, b the first 2.5)
    const spread = wordsOverLines([{ start: 6, end: 10.4, words: aligned.map(({ text, start, end }) => ({ text, start, end })) }], lines);
    expect(Object.fromEntries(wordsByLine(lines, spread))).toEqual({ a: [], b: ['Canselleto,', 'el'], c: ['generato', 'rezo'] });
  });
});
