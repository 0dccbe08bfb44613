import { VERSION_STATUSES, VERSION_TRANSITIONS, versionTransition } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { pollDelayMs, studioActions } from './status.js';

describe('studioActions', () => {
  it('edits and generate only in ReadyToEdit with a script; revise from Completed and Failed; polls while the worker moves the status', () => {
    const table = Object.fromEntries(VERSION_STATUSES.map((s) => [s, studioActions(s, true)]));
    expect(Object.fromEntries(Object.entries(table).map(([s, a]) => [s, [a.edit, a.generate, a.revise, a.poll]]))).toEqual({
      NotReady: [false, false, false, true],
      ReadyToEdit: [true, true, false, false],
      Generating: [false, false, false, true],
      Completed: [false, false, true, false],
      Failed: [false, false, true, false],
    });
    expect(studioActions('ReadyToEdit', false)).toMatchObject({ edit: false, generate: false });
  });

  it('never offers what the state machine of @dub/core refuses', () => {
    for (const s of VERSION_STATUSES) {
      const a = studioActions(s, true);
      if (a.edit) expect(versionTransition(s, 'edit').allowed, s).toBe(true);
      if (a.generate) expect(versionTransition(s, 'generate').allowed, s).toBe(true);
      if (a.revise) expect(VERSION_TRANSITIONS.some((t) => t.from === s && (t.trigger === 'revise' || t.trigger === 'revise_unprepared')), s).toBe(true);
    }
  });

  it('says why the script is read-only in every status but ReadyToEdit', () => {
    for (const s of VERSION_STATUSES) expect(studioActions(s, true).readOnlyReason === '', s).toBe(s === 'ReadyToEdit');
    expect(studioActions('Generating', true).readOnlyReason).toMatch(/being generated.*disabled/);
  });
});

describe('pollDelayMs', () => {
  it('polls every 2 s for a minute, then every 5 s', () => {
    expect([0, 59_999, 60_000, 600_000].map(pollDelayMs)).toEqual([2000, 2000, 5000, 5000]);
  });
});
