import { describe, expect, it } from 'vitest';
import type { ScriptSegment } from '@dub/core';
import { glossaryOfRows, missedTerms, rowsOf } from './glossary-panel.js';

describe('glossary panel logic', () => {
  it('turns rows into a glossary and back; blank rows are left out', () => {
    const g = [{ term: 'Vaultline', keep: true as const }, { term: 'dubbing', translation: 'doblaje', case_sensitive: true }];
    const rows = rowsOf(g);
    expect(rows).toEqual([
      { term: 'Vaultline', translation: '', keep: true, caseSensitive: false },
      { term: 'dubbing', translation: 'doblaje', keep: false, caseSensitive: true },
    ]);
    expect(glossaryOfRows([...rows, { term: ' ', translation: '', keep: false, caseSensitive: false }])).toEqual({ glossary: g });
  });

  it('names the row that lacks a term or a translation', () => {
    expect(glossaryOfRows([{ term: '', translation: 'x', keep: false, caseSensitive: false }]).error).toBe('Row 1: the term is empty.');
    expect(glossaryOfRows([{ term: 'a', translation: 'b', keep: false, caseSensitive: false }, { term: 'voice', translation: ' ', keep: false, caseSensitive: false }]).error).toBe(
      'Row 2: give "voice" a translation, or tick "keep as is".',
    );
  });

  it('lists the lines whose translation does not carry a term', () => {
    const seg = (id: string, glossary?: ScriptSegment['glossary']): ScriptSegment => ({ id, start: 0, end: 1, speaker: 'S1', source_text: '', target_text: '', ...(glossary ? { glossary } : {}) });
    expect(
      missedTerms([
        seg('a', [{ term: 'Vaultline', expected: 'Vaultline', keep: true, applied: true }]),
        seg('b'),
        seg('c', [{ term: 'dubbing', expected: 'doblaje', keep: false, applied: false, reason: 'x' }]),
      ]),
    ).toEqual([{ index: 2, id: 'c', term: 'dubbing', expected: 'doblaje' }]);
  });
});
