import { describe, expect, it } from 'vitest';
import { EditHistory } from './history.js';

describe('EditHistory', () => {
  it('undoes and redoes snapshots in order; a new edit clears redo', () => {
    const h = new EditHistory<number>();
    let state = 0;
    const edit = (v: number, group?: string) => {
      h.record(state, group);
      state = v;
    };
    edit(1);
    edit(2);
    expect(h.canUndo).toBe(true);
    state = h.undo(state)!;
    expect(state).toBe(1);
    state = h.undo(state)!;
    expect(state).toBe(0);
    expect(h.undo(state)).toBeUndefined();
    state = h.redo(state)!;
    expect(state).toBe(1);
    edit(5);
    expect(h.canRedo).toBe(false);
    expect(h.undo(state)).toBe(1);
  });

  it('typing into one field is one entry; another field, cut() or an undo starts a new one', () => {
    const h = new EditHistory<string>();
    let state = '';
    let snapshots = 0;
    const type = (v: string, group: string) => {
      h.record(() => {
        snapshots++;
        return state;
      }, group);
      state = v;
    };
    type('h', 'text:a');
    type('ho', 'text:a');
    type('hol', 'text:a');
    expect(snapshots).toBe(1);
    type('hol|x', 'text:b');
    h.cut();
    type('hol|xy', 'text:b');
    expect(snapshots).toBe(3);
    expect((state = h.undo(state)!)).toBe('hol|x');
    expect((state = h.undo(state)!)).toBe('hol');
    expect((state = h.undo(state)!)).toBe('');
  });

  it('keeps at most `limit` entries and clears', () => {
    const h = new EditHistory<number>(3);
    for (let i = 0; i < 10; i++) h.record(i);
    let s = 10;
    const seen: number[] = [];
    for (let u = h.undo(s); u !== undefined; u = h.undo(s)) seen.push((s = u));
    expect(seen).toEqual([9, 8, 7]);
    h.clear();
    expect(h.canUndo || h.canRedo).toBe(false);
  });
});
