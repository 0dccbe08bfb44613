/**
 * The job handlers the worker runs (@dub/worker loads `jobHandlers` from this package by
 * default). prepare-asset and prepare-version are the real orchestrations; generate-version is
 * not part of this build yet and fails permanently with `engine_unavailable`.
 */
import { DubError, type JobHandlers } from '@dub/core';
import { loadTranslateConfig, type TranslateConfig } from '@dub/translate';
import { prepareAsset, type PrepareAssetOptions } from './prepare-asset.js';
import { prepareVersion } from './prepare-version.js';

export interface JobHandlersOptions extends PrepareAssetOptions {
  /** Translation configuration; default loadTranslateConfig(process.env), read on first use. */
  translate?: TranslateConfig;
}

export function createJobHandlers(opts: JobHandlersOptions = {}): JobHandlers {
  let translate = opts.translate;
  const translateConfig = (): TranslateConfig => (translate ??= loadTranslateConfig(process.env));
  return {
    'prepare-asset': async (job, rt) => {
      await prepareAsset(job, rt, opts);
    },
    'prepare-version': async (job, rt) => {
      await prepareVersion(job, rt, { translate: translateConfig() });
    },
    'generate-version': async (job) => {
      throw new DubError(
        'engine_unavailable',
        `generation of version ${job.version_id} is not possible: the generation stages (synthesis, duration fitting, mixing, lips, mux) are not part of this build yet`,
        { retryable: false, details: { version_id: job.version_id } },
      );
    },
  };
}

export const jobHandlers: JobHandlers = createJobHandlers();
