/**
 * One language on both sides (issue 23 item 4): en-US -> en-US went eng-spa then spa-eng_US through
 * apertium and came back changed. prepare-version now keeps the transcript as the script, its
 * translation record saying so; es-ES -> es-MX likewise where the pair's engine has no direction.
 */
import fs from 'node:fs';
import path from 'node:path';
import { blobKeys, type Transcript, type VersionScript } from '@dub/core';
import { prepareVersion } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { describe, expect, it } from 'vitest';
import { makeRuntime } from './prepare-helpers.js';

const rt = makeRuntime();
const apertiumDir = path.join(rt.dir, 'apertium');
fs.mkdirSync(path.join(apertiumDir, 'modes'), { recursive: true });
for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(apertiumDir, 'modes', `${m}.mode`), '');
const translate = { ...loadTranslateConfig({}), apertium: { bin: 'apertium', dataDir: apertiumDir, pivot: 'spa' } };

async function transcriptOf(asset: string, locale: string, texts: string[]): Promise<void> {
  const t: Transcript = {
    v: 1, locale, engine: 'test', duration: 10, speakers: [{ id: 'S1' }],
    segments: texts.map((text, i) => ({ id: `s${i + 1}`, start: i * 3, end: i * 3 + 2.5, speaker: 'S1', text, words: [] })),
  };
  await rt.store.put(blobKeys.transcript(asset), Buffer.from(JSON.stringify(t)));
}

describe('prepare-version of one language', () => {
  it('en-US -> en-US: the transcript is the script, untranslated; the record says so', async () => {
    const lines = ["Don't count your chickens before they hatch.", 'The meeting is at 10:30 tomorrow.'];
    await transcriptOf('ast_same', 'en-US', lines);
    const r = await prepareVersion({ v: 1, type: 'prepare-version', job_id: 'j1', asset_id: 'ast_same', source_locale: 'en-US', version: { version_id: 'ver_same', dubbing_id: 'dub_same', locale: 'en-US' } }, rt, { translate });
    const script: VersionScript = r.script;
    expect(script.segments.map((s) => s.target_text)).toEqual(lines);
    expect(script.translation_engine).toBe('none');
    expect(script.engines?.translation).toEqual({ id: 'none', label: 'no translation (one language)', selected: 'auto', reason: 'en-US -> en-US is one language: the transcript is the script (no translation)' });
  });

  it('es-ES -> es-MX with apertium (no es -> es direction): passed through, the record naming why', async () => {
    await transcriptOf('ast_es', 'es-ES', ['Vale, nos vemos mañana en el piso.']);
    const r = await prepareVersion({ v: 1, type: 'prepare-version', job_id: 'j2', asset_id: 'ast_es', source_locale: 'es-ES', version: { version_id: 'ver_es', dubbing_id: 'dub_es', locale: 'es-MX' } }, rt, { translate });
    expect(r.script.segments[0]!.target_text).toBe('Vale, nos vemos mañana en el piso.');
    expect(r.script.engines?.translation?.reason).toBe('es-ES and es-MX are one language and apertium has no es-ES -> es-MX direction: the transcript is the script, not adapted to es-MX');
  });
});
