import { describe, expect, it } from 'vitest';
import { SRT_PROFILE_LIMITS, isSrtProfileName } from './profiles.js';
import { detectSpaceSeparated, tokenize } from './tokens.js';

const cfg = { spaceSeparated: undefined, locale: undefined, maxLineChars: 42 };
const texts = (text: string, locale?: string) =>
  tokenize([{ start: 0, end: 1, text }], { ...cfg, locale }).map((t) => [t.text, t.glue]);

describe('profiles', () => {
  it('carry the limits of the interface contract', () => {
    expect(SRT_PROFILE_LIMITS.regular).toMatchObject({ maxBlockChars: 70, maxLineChars: 42, maxLines: 2, maxCharsPerSecond: 21, crossSegment: false });
    expect(SRT_PROFILE_LIMITS.mobile).toMatchObject({ maxBlockChars: 45, maxLineChars: 22, maxLines: 2, maxCharsPerSecond: 17, crossSegment: false });
    expect(SRT_PROFILE_LIMITS.global_regular).toMatchObject({ maxBlockChars: 70, maxLineChars: 42, maxCharsPerSecond: 21, crossSegment: true });
    expect(SRT_PROFILE_LIMITS.global_mobile).toMatchObject({ maxBlockChars: 45, maxLineChars: 22, maxCharsPerSecond: 17, crossSegment: true });
    expect(Object.isFrozen(SRT_PROFILE_LIMITS.regular)).toBe(true);
    expect(isSrtProfileName('global_mobile')).toBe(true);
    expect(isSrtProfileName('cinema')).toBe(false);
  });
});

describe('tokenize', () => {
  it('detects unspaced scripts by majority of letters', () => {
    expect(detectSpaceSeparated('hello world')).toBe(true);
    expect(detectSpaceSeparated('Привет, мир')).toBe(true);
    expect(detectSpaceSeparated('안녕하세요 여러분')).toBe(true);
    expect(detectSpaceSeparated('我用iPhone拍照片了很多')).toBe(false);
    expect(detectSpaceSeparated('สวัสดีครับ')).toBe(false);
    expect(detectSpaceSeparated('The word 你好 means hello in Chinese')).toBe(true);
  });

  it('splits spaced text on whitespace', () => {
    expect(texts('  Hello,   big\tworld! ')).toEqual([['Hello,', 1], ['big', 1], ['world!', 1]]);
  });

  it('attaches punctuation to the word before it and opening marks to the word after it', () => {
    expect(texts('他说「你好」。我们走吧！')).toEqual([['他', 0], ['说', 0], ['「你好」。', 0], ['我们', 0], ['走', 0], ['吧！', 0]]);
  });

  it('keeps spaces of unspaced text as glue', () => {
    expect(texts('我用 iPhone 拍照')).toEqual([['我', 0], ['用', 0], ['iPhone', 1], ['拍照', 1]]);
  });

  it('uses given words: trimmed, punctuation-only words joined without a space, words with spaces split', () => {
    const toks = tokenize(
      [{ start: 0, end: 2, text: 'ignored', words: [{ text: ' Hello', start: 0, end: 0.5 }, { text: ',', start: 0.5, end: 0.5 }, { text: ' ', start: 0.6, end: 0.6 }, { text: 'big  world', start: 0.6, end: 1.5 }] }],
      cfg,
    );
    expect(toks.map((t) => [t.text, t.glue, t.start, t.end])).toEqual([['Hello', 1, 0, 500], [',', 0, 500, 500], ['big', 1, 600, 938], ['world', 1, 938, 1500]]);
  });

  it('estimates timings from character shares and clamps negative times', () => {
    const toks = tokenize([{ start: -1, end: 0.9, text: 'ab cdef' }], cfg);
    expect(toks.map((t) => [t.start, t.end])).toEqual([[0, 300], [300, 900]]);
  });

  it('splits a word longer than a line into line-sized pieces sharing its time', () => {
    const toks = tokenize([{ start: 0, end: 1, text: 'x'.repeat(50) }], { ...cfg, maxLineChars: 22 });
    expect(toks.map((t) => [t.len, t.glue, t.midWord, t.start, t.end])).toEqual([[22, 1, false, 0, 440], [22, 0, true, 440, 880], [6, 0, true, 880, 1000]]);
  });

  it('orders segments by start time', () => {
    const toks = tokenize([{ start: 5, end: 6, text: 'second' }, { start: 1, end: 2, text: 'first' }], cfg);
    expect(toks.map((t) => [t.text, t.seg])).toEqual([['first', 0], ['second', 1]]);
  });
});
