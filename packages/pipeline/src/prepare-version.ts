/**
 * prepare-version: the editable script of one target language.
 *
 *   transcript (retryable wait until prepare-asset wrote it)
 *   -> translation (engine chosen by config for the pair) | the language's reference srt aligned
 *      | none where source and target are one language (passThroughReason of @dub/translate)
 *   -> script blob (VersionScriptSchema) -> event version_prepared;
 *   or a copy of another version's script (copy_from_version_id) -> script blob -> event.
 *
 * Each is a list of stages (TRANSLATED, COPIED) whose modules live under
 * prepare-stages/version-*.ts, run by `runStages`. The translation runs through the
 * ArtifactCache keyed by the engine, the pair and the segments, so a redelivery does not
 * translate again. A script that already exists is kept (it may carry studio edits) and the
 * event is sent again.
 */
import { blobKeys, VersionScriptSchema, type JobRuntime, type PrepareVersionJob, type VersionScript } from '@dub/core';
import { loadTranslateConfig, type TranslateConfig } from '@dub/translate';
import { ArtifactCache } from './artifacts.js';
import { runStages, stageWeights, type PipelineStage } from './pipeline-stage.js';
import { StageRunner } from './stage-runner.js';
import type { VersionContext, VersionState } from './prepare-stages/version-state.js';
import { copiedScript, versionScript } from './prepare-stages/version-script.js';
import { readJson, versionTranscript } from './prepare-stages/version-transcript.js';
import { translation } from './prepare-stages/version-translation.js';

export { translationLabel } from './prepare-stages/version-translation.js';

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

/** A version translated from the asset's transcript, in order. */
export const TRANSLATED: readonly PipelineStage<VersionState>[] = [versionTranscript, translation, versionScript];
/** A version whose script is a copy of another version's. */
export const COPIED: readonly PipelineStage<VersionState>[] = [copiedScript];

/** The StageRunner's progress shares (every job's: no stage has a `when`). */
const WEIGHTS = stageWeights(TRANSLATED, {} as VersionState);

export async function prepareVersion(job: PrepareVersionJob, rt: JobRuntime, opts: PrepareVersionOptions = {}): Promise<PrepareVersionResult> {
  const versionId = job.version.version_id;
  const scriptKey = blobKeys.script(versionId);
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: rt.config.tmpDir });
  const runner = new StageRunner(rt, cache, { type: 'prepare-version', version_id: versionId }, { weights: WEIGHTS });
  let translate = opts.translate;
  const prep: VersionContext = { job, rt, runner, scriptKey, translateConfig: () => (translate ??= loadTranslateConfig(process.env)) };

  const finish = async (script: VersionScript, kept: boolean): Promise<PrepareVersionResult> => {
    await rt.emit({ type: 'version_prepared', version_id: versionId, script_key: scriptKey });
    return { scriptKey, script, kept };
  };

  if (await rt.store.has(scriptKey)) {
    const existing = await readJson<VersionScript>(rt, scriptKey, VersionScriptSchema, 'version script');
    await runner.done('script', true, 0);
    return finish(existing, true);
  }
  const done = await runStages(job.copy_from_version_id ? COPIED : TRANSLATED, { prep });
  return finish(done.script!, false);
}
