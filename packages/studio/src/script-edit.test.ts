import type { ScriptSegment, VersionScript } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { diffScript, diffSegments, diffSpeakers, hasErrors, rebaseSpeakers, rebaseEdits, rebaseScript, segmentAt, speakerStats, validateSegments } from './script-edit.js';
import { mergeWithNext, splitSegment } from './segment-ops.js';

const seg = (id: string, start: number, end: number, target = `t ${id}`, speaker = 'S1'): ScriptSegment => ({ id, start, end, speaker, source_text: `s ${id}`, target_text: target });
const script = (segments: ScriptSegment[]): VersionScript => ({
  v: 1,
  asset_id: 'ast_1',
  version_id: 'ver_1',
  source_locale: 'en-US',
  target_locale: 'es-ES',
  translation_engine: 'test',
  speakers: [{ id: 'S1' }, { id: 'S2' }],
  segments,
  updated_at: '2026-01-01T00:00:00.000Z',
});

describe('validateSegments', () => {
  const good = [seg('a', 0.5, 3.2), seg('b', 4, 7.5), seg('c', 7.5, 9)];

  it('accepts a script whose segments are ordered, positive and inside the video (touching is fine)', () => {
    expect(validateSegments(good, { duration: 12 })).toEqual([]);
  });

  it('end must be after start', () => {
    const issues = validateSegments([seg('a', 2, 2), seg('b', 5, 4)], { duration: 12 });
    expect(issues.map((i) => [i.id, i.field, i.severity])).toEqual([
      ['a', 'end', 'error'],
      ['b', 'end', 'error'],
    ]);
    expect(issues[0]!.message).toMatch(/end must be after start \(0:02\.000\)/);
  });

  it('segments must stay inside the video; unknown duration skips that check', () => {
    const s = [seg('a', 0, 3), seg('b', 11, 12.5), seg('c', 13, 14)];
    const issues = validateSegments(s, { duration: 12 });
    expect(issues.map((i) => [i.id, i.field])).toEqual([
      ['b', 'end'],
      ['c', 'start'],
      ['c', 'end'],
    ]);
    expect(issues[0]!.message).toMatch(/after the end of the video \(0:12\.000\)/);
    expect(validateSegments(s, { duration: null })).toEqual([]);
  });

  it('an overlap with a neighbour is reported on both sides', () => {
    const issues = validateSegments([seg('a', 0, 5), seg('b', 4, 8), seg('c', 9, 10)], { duration: 12 });
    expect(issues.map((i) => [i.id, i.field, i.message])).toEqual([
      ['a', 'end', 'ends after the next segment starts (0:04.000)'],
      ['b', 'start', 'starts before the previous segment ends (0:05.000)'],
    ]);
    // a segment moved before its predecessor overlaps it too
    expect(validateSegments([seg('a', 5, 6), seg('b', 1, 2)], { duration: 12 }).map((i) => i.id)).toEqual(['a', 'b']);
  });

  it('negative or non-finite times are errors; empty target text is a warning', () => {
    const issues = validateSegments([seg('a', -1, 2), seg('b', 3, Number.NaN), seg('c', 5, 6, '   ')], { duration: 12 });
    expect(issues.map((i) => [i.id, i.field, i.severity])).toEqual([
      ['a', 'start', 'error'],
      ['b', 'end', 'error'],
      ['c', 'target_text', 'warning'],
    ]);
    expect(hasErrors(issues)).toBe(true);
    expect(hasErrors(issues.filter((i) => i.severity === 'warning'))).toBe(false);
  });

  it('problems the loaded script already had are warnings until their times are edited', () => {
    const original = [seg('a', 0, 5), seg('b', 4, 8), seg('c', 9, 10)];
    const same = validateSegments(original.map((s) => ({ ...s })), { duration: 12, original });
    expect(same.map((i) => i.severity)).toEqual(['warning', 'warning']);
    expect(hasErrors(same)).toBe(false);
    // editing either side of the pair makes the overlap an error
    const edited = [seg('a', 0, 5.5), seg('b', 4, 8), seg('c', 9, 10)];
    expect(validateSegments(edited, { duration: 12, original }).map((i) => [i.id, i.severity])).toEqual([
      ['a', 'error'],
      ['b', 'error'],
    ]);
    // a new overlap created by an edit elsewhere is an error
    const moved = [seg('a', 0, 5), seg('b', 4, 8), seg('c', 7, 10)];
    const issues = validateSegments(moved, { duration: 12, original });
    expect(issues.filter((i) => i.severity === 'error').map((i) => [i.id, i.field])).toEqual([
      ['b', 'end'],
      ['c', 'start'],
    ]);
  });
});

describe('diffSegments', () => {
  it('lists the changed fields by segment id, in script order', () => {
    const base = [seg('a', 0, 1, 'hola'), seg('b', 2, 3, 'adiós'), seg('c', 4, 5, 'sí')];
    const edited = [seg('a', 0, 1, 'hola'), seg('b', 2.25, 3, 'hasta luego'), seg('c', 4, 5.5, 'sí')];
    expect(diffSegments(base, edited)).toEqual([
      { id: 'b', index: 1, field: 'start', before: 2, after: 2.25 },
      { id: 'b', index: 1, field: 'target_text', before: 'adiós', after: 'hasta luego' },
      { id: 'c', index: 2, field: 'end', before: 5, after: 5.5 },
    ]);
    expect(diffSegments(base, base.map((s) => ({ ...s })))).toEqual([]);
  });

  it('a segment unknown to the base counts as changed in every field', () => {
    expect(diffSegments([], [seg('x', 1, 2, 'nuevo')]).map((c) => c.field)).toEqual(['start', 'end', 'target_text', 'speaker']);
  });

  it("a segment moved to another speaker is a change of its speaker, re-applied after a 412 like the other fields", () => {
    const a = { ...seg('a', 0, 1, 'uno'), speaker: 'S1' };
    const moved = { ...a, speaker: 'S2' };
    const changes = diffSegments([a], [moved]);
    expect(changes).toEqual([{ id: 'a', index: 0, field: 'speaker', before: 'S1', after: 'S2' }]);
    const remote = { v: 1, asset_id: 'x', version_id: 'y', source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 't', speakers: [], segments: [{ ...a, source_text: '' }], updated_at: '' } as VersionScript;
    expect(rebaseEdits(changes, remote).script.segments[0]!.speaker).toBe('S2');
  });
});

describe('speaker edits', () => {
  const base = [{ id: 'S1' }, { id: 'S2', name: 'Ana' }];

  it('diffSpeakers names the speakers whose name or voice changed', () => {
    expect(diffSpeakers(base, base)).toEqual([]);
    expect(diffSpeakers(base, [{ id: 'S1', name: 'Bob' }, { id: 'S2', name: 'Ana' }])).toEqual(['S1']);
    expect(diffSpeakers(base, [{ id: 'S1' }, { id: 'S2', name: 'Ana', voice: { source: 'library', library_voice_id: 'ana' } }])).toEqual(['S2']);
    // a blank name is no name; a speaker only the edit has counts when it carries a choice
    expect(diffSpeakers(base, [{ id: 'S1', name: '  ' }, { id: 'S2', name: 'Ana' }, { id: 'S3' }])).toEqual([]);
    expect(diffSpeakers(base, [...base, { id: 'S3', voice: { source: 'anonymized' } }])).toEqual(['S3']);
  });

  it('rebaseSpeakers keeps my edit where the other save left the speaker alone; theirs wins otherwise', () => {
    const mine = [{ id: 'S1', name: 'Bob' }, { id: 'S2', name: 'Ana', voice: { source: 'speaker' as const } }];
    const remote = [{ id: 'S1' }, { id: 'S2', name: 'Anna' }];
    const r = rebaseSpeakers(base, mine, remote);
    expect(r.speakers).toEqual([{ id: 'S1', name: 'Bob' }, { id: 'S2', name: 'Anna' }]);
    expect(r.applied).toEqual(['S1']);
    expect(r.conflicts).toEqual(['speaker S2']);
  });
});

describe('rebaseEdits', () => {
  const base = [seg('a', 0, 1, 'uno'), seg('b', 2, 3, 'dos'), seg('c', 4, 5, 'tres')];

  it('re-applies edits whose field the other save left alone; conflicts keep the remote value', () => {
    const mine = diffSegments(base, [seg('a', 0, 1, 'UNO'), seg('b', 2, 3, 'DOS'), seg('c', 4, 5.5, 'tres')]);
    const theirs = script([seg('a', 0, 1, 'uno'), seg('b', 2, 3, 'dos (ellos)'), seg('c', 4, 5, 'tres (ellos)')]);
    const r = rebaseEdits(mine, theirs);
    expect(r.script.segments.map((s) => [s.target_text, s.end])).toEqual([
      ['UNO', 1],
      ['dos (ellos)', 3],
      ['tres (ellos)', 5.5],
    ]);
    expect(r.applied.map((c) => `${c.id}.${c.field}`)).toEqual(['a.target_text', 'c.end']);
    expect(r.conflicts).toEqual([{ id: 'b', index: 1, field: 'target_text', before: 'dos', after: 'DOS', remote: 'dos (ellos)' }]);
    // the remote script itself is untouched
    expect(theirs.segments[0]!.target_text).toBe('uno');
  });

  it('an edit the other save already made is neither applied nor a conflict; a removed segment is a conflict', () => {
    const mine = diffSegments(base, [seg('a', 0, 1, 'UNO'), seg('b', 2, 3, 'DOS'), seg('c', 4, 5, 'tres')]);
    const r = rebaseEdits(mine, script([seg('a', 0, 1, 'UNO'), seg('c', 4, 5, 'tres')]));
    expect(r.applied).toEqual([]);
    expect(r.conflicts.map((c) => [c.id, c.remote])).toEqual([['b', undefined]]);
    expect(r.script.segments.map((s) => s.target_text)).toEqual(['UNO', 'tres']);
  });
});

describe('diffScript and rebaseScript (splits and merges)', () => {
  const base = [seg('a', 0, 2, 'uno dos'), seg('b', 3, 4, 'tres'), seg('c', 5, 6, 'cuatro'), seg('d', 7, 8, 'cinco')];
  const split = (segs: ScriptSegment[], i: number, t: number, id: string) => {
    const r = splitSegment(segs, i, t, id);
    if (!r.ok) throw new Error(r.reason);
    return r.segments;
  };
  const merge = (segs: ScriptSegment[], i: number) => {
    const r = mergeWithNext(segs, i);
    if (!r.ok) throw new Error(r.reason);
    return r.segments;
  };

  it('counts one change per edited segment, added and removed segment', () => {
    const mine = merge(split(base, 0, 1, 'a.2'), 2);
    const d = diffScript(base, mine);
    expect(d.added).toEqual([{ id: 'a.2', index: 1 }]);
    expect(d.removed).toEqual([{ id: 'c', index: 2 }]);
    expect(new Set(d.fields.map((c) => c.id))).toEqual(new Set(['a', 'b']));
    expect(d.count).toBe(4);
    expect(diffScript(base, base.map((x) => ({ ...x }))).count).toBe(0);
  });

  it('re-applies a split and a merge onto a script someone else changed elsewhere', () => {
    const mine = script(merge(split(base, 0, 1, 'a.2'), 2));
    const theirs = script(base.map((x) => (x.id === 'd' ? { ...x, target_text: 'cinco (ellos)' } : { ...x })));
    const r = rebaseScript(base, mine, theirs);
    expect(r.conflicts).toEqual([]);
    expect(r.applied).toBe(4);
    expect(r.script.segments.map((x) => [x.id, x.start, x.end, x.source_text, x.target_text])).toEqual([
      ['a', 0, 1, 's', 'uno'],
      ['a.2', 1, 2, 'a', 'dos'],
      ['b', 3, 6, 's b s c', 'tres cuatro'],
      ['d', 7, 8, 's d', 'cinco (ellos)'],
    ]);
  });

  it('a merged-away segment the other save changed is kept; their field edits win', () => {
    const mine = script(merge(base, 1));
    const theirs = script(base.map((x) => (x.id === 'c' ? { ...x, target_text: 'CUATRO' } : x.id === 'b' ? { ...x, end: 4.5 } : { ...x })));
    const r = rebaseScript(base, mine, theirs);
    expect(r.script.segments.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(r.script.segments[1]!.end).toBe(4.5);
    expect(r.script.segments[1]!.target_text).toBe('tres cuatro');
    expect(r.conflicts).toEqual(['segment 2 end', 'segment c that you merged away (the other save changed it, so it is kept)']);
  });
});

describe('speakers and playback', () => {
  it('counts segments and speech seconds per speaker, listed speakers first', () => {
    const s = script([seg('a', 0, 1.5, 'x', 'S1'), seg('b', 2, 3, 'y', 'S2'), seg('c', 4, 6, 'z', 'S1'), seg('d', 7, 8, 'w', 'S3')]);
    expect(speakerStats(s)).toEqual([
      { id: 'S1', segments: 2, seconds: 3.5 },
      { id: 'S2', segments: 1, seconds: 1 },
      { id: 'S3', segments: 1, seconds: 1 },
    ]);
  });
  it('finds the segment playing at a time', () => {
    const s = [seg('a', 0.5, 3.2), seg('b', 4, 7.5)];
    expect([0, 0.5, 3.19, 3.2, 5, 7.5].map((t) => segmentAt(s, t))).toEqual([-1, 0, 0, -1, 1, -1]);
  });
});
