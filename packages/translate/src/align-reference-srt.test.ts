import { describe, expect, it } from 'vitest';
import { alignReferenceSrt, cleanCueText } from './align-reference-srt.js';

const segs = [
  { id: 's1', start: 0, end: 2 },
  { id: 's2', start: 3, end: 5 },
  { id: 's3', start: 8, end: 10 },
  { id: 's4', start: 12, end: 13 },
];

describe('alignReferenceSrt', () => {
  it('gives each cue to the segment it overlaps most, in time order', () => {
    const out = alignReferenceSrt(segs, [
      { start: 3.5, end: 4.5, text: 'segunda parte' },
      { start: 0, end: 1, text: 'hola' },
      { start: 1.5, end: 3.2, text: 'qué tal' }, // 0.5 s with s1, 0.2 s with s2
      { start: 8.2, end: 9.9, text: 'tercera\nlínea' },
      { start: 2.8, end: 3.4, text: 'y' }, // only overlaps s2
    ]);
    expect(out).toEqual([
      { id: 's1', text: 'hola qué tal' },
      { id: 's2', text: 'y segunda parte' },
      { id: 's3', text: 'tercera línea' },
      { id: 's4', text: '' },
    ]);
  });

  it('attaches a cue with no overlap to the nearest segment', () => {
    const out = alignReferenceSrt(segs, [
      { start: 5.5, end: 6, text: 'cerca de s2' },
      { start: 7, end: 7.6, text: 'cerca de s3' },
      { start: 20, end: 21, text: 'al final' },
    ]);
    expect(out.map((o) => o.text)).toEqual(['', 'cerca de s2', 'cerca de s3', 'al final']);
  });

  it('breaks ties toward the earlier segment and strips formatting', () => {
    const out = alignReferenceSrt(
      [
        { id: 'a', start: 0, end: 1 },
        { id: 'b', start: 2, end: 3 },
      ],
      [{ start: 1.5, end: 1.5, text: '<i>en medio</i> {\\an8}' }],
    );
    expect(out).toEqual([
      { id: 'a', text: 'en medio' },
      { id: 'b', text: '' },
    ]);
    expect(cleanCueText('<font color="red">rojo</font>\n<b>x</b>')).toBe('rojo x');
  });

  it('returns nothing for no segments', () => {
    expect(alignReferenceSrt([], [{ start: 0, end: 1, text: 'x' }])).toEqual([]);
  });
});
