/**
 * script (of a version): the editable script (core VersionScriptSchema) stored as the version's
 * script blob: built from the transcript and its translation (with each line's glossary check),
 * or a copy of another version's script (copy_from_version_id: a retryable NotFoundError until
 * that one exists).
 */
import { blobKeys, NotFoundError, validate, VersionScriptSchema, type VersionScript } from '@dub/core';
import { checkGlossaryLine } from '@dub/translate';
import { versionStage, type VersionContext } from './version-state.js';
import { translationLabel } from './version-translation.js';
import { readJson } from './version-transcript.js';

/** Validates and stores the script (`stage_done` script). */
async function writeScript(prep: VersionContext, script: VersionScript): Promise<{ script: VersionScript }> {
  const t2 = performance.now();
  validate<VersionScript>(VersionScriptSchema, script, 'version script');
  await prep.rt.store.put(prep.scriptKey, Buffer.from(JSON.stringify(script)));
  await prep.runner.done('script', false, (performance.now() - t2) / 1000);
  return { script };
}

export const versionScript = versionStage({
  name: 'script',
  weight: 0.1,
  inputs: ['transcript', 'translation'],
  async run({ transcript, translation }, prep) {
    const { job } = prep;
    const { engine, record, texts } = translation;
    return writeScript(prep, {
      v: 1,
      asset_id: job.asset_id,
      version_id: job.version.version_id,
      source_locale: job.source_locale,
      target_locale: job.version.locale,
      translation_engine: engine,
      engines: { ...transcript.engines, translation: record },
      speakers: transcript.speakers,
      segments: transcript.segments.map((s) => {
        const targetText = texts.get(s.id) ?? '';
        // Which glossary terms of the line the translation carries (the quality report checks them again on the spoken text).
        const glossary = job.version.glossary?.length ? checkGlossaryLine(s.text, targetText, job.version.glossary, translationLabel(engine)) : [];
        return { id: s.id, start: s.start, end: s.end, speaker: s.speaker, source_text: s.text, target_text: targetText, source_words: s.words, ...(glossary.length ? { glossary } : {}) };
      }),
      updated_at: new Date().toISOString(),
    });
  },
});

export const copiedScript = versionStage({
  name: 'script',
  weight: 0.1,
  inputs: [],
  async run(_, prep) {
    const { job, rt } = prep;
    const from = job.copy_from_version_id!;
    const fromKey = blobKeys.script(from);
    if (!(await rt.store.has(fromKey))) {
      throw new NotFoundError(`the script of version ${from} does not exist yet`, { retryable: true, details: { version_id: from } });
    }
    const script = await readJson<VersionScript>(rt, fromKey, VersionScriptSchema, 'version script');
    return writeScript(prep, { ...script, version_id: job.version.version_id, target_locale: job.version.locale, updated_at: new Date().toISOString() });
  },
});
