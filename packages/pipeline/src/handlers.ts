/**
 * The job handlers the worker runs (@dub/worker loads `jobHandlers` from this package by
 * default): prepare-asset, prepare-version and generate-version. Each prepare job is checked on
 * arrival against the engines here (pair-support.ts) and failed before any stage when its pair
 * cannot be served, naming the stage, what is missing and the fix.
 */
import { AssetError, VersionError, type JobHandlers, type JobRuntime } from '@dub/core';
import { loadTranslateConfig, type TranslateConfig } from '@dub/translate';
import { prepareAsset, type PrepareAssetOptions } from './prepare-asset.js';
import { prepareVersion } from './prepare-version.js';
import { generateVersion, type GenerateVersionOptions } from './generate.js';
import { engineChoiceFromEnv, generateOptionsOf } from './engine-choice.js';
import { PairChecker, pairRefusalMessage, type PairJob } from './pair-support.js';

export interface JobHandlersOptions extends PrepareAssetOptions {
  /** Translation configuration; default loadTranslateConfig(process.env), read on first use. */
  translate?: TranslateConfig;
  /** Generation options; default: the engine choices of DUB_TTS_ENGINE and DUB_LIPS_ENGINE. */
  generate?: GenerateVersionOptions;
  /**
   * Check on a job's arrival that the engines here serve its pair (speech recognition of the
   * source, translation, speech synthesis of each target) and fail it before any stage when not:
   * prepare-asset with invalid_input, prepare-version with unsupported_language_pair (default true).
   */
  checkPairs?: boolean;
}

/**
 * The generation options a worker process uses when none are given: the translation
 * configuration and the engine choices of its environment (what the API's one-line re-dub reads
 * too, so that it synthesizes as the embedded worker's generation would).
 */
export function generateOptionsFromEnv(env: Record<string, string | undefined> = process.env): GenerateVersionOptions {
  return { translate: loadTranslateConfig(env), ...generateOptionsOf(engineChoiceFromEnv(env)) };
}

export function createJobHandlers(opts: JobHandlersOptions = {}): JobHandlers {
  let translate = opts.translate;
  const translateConfig = (): TranslateConfig => (translate ??= loadTranslateConfig(process.env));
  const generate = opts.generate ?? generateOptionsOf(engineChoiceFromEnv(process.env));
  // On arrival, before any stage: whether the engines here serve the job's pair (pair-support.ts).
  let checker: PairChecker | undefined;
  const refusal = async (rt: JobRuntime, job: PairJob): Promise<string | undefined> => {
    if (opts.checkPairs === false) return undefined;
    if (!checker) {
      const env = engineChoiceFromEnv(process.env);
      const choice = { ...env, ...(opts.asrEngine ? { asr: opts.asrEngine } : {}), ...(opts.generate?.tts?.engine ? { tts: opts.generate.tts.engine } : {}) };
      checker = new PairChecker({ modelsDir: rt.config.modelsDir, device: rt.config.device, choice, translate: translateConfig() });
    }
    const r = await checker.check(job);
    return r ? pairRefusalMessage(r) : undefined;
  };
  return {
    'prepare-asset': async (job, rt) => {
      const refused = await refusal(rt, {
        source: job.locale,
        sourceSrt: job.source_srt !== undefined || job.source_srt_key !== undefined,
        targets: job.versions.map((v, i) => ({ locale: v.locale, field: `versions[${i}].locale`, srt: v.srt !== undefined || v.srt_key !== undefined })),
      });
      if (refused) throw new AssetError('invalid_input', refused);
      await prepareAsset(job, rt, opts);
    },
    'prepare-version': async (job, rt) => {
      // the source is transcribed already: its translation and its voice
      const refused = await refusal(rt, { source: job.source_locale, sourceField: 'source_locale', sourceSrt: true, targets: [{ locale: job.version.locale, field: 'version.locale', srt: job.version.srt !== undefined || job.version.srt_key !== undefined || job.copy_from_version_id !== undefined }] });
      if (refused) throw new VersionError('unsupported_language_pair', refused);
      await prepareVersion(job, rt, { translate: translateConfig() });
    },
    'generate-version': async (job, rt) => {
      // a voice that speaks the target here (the translation is in the script already)
      const refused = await refusal(rt, { source: '', targets: [{ locale: job.locale, field: 'locale' }] });
      if (refused) throw new VersionError('unsupported_language_pair', refused);
      // the translation configuration too: a line too long for its time may be re-translated shorter
      await generateVersion(job, rt, { translate: translateConfig(), ...generate });
    },
  };
}

export const jobHandlers: JobHandlers = createJobHandlers();
