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
