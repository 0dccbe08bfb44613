/**
 * The registry entry of `spleeter-2stems` (SEPARATION_ENGINES, registry.ts): Spleeter 2-stems,
 * whose code and pretrained models Deezer distributes under the MIT licence, so it is what `auto`
 * runs under the model policy `commercial` when its files are installed (`npx dub models fetch
 * spleeter-2stems`), after the HTDemucs engines that policy passes over. Under `any` HTDemucs stays
 * first. Not installed, `auto` passes over it without making it the reason, and says how to
 * install it. Loads nothing until an engine is created.
 */
import { modelSupport, resolveContext, type EngineEntry } from '@dub/core';
import type { ResolvedEngineOptions } from '../options.js';
import type { SeparationEngine, SeparationEngineHost } from '../types.js';

/** Spleeter 2-stems (sherpa-onnx's ONNX export): the manifest entry and its two graphs, the vocals one first. */
export const SPLEETER_MODEL = Object.freeze({ id: 'spleeter-2stems', files: Object.freeze(['vocals.onnx', 'accompaniment.onnx']) });

const FETCH = `npx dub models fetch ${SPLEETER_MODEL.id}`;

export const SPLEETER_ENTRY: EngineEntry<SeparationEngine | null, ResolvedEngineOptions, SeparationEngineHost> = {
  id: SPLEETER_MODEL.id,
  label: 'Spleeter 2-stems',
  installHint: FETCH,
  weights: { models: [SPLEETER_MODEL.id] },
  supports: (_locale, env) => {
    const s = modelSupport(SPLEETER_MODEL.id, SPLEETER_MODEL.files, env.models, { ok: 'the Spleeter 2-stems model is installed (MIT weights, cleared for commercial use)', missing: 'no Spleeter 2-stems model here' });
    return s.ok ? s : { ...s, silent: true, note: `Spleeter 2-stems (MIT, cleared for commercial use) is not installed: ${FETCH}` };
  },
  create: async (o, env) => (await import('./spleeter.js')).createEngine(o, env.ctx ?? resolveContext()),
};
