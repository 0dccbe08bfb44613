import type { ScriptSegment } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { edgeLimits, freshId, mergeWithNext, placeEdge, splitSegment, splitText } from './segment-ops.js';

const seg = (id: string, start: number, end: number, target = `t ${id}`, speaker = 'S1', source = `s ${id}`): ScriptSegment => ({ id, start, end, speaker, source_text: source, target_text: target });

describe('splitText', () => {
  it('cuts at the word boundary nearest the fraction', () => {
    expect(splitText('uno dos tres cuatro', 0.4)).toEqual(['uno dos', 'tres cuatro']);
    expect(splitText('uno dos tres cuatro', 0.55)).toEqual(['uno dos tres', 'cuatro']);
    expect(splitText('uno dos tres cuatro', 0.1)).toEqual(['uno', 'dos tres cuatro']);
    expect(splitText('  uno   dos  ', 0.5)).toEqual(['uno', 'dos']);
    expect(splitText('', 0.5)).toEqual(['', '']);
  });
  it('text without spaces (Chinese, Japanese, Thai) is cut at the nearest character', () => {
    expect(splitText('我们今天谈论配音', 0.5)).toEqual(['我们今天', '谈论配音']);
    expect(splitText('こんにちは世界', 0.3)).toEqual(['こん', 'にちは世界']);
  });
  it('a single word stays whole on the nearer side', () => {
    expect(splitText('hola', 0.2)).toEqual(['', 'hola']);
  });
});

describe('splitSegment', () => {
  const segs = [seg('a', 0, 2), seg('b', 2.5, 6.5, 'hoy hablamos del doblaje libre', 'S2', 'today we talk about free dubbing'), seg('c', 7, 8)];

  it('splits at t: the first part keeps the id, the second gets the new one; texts split in proportion; the input is unchanged', () => {
    const r = splitSegment(segs, 1, 4.5, 'b-2');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.segments.map((s) => [s.id, s.start, s.end, s.speaker])).toEqual([
      ['a', 0, 2, 'S1'],
      ['b', 2.5, 4.5, 'S2'],
      ['b-2', 4.5, 6.5, 'S2'],
      ['c', 7, 8, 'S1'],
    ]);
    expect([r.segments[1]!.target_text, r.segments[2]!.target_text]).toEqual(['hoy hablamos del', 'doblaje libre']);
    expect([r.segments[1]!.source_text, r.segments[2]!.source_text]).toEqual(['today we talk', 'about free dubbing']);
    expect(segs[1]!.end).toBe(6.5);
  });

  it('uses word timings where the segment has them', () => {
    const timed: ScriptSegment = { ...seg('w', 0, 3, 'uno dos tres'), source_words: [{ text: 'one', start: 0.1, end: 0.5 }, { text: 'two,', start: 0.6, end: 1 }, { text: 'three', start: 2, end: 2.8 }] };
    const r = splitSegment([timed], 0, 1.5, 'w-2');
    if (!r.ok) throw new Error(r.reason);
    expect(r.segments.map((s) => s.source_text)).toEqual(['one two,', 'three']);
    expect(r.segments.map((s) => s.source_words!.length)).toEqual([2, 1]);
  });

  it('refuses a time outside the segment or too near an edge, on the millisecond', () => {
    for (const t of [2.5, 2.55, 6.45, 7, 1]) expect(splitSegment(segs, 1, t, 'x').ok).toBe(false);
    expect(splitSegment(segs, 1, 2.6, 'x').ok).toBe(true);
    const r = splitSegment(segs, 1, 4.12345, 'x');
    expect(r.ok && r.segments[1]!.end).toBe(4.123);
    expect(splitSegment(segs, 9, 3, 'x')).toEqual({ ok: false, reason: 'no segment is selected' });
  });
});

describe('mergeWithNext', () => {
  it('joins a segment with the next one of the same speaker, texts joined, words concatenated', () => {
    const a = { ...seg('a', 1, 2, 'hola', 'S1', 'hello'), source_words: [{ text: 'hello', start: 1, end: 1.5 }] };
    const b = { ...seg('b', 2.2, 3, 'mundo', 'S1', 'world'), source_words: [{ text: 'world', start: 2.3, end: 2.9 }] };
    const r = mergeWithNext([a, b, seg('c', 4, 5)], 0);
    if (!r.ok) throw new Error(r.reason);
    expect(r.segments.map((s) => s.id)).toEqual(['a', 'c']);
    expect(r.segments[0]).toEqual({ id: 'a', start: 1, end: 3, speaker: 'S1', source_text: 'hello world', target_text: 'hola mundo', source_words: [...a.source_words, ...b.source_words] });
  });
  it('split then merge gives back the segment', () => {
    const s = seg('b', 2.5, 6.5, 'hoy hablamos del doblaje libre', 'S2', 'today we talk about free dubbing');
    const r = splitSegment([s], 0, 4.1, 'b-2');
    if (!r.ok) throw new Error(r.reason);
    const m = mergeWithNext(r.segments, 0);
    expect(m.ok && m.segments).toEqual([s]);
  });
  it('joins Chinese text without a space', () => {
    const r = mergeWithNext([seg('a', 0, 1, '我们'), seg('b', 1, 2, '今天')], 0);
    expect(r.ok && r.segments[0]!.target_text).toBe('我们今天');
  });
  it('refuses the last segment and two speakers', () => {
    expect(mergeWithNext([seg('a', 0, 1)], 0)).toEqual({ ok: false, reason: 'segment 1 is the last one: there is no next segment to merge with' });
    const r = mergeWithNext([seg('a', 0, 1), seg('b', 1, 2, 't', 'S2')], 0);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/different speakers \(S1, S2\)/);
  });
});

describe('freshId', () => {
  it('numbers after the base id, skipping taken ones', () => {
    expect(freshId('seg-0007', new Set(['seg-0007']))).toBe('seg-0007.2');
    expect(freshId('seg-0007', new Set(['seg-0007', 'seg-0007.2', 'seg-0007.3']))).toBe('seg-0007.4');
    expect(freshId('seg-0007.2', new Set(['seg-0007', 'seg-0007.2']))).toBe('seg-0007.3');
  });
});

describe('dragging edges', () => {
  const segs = [seg('a', 1, 2), seg('b', 3, 5), seg('c', 4.5, 6), seg('d', 7, 8)];

  it('an edge stays between its neighbours and the other edge, inside the video', () => {
    expect(edgeLimits(segs, 0, 'start', 10)).toEqual([0, 1.95]);
    expect(edgeLimits(segs, 0, 'end', 10)).toEqual([1.05, 3]);
    expect(edgeLimits(segs, 3, 'end', 7.5)[1]).toBe(7.5);
    expect(edgeLimits(segs, 3, 'end', null)[1]).toBe(Infinity);
    // b and c overlap already: b's end and c's start are not held by each other
    expect(edgeLimits(segs, 1, 'end', 10)[1]).toBe(10);
    expect(edgeLimits(segs, 2, 'start', 10)[0]).toBe(0);
  });

  it('places a dragged edge on the millisecond, clamped, and snaps to a pause boundary within the radius', () => {
    const silences = [{ start: 1.62, end: 1.8 }, { start: 2.4, end: 2.9 }];
    expect(placeEdge(segs, 0, 'end', 2.61234, { duration: 10 })).toBe(2.612);
    expect(placeEdge(segs, 0, 'end', 3.5, { duration: 10 })).toBe(3);
    expect(placeEdge(segs, 0, 'end', 0.5, { duration: 10 })).toBe(1.05);
    // an end snaps to where a pause starts; a start to where one ends
    expect(placeEdge(segs, 0, 'end', 2.45, { duration: 10, silences, snapRadius: 0.1 })).toBe(2.4);
    expect(placeEdge(segs, 0, 'end', 2.55, { duration: 10, silences, snapRadius: 0.1 })).toBe(2.55);
    expect(placeEdge(segs, 1, 'start', 2.95, { duration: 10, silences, snapRadius: 0.1 })).toBe(2.9);
    expect(placeEdge(segs, 1, 'start', 2.85, { duration: 10, silences, snapRadius: 0.1 })).toBe(2.9);
    expect(placeEdge(segs, 1, 'start', 3.05, { duration: 10, silences, snapRadius: 0.1 })).toBe(3.05);
    // a snap target outside the limits is not taken
    expect(placeEdge(segs, 0, 'end', 1.08, { duration: 10, silences: [{ start: 1.02, end: 1.3 }], snapRadius: 0.1 })).toBe(1.08);
  });

  it('rounding never crosses a neighbour off the millisecond', () => {
    const s = [seg('a', 1, 2), seg('b', 2.9996, 4)];
    expect(placeEdge(s, 0, 'end', 5, { duration: 10 })).toBe(2.999);
  });
});
