/**
 * The job handlers the worker runs (@dub/worker loads `jobHandlers` from this package by
 * default): prepare-asset, prepare-version and generate-version.
 */
import type { JobHandlers } from '@dub/core';
import { loadTranslateConfig, type TranslateConfig } from '@dub/translate';
import { prepareAsset, type PrepareAssetOptions } from './prepare-asset.js';
import { prepareVersion } from './prepare-version.js';
import { generateVersion, type GenerateVersionOptions } from './generate.js';
import { engineChoiceFromEnv, generateOptionsOf } from './engine-choice.js';

export interface JobHandlersOptions extends PrepareAssetOptions {
  /** Translation configuration; default loadTranslateConfig(process.env), read on first use. */
  translate?: TranslateConfig;
  /** Generation options; default: the engine choices of DUB_TTS_ENGINE and DUB_LIPS_ENGINE. */
  generate?: GenerateVersionOptions;
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
  return {
    'prepare-asset': async (job, rt) => {
      await prepareAsset(job, rt, opts);
    },
    'prepare-version': async (job, rt) => {
      await prepareVersion(job, rt, { translate: translateConfig() });
    },
    'generate-version': async (job, rt) => {
      // the translation configuration too: a line too long for its time may be re-translated shorter
      await generateVersion(job, rt, { translate: translateConfig(), ...generate });
    },
  };
}

export const jobHandlers: JobHandlers = createJobHandlers();
