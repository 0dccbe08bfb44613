/**
 * Separation engines by id, loaded lazily: importing the package loads no model and no native
 * binding until an engine is created.
 */
import { resolveContext, type PartialContext, type StageContext } from '@dub/core';
import { resolveEngineOptions, type ResolvedEngineOptions, type SeparationEngineOptions } from './options.js';
import type { SeparationEngine } from './types.js';

/** What an engine module exports. */
export interface SeparationEngineModule {
  createEngine(options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine>;
}

export const separationEngines = {
  htdemucs: (): Promise<SeparationEngineModule> => import('./engines/htdemucs.js'),
} as const satisfies Record<string, () => Promise<SeparationEngineModule>>;

export type SeparationEngineId = keyof typeof separationEngines;

export const SEPARATION_ENGINE_IDS = Object.keys(separationEngines) as readonly SeparationEngineId[];

/** Load engine `id` and create an instance (it owns its session until `dispose()`). */
export async function createSeparationEngine(id: SeparationEngineId = 'htdemucs', options: SeparationEngineOptions = {}, context: PartialContext = {}): Promise<SeparationEngine> {
  return loadSeparationEngine(id, resolveEngineOptions(options), resolveContext(context));
}

/** The same with options already resolved. */
export async function loadSeparationEngine(id: SeparationEngineId, options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine> {
  const mod = await separationEngines[id]();
  return mod.createEngine(options, ctx);
}
