/**
 * translation (of a version): each transcript segment's text in the target language, from the
 * first that applies:
 * - the language's reference srt, aligned to the segments (read as ffmpeg reads it: @dub/srt
 *   readSrt; what was normalised is in the record's notes);
 * - none where source and target are one language (passThroughReason of @dub/translate; the
 *   glossary's fixed forms still apply);
 * - the engine the configuration chooses for the pair, through the ArtifactCache keyed by the
 *   engine, the pair and the segments (a redelivery does not translate again).
 */
import { VersionError, engineLabel, modelIdentity, recordTermsOf, type EngineRecord, type Transcript } from '@dub/core';
import { readSrt, srtNoteMessages } from '@dub/srt';
import { alignReferenceSrt, engineForPair, m2m100Files, passThroughReason, substituteTerms, TRANSLATE_ENGINES, TRANSLATE_HOST, translatorForPair } from '@dub/translate';
import { versionStage, type VersionContext, type VersionState } from './version-state.js';

type Translation = NonNullable<VersionState['translation']>;

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

export const translation = versionStage({
  name: 'translation',
  weight: 5,
  inputs: ['transcript', 'transcriptKey'],
  async run({ transcript, transcriptKey }, prep) {
    const { srt, locale } = prep.job.version;
    if (srt !== undefined && srt.trim() !== '') return { translation: await fromReferenceSrt(prep, srt, transcript) };
    const passThrough = await passThroughReason(prep.translateConfig(), prep.job.source_locale, locale);
    if (passThrough !== undefined) return { translation: await untranslated(prep, passThrough, transcript) };
    return { translation: await translated(prep, transcript, transcriptKey) };
  },
});

/** The version's reference srt aligned to the transcript's segments. */
async function fromReferenceSrt(prep: VersionContext, srt: string, transcript: Transcript): Promise<Translation> {
  const target = prep.job.version.locale;
  let reading;
  try {
    reading = readSrt(srt);
  } catch (e) {
    throw new VersionError('general_error', `the reference srt of ${target} is not valid SRT: ${(e as Error).message}`, { cause: e });
  }
  const cues = reading.cues;
  const notes = srtNoteMessages(reading);
  const t1 = performance.now();
  const engine = 'reference_srt';
  const record: EngineRecord = { id: engine, label: translationLabel(engine), selected: 'explicit', reason: `the version was created with a reference srt for ${target}`, ...(notes.length ? { notes } : {}) };
  const texts = new Map(alignReferenceSrt(transcript.segments, cues).map((a) => [a.id, a.text]));
  await prep.runner.done('translation', false, (performance.now() - t1) / 1000);
  return { engine, record, texts };
}

/** One language on both sides: no translation (never out to a pivot language and back). */
async function untranslated(prep: VersionContext, reason: string, transcript: Transcript): Promise<Translation> {
  const t1 = performance.now();
  const engine = 'none';
  const record: EngineRecord = { id: engine, label: translationLabel(engine), selected: 'auto', reason };
  // the glossary's fixed forms still apply (e.g. en-US -> en-GB "color" -> "colour")
  const texts = new Map(transcript.segments.map((s) => [s.id, substituteTerms(s.text, prep.job.version.glossary)]));
  await prep.runner.done('translation', false, (performance.now() - t1) / 1000);
  return { engine, record, texts };
}

/** The pair's engine (chosen by the configuration) translates the segments, through the cache. */
async function translated(prep: VersionContext, transcript: Transcript, transcriptKey: string): Promise<Translation> {
  const { job, runner } = prep;
  const target = job.version.locale;
  const config = prep.translateConfig();
  const translator = await translatorForPair(config, job.source_locale, target);
  const engine = translator.id;
  const chosen = engineForPair(config, job.source_locale, target);
  const explicit = chosen.from !== 'DUB_TRANSLATE_ENGINE' || process.env.DUB_TRANSLATE_ENGINE !== undefined;
  // the offline model's decoder (the larger file) identifies the weights that ran
  const weights = engine === 'm2m100' ? await modelIdentity(m2m100Files(config.m2m100).decoder) : undefined;
  const autoReason = engine === 'm2m100' ? 'the offline default: apertium has no direct mode for the pair, the offline model M2M100 translates it' : 'the offline default';
  const record: EngineRecord = { id: engine, label: translationLabel(engine), ...(weights ? { model: weights.model, sha256: weights.sha256, size: weights.size } : {}), ...translationTerms(engine, target), selected: explicit ? 'explicit' : 'auto', reason: explicit ? `from ${chosen.from}` : autoReason };
  const segments = transcript.segments.map((s) => ({ id: s.id, text: s.text, speaker: s.speaker, duration: Math.max(0, s.end - s.start) }));
  const glossary = job.version.glossary?.length ? job.version.glossary : undefined;
  const r = await runner.run('translation', { engine, source: job.source_locale, target, segments, transcript: transcriptKey, ...(glossary ? { glossary } : {}) }, async (_out, ctx) =>
    translator.translate({ sourceLocale: job.source_locale, targetLocale: target, segments, ...(glossary ? { glossary } : {}) }, ctx),
  );
  return { engine, record, texts: new Map(r.value.map((t) => [t.id, t.text])) };
}
