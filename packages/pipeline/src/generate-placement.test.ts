/**
 * Placement of dubbed lines on numbers: the order of remedies (speed cap, silence after, silence
 * before in voice-over, a shorter line, past the cap, then delaying the next line), and that two
 * lines never play at once unless their source lines overlapped.
 */
import { describe, expect, it } from 'vitest';
import { placeLines, type Placement, type PlacementLine } from './generate-placement.js';

const line = (id: string, start: number, end: number, natural: number): PlacementLine => ({ id, start, end, natural });
const byId = (ps: Placement[]) => Object.fromEntries(ps.map((p) => [p.id, p]));

/** No two placed lines overlap unless their source spans did. */
function expectNoOverlapUnlessSource(lines: PlacementLine[], ps: Placement[]): void {
  for (let i = 0; i < ps.length; i++) {
    for (let j = i + 1; j < ps.length; j++) {
      const overlap = Math.min(ps[i]!.end, ps[j]!.end) - Math.max(ps[i]!.start, ps[j]!.start);
      const sourceOverlap = Math.min(lines[i]!.end, lines[j]!.end) - Math.max(lines[i]!.start, lines[j]!.start);
      if (overlap > 1e-9) expect(sourceOverlap, `${ps[i]!.id} and ${ps[j]!.id}`).toBeGreaterThan(0);
    }
  }
}

describe('placeLines', () => {
  it('a line that fits at the speed cap stays in its slot; a short one keeps its slot (slowed, then padded)', async () => {
    const lines = [line('a', 1, 3, 2.4), line('b', 4, 6, 1)];
    const p = byId(await placeLines(lines, { limit: 10 }));
    expect(p.a).toMatchObject({ start: 1, end: 3, resolution: 'fits', gapAfterUsed: 0, delayed: 0 });
    expect(p.a!.speed).toBeCloseTo(1.2, 9);
    expect(p.b).toMatchObject({ start: 4, end: 6, resolution: 'fits' });
    expect(p.b!.speed).toBeCloseTo(0.5, 9);
  });

  it('over the cap, a line takes the silence after it at the cap', async () => {
    const p = byId(await placeLines([line('a', 1, 2, 2), line('b', 4, 5, 1)], { limit: 10 }));
    expect(p.a!.resolution).toBe('used_gap_after');
    expect(p.a!.seconds).toBeCloseTo(1.6, 9); // 2 s / 1.25
    expect(p.a!.gapAfterUsed).toBeCloseTo(0.6, 9);
    expect(p.a!.speed).toBeCloseTo(1.25, 9);
  });

  it('a line three times too long for its slot, the next line right after: capped speed limit, then the next line waits', async () => {
    const lines = [line('long', 1, 2, 3), line('next', 2.2, 3.5, 1)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    // room: the 1 s slot and 0.2 s of silence; at the 1.6 limit 3 s of speech last 1.875 s
    expect(p.long).toMatchObject({ resolution: 'delayed_next', shortened: false });
    expect(p.long!.seconds).toBeCloseTo(1.875, 9);
    expect(p.long!.speed).toBeCloseTo(1.6, 9);
    expect(p.long!.gapAfterUsed).toBeCloseTo(0.2, 9);
    expect(p.long!.end - p.long!.slotEnd).toBeCloseTo(0.875, 9);
    expect(p.next!.start).toBeCloseTo(2.875, 9);
    expect(p.next!.delayed).toBeCloseTo(0.675, 9);
    // its own slot is shorter now: it takes the silence after it
    expect(p.next!.resolution).toBe('used_gap_after');
    expect(p.next!.seconds).toBeCloseTo(0.8, 9);
    expectNoOverlapUnlessSource(lines, ps);
  });

  it('two adjacent long lines: the first delays the second, which takes the silence after it; no overlap', async () => {
    const lines = [line('a', 0, 1, 2), line('b', 1, 2, 2), line('c', 5, 6, 0.5)];
    const ps = await placeLines(lines, { limit: 8 });
    const p = byId(ps);
    expect(p.a).toMatchObject({ resolution: 'delayed_next', start: 0 });
    expect(p.a!.end).toBeCloseTo(1.25, 9);
    expect(p.b!.start).toBeCloseTo(1.25, 9);
    expect(p.b!.delayed).toBeCloseTo(0.25, 9);
    expect(p.b!.resolution).toBe('used_gap_after');
    expect(p.b!.end).toBeCloseTo(2.85, 9);
    expect(p.c).toMatchObject({ start: 5, end: 6, resolution: 'fits', delayed: 0 });
    expectNoOverlapUnlessSource(lines, ps);
  });

  it('voice-over: after the silence after it, a line starts earlier, by at most the delay', async () => {
    const lines = [line('a', 0, 1, 1), line('b', 1.5, 2, 1.2), line('c', 2.2, 3, 0.5)];
    const ps = await placeLines(lines, { limit: 10, earlyStart: 0.3 });
    const p = byId(ps);
    expect(p.b!.resolution).toBe('used_gap_before');
    expect(p.b!.seconds).toBeCloseTo(0.96, 9);
    expect(p.b!.gapAfterUsed).toBeCloseTo(0.2, 9);
    expect(p.b!.gapBeforeUsed).toBeCloseTo(0.26, 9);
    expect(p.b!.start).toBeCloseTo(1.24, 9);
    expect(p.b!.end).toBeCloseTo(2.2, 9);
    expectNoOverlapUnlessSource(lines, ps);
    // without voice-over it has 0.7 s: too little even at the 1.6 limit, so the next line waits
    expect(byId(await placeLines(lines, { limit: 10 })).b!.resolution).toBe('delayed_next');
  });

  it('a shorter line is asked for before going past the cap, with the room it has', async () => {
    const asked: [string, number][] = [];
    const lines = [line('a', 0, 1, 3), line('b', 1.1, 2, 0.5)];
    const p = byId(await placeLines(lines, { limit: 10, shorten: async (l, room) => (asked.push([l.id, room]), 1.2) }));
    expect(asked).toHaveLength(1);
    expect(asked[0]![0]).toBe('a');
    expect(asked[0]![1]).toBeCloseTo(1.1, 9);
    expect(p.a).toMatchObject({ resolution: 'shortened', shortened: true, natural: 1.2, start: 0, end: 1 });
    // a shortening that is still too long is kept (it is shorter) and the line goes past the cap
    const q = byId(await placeLines(lines, { limit: 10, shorten: async () => 1.6 }));
    expect(q.a).toMatchObject({ resolution: 'sped_past_cap', shortened: true, natural: 1.6 });
    expect(q.a!.end).toBeCloseTo(1.1, 9);
    // an engine that cannot: the line goes on to the next remedy
    expect(byId(await placeLines(lines, { limit: 10, shorten: async () => undefined })).a).toMatchObject({ resolution: 'delayed_next', shortened: false });
  });

  it('where the source speakers overlapped, an overlong line may play over the next one', async () => {
    const lines = [line('a', 0, 2, 4), line('b', 1.5, 3, 1)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    expect(p.a).toMatchObject({ resolution: 'overlaps_next', sourceOverlapNext: true, start: 0 });
    expect(p.a!.end).toBeCloseTo(2.5, 9);
    expect(p.b).toMatchObject({ start: 1.5, delayed: 0, resolution: 'fits' });
    expectNoOverlapUnlessSource(lines, ps);
  });

  it('the last line is cut at the end of the video, and says by how much', async () => {
    const p = byId(await placeLines([line('a', 8, 9, 4)], { limit: 10 }));
    expect(p.a!.resolution).toBe('truncated');
    expect(p.a!.truncated).toBeCloseTo(0.5, 9);
    expect(p.a!.seconds).toBeCloseTo(2, 9);
    expect(p.a!.end).toBeCloseTo(10, 9);
  });

  it('a line pushed past the end of the video by the ones before it is cut entirely (zero seconds), never placed after the end', async () => {
    const lines = [line('a', 0, 1, 12), line('b', 1, 2, 1)];
    const ps = await placeLines(lines, { limit: 8 });
    expect(ps[0]!.resolution).toBe('delayed_next');
    expect(ps[0]!.end).toBeCloseTo(7.5, 9);
    // the second line is left 0.5 s before the end: at the limit it needs 0.625 s, 0.125 s is cut
    expect(ps[1]).toMatchObject({ resolution: 'truncated' });
    expect(ps[1]!.start).toBeCloseTo(7.5, 9);
    expect(ps[1]!.truncated).toBeCloseTo(0.125, 9);
    expect(ps[1]!.end).toBeCloseTo(8, 9);
    const qs = await placeLines([line('a', 0, 1, 14), line('b', 1, 2, 1)], { limit: 8 });
    expect(qs[0]!.end).toBeCloseTo(8, 9);
    expect(qs[1]).toMatchObject({ resolution: 'truncated', seconds: 0 });
  });
});

/** Lines with speakers: placed by turns (TURN_DEFAULTS: 0.3 s pause, 1 s shift). */
const said = (id: string, speaker: string, start: number, end: number, natural: number, atSpeakerRate?: number): PlacementLine => ({ id, speaker, start, end, natural, ...(atSpeakerRate !== undefined ? { atSpeakerRate } : {}) });

/** Every line of a turn inside the turn's room: from its first line's start (or later, after the previous turn) to its room's end; none starts or ends more than `shift` from its own words but the last line's end. */
function expectTurnBounds(ps: Placement[], shift = 1): void {
  for (const p of ps) {
    const t = p.turn!;
    expect(t, p.id).toBeDefined();
    expect(p.start, p.id).toBeGreaterThanOrEqual(t.start - 1e-9);
    expect(p.end, p.id).toBeLessThanOrEqual(t.roomEnd + 1e-9);
    expect(Math.abs(p.start - p.slotStart), p.id).toBeLessThanOrEqual(shift + 1e-9);
    if (t.index < t.lines - 1) expect(p.end - p.slotEnd, p.id).toBeLessThanOrEqual(shift + 1e-9);
    expect(p.turn!.borrowed, p.id).toBeCloseTo(p.seconds - (p.slotEnd - p.slotStart), 9);
  }
  // the lines of a turn follow each other
  for (let i = 1; i < ps.length; i++) if (ps[i]!.turn!.id === ps[i - 1]!.turn!.id) expect(ps[i]!.start, ps[i]!.id).toBeGreaterThanOrEqual(ps[i - 1]!.end - 1e-9);
}

describe('placeLines by turns', () => {
  it("a speaker's lines less than 0.3 s apart form a turn; a longer pause or another speaker starts a new one", async () => {
    const lines = [said('a', 'A', 0, 1, 0.5), said('b', 'A', 1.29, 2, 0.5), said('c', 'A', 2.3, 3, 0.5), said('d', 'B', 3.1, 4, 0.5), said('e', 'A', 4.1, 5, 0.5)];
    const ps = await placeLines(lines, { limit: 10 });
    expect(ps.map((p) => [p.id, p.turn!.id, p.turn!.index, p.turn!.lines])).toEqual([
      ['a', 1, 0, 2],
      ['b', 1, 1, 2],
      ['c', 2, 0, 1],
      ['d', 3, 0, 1],
      ['e', 4, 0, 1],
    ]);
    // short lines keep their slots (padded at the speaker's pace), nothing borrowed
    for (const p of ps) expect(p, p.id).toMatchObject({ resolution: 'fits', start: p.slotStart, end: p.slotEnd });
    expect(ps.map((p) => p.turn!.borrowed)).toEqual([0, 0, 0, 0, 0]);
    expectTurnBounds(ps);
  });

  it('a long line borrows from its short neighbour: both at the speaker\'s pace, the neighbour gives what it does not need', async () => {
    // a: 3 s of speech in a 2 s slot; b: 1 s in a 1.9 s slot; the other speaker at 4.5
    const lines = [said('a', 'A', 0, 2, 3), said('b', 'A', 2.1, 4, 1), said('c', 'B', 4.5, 6, 1)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    expect(p.a).toMatchObject({ start: 0, resolution: 'borrowed' });
    expect(p.a!.end).toBeCloseTo(3, 9);
    expect(p.a!.speed).toBeCloseTo(1, 9);
    expect(p.a!.turn!.borrowed).toBeCloseTo(1, 9);
    expect(p.b!.start).toBeCloseTo(3, 9);
    expect(p.b!.end).toBeCloseTo(4, 9);
    expect(p.b!.turn!.borrowed).toBeCloseTo(-0.9, 9);
    expect(p.b!.resolution).toBe('fits');
    expect(p.c).toMatchObject({ start: 4.5, end: 6, resolution: 'fits' });
    expectTurnBounds(ps);
    expectNoOverlapUnlessSource(lines, ps);
    // line by line (turns off) the long line is sped past the cap in its slot and the gap after it
    const q = byId(await placeLines(lines, { limit: 10, turns: false }));
    expect(q.a).toMatchObject({ resolution: 'sped_past_cap', start: 0 });
    expect(q.a!.speed).toBeCloseTo(3 / 2.1, 9);
    expect(q.a!.turn).toBeUndefined();
  });

  it('a borrowing goes backwards too: a short line ends early so the long one after it starts earlier, within the shift', async () => {
    const lines = [said('a', 'A', 0, 2, 1), said('b', 'A', 2.1, 4, 3), said('c', 'B', 4.05, 6, 1)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    // the turn's room ends at the other speaker's line (4.05): b needs 3 s at speed 1, more than it can have starting at most 1 s early...
    expect(p.b!.start).toBeCloseTo(2.1 - 1, 9);
    expect(p.b!.end).toBeCloseTo(4.05, 9);
    expect(p.b!.speed).toBeCloseTo(3 / 2.95, 6);
    expect(p.b!.end).toBeLessThanOrEqual(4.05 + 1e-9);
    expect(p.b!.resolution).toBe('borrowed');
    expect(p.b!.speed).toBeLessThanOrEqual(1.25);
    // ...and a, which needs 1 s, gives it the rest of its slot
    expect(p.a!.start).toBe(0);
    expect(p.a!.end).toBeCloseTo(p.b!.start, 9);
    expect(p.a!.seconds).toBeGreaterThanOrEqual(1 / 1.25 - 1e-9);
    expectTurnBounds(ps);
    expectNoOverlapUnlessSource(lines, ps);
  });

  it('the last line of a turn may take the silence after the turn, up to the next speaker', async () => {
    const lines = [said('a', 'A', 0, 2, 2), said('b', 'A', 2.1, 4, 2.8), said('c', 'B', 5, 6, 1)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    expect(p.a).toMatchObject({ start: 0, end: 2, resolution: 'fits' });
    expect(p.b).toMatchObject({ start: 2.1, resolution: 'used_gap_after' });
    expect(p.b!.end).toBeCloseTo(4.9, 9);
    expect(p.b!.gapAfterUsed).toBeCloseTo(0.9, 9);
    expect(p.b!.turn!.roomEnd).toBe(5);
    // a single line too: the silence after it, at the speaker's pace
    const q = byId(await placeLines([said('x', 'A', 0, 2, 3), said('y', 'B', 3.5, 4, 0.4)], { limit: 10 }));
    expect(q.x).toMatchObject({ start: 0, resolution: 'used_gap_after' });
    expect(q.x!.end).toBeCloseTo(3, 9);
    // the end of the video bounds the last turn
    const r = byId(await placeLines([said('x', 'A', 0, 2, 3)], { limit: 2.5 }));
    expect(r.x!.end).toBeCloseTo(2.5, 9);
    expect(r.x).toMatchObject({ resolution: 'used_gap_after', truncated: 0 });
    expect(r.x!.speed).toBeCloseTo(1.2, 9);
  });

  it('a turn starts where its speaker starts and ends by the next speaker, sped past the cap (one speed) when it must', async () => {
    const lines = [said('a', 'A', 0, 2, 2.6), said('b', 'A', 2.1, 4, 2.6), said('c', 'B', 4, 5, 0.5)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    expect(p.a!.start).toBe(0);
    expect(p.b!.end).toBeLessThanOrEqual(4 + 1e-9);
    expect(p.a!.speed).toBeCloseTo(1.3, 6);
    expect(p.b!.speed).toBeCloseTo(1.3, 6);
    expect(p.a!.resolution).toBe('sped_past_cap');
    expect(p.b!.resolution).toBe('sped_past_cap');
    expect(p.c).toMatchObject({ start: 4, end: 5, delayed: 0 });
    expectTurnBounds(ps);
    expectNoOverlapUnlessSource(lines, ps);
  });

  it("each line stays within the shift of its own words: a long first line cannot take all of a short neighbour's slot", async () => {
    const lines = [said('a', 'A', 0, 1, 3), said('b', 'A', 1.1, 5, 0.5), said('c', 'B', 5.5, 6, 0.5)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    // a ends by 2 (its slot end + 1 s): 3 s of speech in 2 s
    expect(p.a!.end).toBeCloseTo(2, 9);
    expect(p.a!.speed).toBeCloseTo(1.5, 6);
    expect(p.a!.resolution).toBe('sped_past_cap');
    expect(p.b!.start).toBeCloseTo(2, 9);
    expect(p.b!.end).toBeCloseTo(5, 9);
    expectTurnBounds(ps);
  });

  it('a turn that does not fit even at the speed limit is placed line by line (the next speaker waits)', async () => {
    const lines = [said('a', 'A', 0, 2, 5), said('b', 'B', 2.5, 3, 0.4)];
    const ps = await placeLines(lines, { limit: 10 });
    const p = byId(ps);
    expect(p.a).toMatchObject({ resolution: 'delayed_next', start: 0 });
    expect(p.a!.end).toBeCloseTo(5 / 1.6, 9);
    expect(p.b!.start).toBeCloseTo(5 / 1.6, 9);
    expectNoOverlapUnlessSource(lines, ps);
  });

  it('a shorter line is asked for when the turn needs more than the cap, and the turn shares the time it frees', async () => {
    const lines = [said('a', 'A', 0, 2, 2.6), said('b', 'A', 2.1, 4, 2.6), said('c', 'B', 4, 5, 0.5)];
    const asked: [string, number][] = [];
    const ps = await placeLines(lines, { limit: 10, shorten: async (l, room) => (asked.push([l.id, room]), l.id === 'a' ? 1.5 : undefined) });
    const p = byId(ps);
    // both lines were at 1.3 (past the cap) with about 2 s each
    expect(asked.map(([id]) => id)).toEqual(['a', 'b']);
    expect(asked[0]![1]).toBeCloseTo(2, 6);
    expect(p.a).toMatchObject({ resolution: 'shortened', shortened: true, natural: 1.5, start: 0 });
    expect(p.b).toMatchObject({ resolution: 'borrowed', shortened: false });
    expect(p.b!.speed).toBeLessThanOrEqual(1.25);
    expect(p.a!.speed).toBeCloseTo(p.b!.speed, 6);
    expect(p.b!.start).toBeLessThan(2.1);
    expect(p.b!.end).toBeLessThanOrEqual(4 + 1e-9);
    expectTurnBounds(ps);
    // nothing is asked when the turn fits at the cap
    const none: string[] = [];
    await placeLines([said('a', 'A', 0, 2, 3), said('b', 'A', 2.1, 4, 1), said('c', 'B', 4.5, 6, 1)], { limit: 10, shorten: async (l) => (none.push(l.id), undefined) });
    expect(none).toEqual([]);
  });

  it("a line whose engine cannot reach its speaker's rate is placed by its length at that rate", async () => {
    // at its pace 1.6 s (fits the 2 s slot), at the slower speaker's rate 2.4 s: it takes 0.4 s of the silence after
    const ps = await placeLines([said('a', 'A', 0, 2, 1.6, 2.4), said('b', 'B', 3, 4, 0.5)], { limit: 10 });
    expect(ps[0]).toMatchObject({ resolution: 'used_gap_after', natural: 1.6, demand: 2.4 });
    expect(ps[0]!.end).toBeCloseTo(2.4, 9);
    expect(ps[0]!.speed).toBeCloseTo(1, 9);
  });

  it('voice-over: the first line of a turn may start up to the delay earlier when the turn needs it', async () => {
    const lines = [said('a', 'A', 0, 1, 0.5), said('b', 'B', 1.5, 2, 1.2), said('c', 'C', 2.2, 3, 0.5)];
    const ps = await placeLines(lines, { limit: 10, earlyStart: 0.3 });
    const p = byId(ps);
    expect(p.b!.resolution).toBe('used_gap_before');
    expect(p.b!.start).toBeGreaterThanOrEqual(1.2 - 1e-9);
    expect(p.b!.start).toBeLessThan(1.5);
    expect(p.b!.end).toBeCloseTo(2.2, 9);
    expect(p.b!.speed).toBeLessThanOrEqual(1.25 + 1e-9);
    expectNoOverlapUnlessSource(lines, ps);
  });
});
