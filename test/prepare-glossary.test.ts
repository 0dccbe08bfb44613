/**
 * Glossaries through prepare-version (issue 23 item 5): the job's `version.glossary` reaches the
 * translation (real apertium en -> es) and every script line records which terms it carries.
 */
import { blobKeys, parseJob, type PrepareVersionJob, type Transcript } from '@dub/core';
import { prepareVersion } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { describe, expect, it } from 'vitest';
import { makeRuntime } from './prepare-helpers.js';

const rt = makeRuntime();
const translate = loadTranslateConfig({});

describe('prepare-version with a glossary', () => {
  it('apertium keeps the brand, writes the fixed translation and the script says so per line', async () => {
    const lines = ['Vaultline makes dubbing simple.', 'We will meet tomorrow at the station.'];
    const t: Transcript = {
      v: 1, locale: 'en-US', engine: 'test', duration: 10, speakers: [{ id: 'S1' }],
      segments: lines.map((text, i) => ({ id: `s${i + 1}`, start: i * 3, end: i * 3 + 2.5, speaker: 'S1', text, words: [] })),
    };
    await rt.store.put(blobKeys.transcript('ast_gl'), Buffer.from(JSON.stringify(t)));
    const job = parseJob({
      v: 1, type: 'prepare-version', job_id: 'jg', asset_id: 'ast_gl', source_locale: 'en-US',
      version: { version_id: 'ver_gl', dubbing_id: 'dub_gl', locale: 'es-ES', glossary: [{ term: 'Vaultline', keep: true }, { term: 'dubbing', translation: 'doblaje' }] },
    }) as PrepareVersionJob;
    const r = await prepareVersion(job, rt, { translate });
    const [a, b] = r.script.segments;
    expect(a!.target_text).toContain('Vaultline');
    expect(a!.target_text).toContain('doblaje');
    expect(a!.glossary).toEqual([
      { term: 'Vaultline', expected: 'Vaultline', keep: true, applied: true },
      { term: 'dubbing', expected: 'doblaje', keep: false, applied: true },
    ]);
    expect(b!.glossary).toBeUndefined();
  });

  it('one language on both sides: no translation, the fixed forms still applied', async () => {
    const t: Transcript = { v: 1, locale: 'en-US', engine: 'test', duration: 3, speakers: [{ id: 'S1' }], segments: [{ id: 's1', start: 0, end: 2.5, speaker: 'S1', text: 'The color of Vaultline.', words: [] }] };
    await rt.store.put(blobKeys.transcript('ast_gl_same'), Buffer.from(JSON.stringify(t)));
    const glossary = [{ term: 'color', translation: 'colour' }, { term: 'Vaultline', keep: true as const }];
    const r = await prepareVersion({ v: 1, type: 'prepare-version', job_id: 'js', asset_id: 'ast_gl_same', source_locale: 'en-US', version: { version_id: 'ver_gl_same', dubbing_id: 'd', locale: 'en-US', glossary } }, rt, { translate });
    expect(r.script.translation_engine).toBe('none');
    expect(r.script.segments[0]!.target_text).toBe('The colour of Vaultline.');
    expect(r.script.segments[0]!.glossary?.every((g) => g.applied)).toBe(true);
  });

  it('a job with a bad glossary is refused on arrival, naming the field', () => {
    const bad = { v: 1, type: 'prepare-version', job_id: 'jb', asset_id: 'a', source_locale: 'en-US', version: { version_id: 'v', dubbing_id: 'd', locale: 'es-ES', glossary: [{ term: '' }] } };
    expect(() => parseJob(bad)).toThrow(/glossary\/0\/term/);
  });
});
