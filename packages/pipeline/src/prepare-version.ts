/**
 * prepare-version: the editable script of one target language.
 *
 *   transcript (retryable wait until prepare-asset wrote it)
 *   -> translation (engine chosen by config for the pair) | the language's reference srt aligned
 *      | none where source and target are one language (passThroughReason of @dub/translate)
 *      | a copy of another version's script (copy_from_version_id)
 *   -> script blob (VersionScriptSchema) -> event version_prepared.
 *
 * The translation runs through the ArtifactCache keyed by the engine, the pair and the segments,
 * so a redelivery does not translate again. A script that already exists is kept (it may carry
 * studio edits) and the event is sent again.
 */
import {
  NotFoundError,
  VersionError,
  VersionScriptSchema,
  TranscriptSchema,
  blobKeys,
  validate,
  type JobRuntime,
  type PrepareVersionJob,
  type Transcript,
  type VersionScript,
  type EngineRecord,
  engineLabel,
  modelIdentity,
  recordTermsOf,
} from '@dub/core';
import { readSrt, srtNoteMessages } from '@dub/srt';
import { alignReferenceSrt, checkGlossaryLine, engineForPair, m2m100Files, substituteTerms, loadTranslateConfig, passThroughReason, TRANSLATE_ENGINES, TRANSLATE_HOST, translatorForPair, type TranslateConfig } from '@dub/translate';
import { ArtifactCache } from './artifacts.js';
import { StageRunner } from './stage-runner.js';

export interface PrepareVersionOptions {
  /** Translation configuration (default: loadTranslateConfig(process.env), once per handler set). */
  translate?: TranslateConfig;
}

export interface PrepareVersionResult {
  scriptKey: string;
  script: VersionScript;
  /** The script existed already and was kept. */
  kept: boolean;
}

const WEIGHTS = { transcript: 0.1, translation: 5, script: 0.1 };

async function readJson<T>(rt: JobRuntime, key: string, schema: Parameters<typeof validate>[0], what: string): Promise<T> {
  return validate<T>(schema, JSON.parse((await rt.store.getBuffer(key)).toString('utf8')), what);
}

/** The translation record's label: the engine's ("Apertium", "DeepL", ...), or "reference SRT" for a version made from one. */
export function translationLabel(engine: string): string {
  if (engine === 'reference_srt') return 'reference SRT';
  if (engine === 'none') return 'no translation (one language)';
  return TRANSLATE_ENGINES.has(engine) ? engineLabel(TRANSLATE_ENGINES.get(engine)) : engine;
}

/** The licence fields of a translation engine's record: Apertium's data terms; none for a service. */
function translationTerms(engine: string, target: string): ReturnType<typeof recordTermsOf> {
  return TRANSLATE_ENGINES.has(engine) ? recordTermsOf(TRANSLATE_ENGINES.termsOf(engine, target, TRANSLATE_HOST)) : {};
}

export async function prepareVersion(job: PrepareVersionJob, rt: JobRuntime, opts: PrepareVersionOptions = {}): Promise<PrepareVersionResult> {
  const versionId = job.version.version_id;
  const target = job.version.locale;
  const scriptKey = blobKeys.script(versionId);
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: rt.config.tmpDir });
  const runner = new StageRunner(rt, cache, { type: 'prepare-version', version_id: versionId }, { weights: WEIGHTS });

  const finish = async (script: VersionScript, kept: boolean): Promise<PrepareVersionResult> => {
    await rt.emit({ type: 'version_prepared', version_id: versionId, script_key: scriptKey });
    return { scriptKey, script, kept };
  };

  if (await rt.store.has(scriptKey)) {
    const existing = await readJson<VersionScript>(rt, scriptKey, VersionScriptSchema, 'version script');
    await runner.done('script', true, 0);
    return finish(existing, true);
  }

  let script: VersionScript;
  if (job.copy_from_version_id) {
    const fromKey = blobKeys.script(job.copy_from_version_id);
    if (!(await rt.store.has(fromKey))) {
      throw new NotFoundError(`the script of version ${job.copy_from_version_id} does not exist yet`, { retryable: true, details: { version_id: job.copy_from_version_id } });
    }
    const from = await readJson<VersionScript>(rt, fromKey, VersionScriptSchema, 'version script');
    script = { ...from, version_id: versionId, target_locale: target, updated_at: new Date().toISOString() };
  } else {
    const t0 = performance.now();
    const transcriptKey = blobKeys.transcript(job.asset_id);
    if (!(await rt.store.has(transcriptKey))) {
      throw new NotFoundError(`the transcript of asset ${job.asset_id} is not ready yet`, { retryable: true, details: { asset_id: job.asset_id } });
    }
    const transcript = await readJson<Transcript>(rt, transcriptKey, TranscriptSchema, 'transcript');
    await runner.done('transcript', false, (performance.now() - t0) / 1000);

    let engine: string;
    let translation: EngineRecord;
    let texts: Map<string, string>;
    let passThrough: string | undefined;
    if (job.version.srt !== undefined && job.version.srt.trim() !== '') {
      // Read as ffmpeg reads it (@dub/srt readSrt); what was normalised is recorded in the translation record's notes.
      let reading;
      try {
        reading = readSrt(job.version.srt);
      } catch (e) {
        throw new VersionError('general_error', `the reference srt of ${target} is not valid SRT: ${(e as Error).message}`, { cause: e });
      }
      const cues = reading.cues;
      const notes = srtNoteMessages(reading);
      const t1 = performance.now();
      engine = 'reference_srt';
      translation = { id: engine, label: translationLabel(engine), selected: 'explicit', reason: `the version was created with a reference srt for ${target}`, ...(notes.length ? { notes } : {}) };
      texts = new Map(alignReferenceSrt(transcript.segments, cues).map((a) => [a.id, a.text]));
      await runner.done('translation', false, (performance.now() - t1) / 1000);
    } else if ((passThrough = await passThroughReason(opts.translate ?? loadTranslateConfig(process.env), job.source_locale, target)) !== undefined) {
      // One language on both sides: no translation (never out to a pivot language and back).
      const t1 = performance.now();
      engine = 'none';
      translation = { id: engine, label: translationLabel(engine), selected: 'auto', reason: passThrough };
      // the glossary's fixed forms still apply (e.g. en-US -> en-GB "color" -> "colour")
      texts = new Map(transcript.segments.map((s) => [s.id, substituteTerms(s.text, job.version.glossary)]));
      await runner.done('translation', false, (performance.now() - t1) / 1000);
    } else {
      const config = opts.translate ?? loadTranslateConfig(process.env);
      const translator = await translatorForPair(config, job.source_locale, target);
      engine = translator.id;
      const chosen = engineForPair(config, job.source_locale, target);
      const explicit = chosen.from !== 'DUB_TRANSLATE_ENGINE' || process.env.DUB_TRANSLATE_ENGINE !== undefined;
      // the offline model's decoder (the larger file) identifies the weights that ran
      const weights = engine === 'm2m100' ? await modelIdentity(m2m100Files(config.m2m100).decoder) : undefined;
      const autoReason = engine === 'm2m100' ? 'the offline default: apertium has no direct mode for the pair, the offline model M2M100 translates it' : 'the offline default';
      translation = { id: engine, label: translationLabel(engine), ...(weights ? { model: weights.model, sha256: weights.sha256, size: weights.size } : {}), ...translationTerms(engine, target), selected: explicit ? 'explicit' : 'auto', reason: explicit ? `from ${chosen.from}` : autoReason };
      const segments = transcript.segments.map((s) => ({ id: s.id, text: s.text, speaker: s.speaker, duration: Math.max(0, s.end - s.start) }));
      const glossary = job.version.glossary?.length ? job.version.glossary : undefined;
      const r = await runner.run('translation', { engine, source: job.source_locale, target, segments, transcript: transcriptKey, ...(glossary ? { glossary } : {}) }, async (_out, ctx) =>
        translator.translate({ sourceLocale: job.source_locale, targetLocale: target, segments, ...(glossary ? { glossary } : {}) }, ctx),
      );
      texts = new Map(r.value.map((t) => [t.id, t.text]));
    }
    script = {
      v: 1,
      asset_id: job.asset_id,
      version_id: versionId,
      source_locale: job.source_locale,
      target_locale: target,
      translation_engine: engine,
      engines: { ...transcript.engines, translation },
      speakers: transcript.speakers,
      segments: transcript.segments.map((s) => {
        const targetText = texts.get(s.id) ?? '';
        // Which glossary terms of the line the translation carries (the quality report checks them again on the spoken text).
        const glossary = job.version.glossary?.length ? checkGlossaryLine(s.text, targetText, job.version.glossary, translationLabel(engine)) : [];
        return { id: s.id, start: s.start, end: s.end, speaker: s.speaker, source_text: s.text, target_text: targetText, source_words: s.words, ...(glossary.length ? { glossary } : {}) };
      }),
      updated_at: new Date().toISOString(),
    };
  }
  const t2 = performance.now();
  validate<VersionScript>(VersionScriptSchema, script, 'version script');
  await rt.store.put(scriptKey, Buffer.from(JSON.stringify(script)));
  await runner.done('script', false, (performance.now() - t2) / 1000);
  return finish(script, false);
}
