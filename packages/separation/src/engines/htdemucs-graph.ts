/**
 * Which form of the HTDemucs graph runs: the whole graph, or the same graph split into consecutive
 * parts by scripts/split-htdemucs.py (made by scripts/fetch-npm-models.sh into
 * `<models>/htdemucs/split/`). The parts hold the same nodes and weights; run one after another,
 * each part's intermediates are freed when it returns, so one 7.8 s segment peaks at ~0.9 GB on
 * CPU instead of ~2.8 GB with the allocator setting `dub` uses (~1.5 GB without it; see
 * bench/separation-fast.mjs), with outputs equal to the whole graph's within float rounding.
 *
 * The parts are used only when their plan names the sha256 of the very htdemucs.onnx that
 * resolves here and every part file has the size and sha256 the plan records; otherwise the whole
 * graph runs and `reason` says why. On CUDA the whole graph runs (device memory is not the
 * constraint there, and every part boundary would copy tensors to the host and back).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ModelMissingError, modelIdentity, resolveModelFile } from '@dub/core';

export const HTDEMUCS_SPLIT_FORMAT = 'dub.htdemucs-split/1';
export const HTDEMUCS_SPLIT_PLAN = 'split/plan.json';
const HTDEMUCS_INT8_ID = 'htdemucs-int8';

export interface SplitPart {
  /** Absolute path of the part's ONNX file. */
  file: string;
  sha256: string;
  size: number;
  inputs: string[];
  outputs: string[];
}

export interface SplitValue {
  name: string;
  shape: (number | string)[];
}

export interface SplitPlan {
  /** The plan file. */
  file: string;
  inputs: SplitValue[];
  outputs: SplitValue[];
  parts: SplitPart[];
}

export interface HtdemucsGraph {
  /** The whole graph's file (its sha256 is the model's identity either way). */
  model: string;
  /** Set when the split parts run. */
  split: SplitPlan | undefined;
  /** Why this form runs, for the engine record. */
  reason: string;
  /** The file whose session tells the execution provider (the first part, or the whole graph). */
  sessionFile: string;
}

export interface HtdemucsGraphOptions {
  /** The model id whose folder holds `split/plan.json` (default `htdemucs`; `htdemucs-int8` for the quantized file). */
  modelId?: string | undefined;
  modelsDir?: string | undefined;
  device?: string | undefined;
  /** false: always the whole graph; true: the parts or an error; undefined: parts when valid, on CPU. */
  split?: boolean | undefined;
}

/** `DUB_HTDEMUCS_SPLIT`: 0 runs the whole graph, 1 requires the parts, unset or auto picks. */
export function splitChoiceFromEnv(env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  const v = (env.DUB_HTDEMUCS_SPLIT ?? '').trim().toLowerCase();
  if (v === '0' || v === 'false' || v === 'no') return false;
  if (v === '1' || v === 'true' || v === 'yes') return true;
  return undefined;
}

class SplitUnusable extends Error {}

async function loadPlan(model: string, modelId: string, modelsDir: string | undefined): Promise<SplitPlan> {
  let planFile: string;
  const maker = modelId === 'htdemucs' ? 'scripts/fetch-npm-models.sh makes them with python3-onnx' : 'scripts/quantize-htdemucs.py makes them (run by scripts/fetch-npm-models.sh)';
  try {
    planFile = resolveModelFile(modelId, HTDEMUCS_SPLIT_PLAN, modelsDir ? { modelsDir } : {});
  } catch {
    throw new SplitUnusable(`no split parts here (${maker})`);
  }
  let raw: {
    format?: unknown;
    source?: { sha256?: unknown };
    inputs?: SplitValue[];
    outputs?: SplitValue[];
    parts?: { file: string; sha256: string; size: number; inputs: string[]; outputs: string[] }[];
  };
  try {
    raw = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  } catch (e) {
    throw new SplitUnusable(`${planFile} is not readable JSON (${(e as Error).message})`);
  }
  if (raw.format !== HTDEMUCS_SPLIT_FORMAT || !Array.isArray(raw.parts) || raw.parts.length === 0 || !Array.isArray(raw.inputs) || !Array.isArray(raw.outputs)) {
    throw new SplitUnusable(`${planFile} is not a ${HTDEMUCS_SPLIT_FORMAT} plan`);
  }
  const source = await modelIdentity(model);
  if (raw.source?.sha256 !== source.sha256) {
    throw new SplitUnusable(`the split parts were made from another ${path.basename(model)} (plan sha256 ${String(raw.source?.sha256).slice(0, 12)}, this one ${source.sha256.slice(0, 12)}); run ${maker.split(' ')[0]} again`);
  }
  const dir = path.dirname(planFile);
  const parts: SplitPart[] = [];
  for (const p of raw.parts) {
    const file = path.join(dir, path.basename(p.file));
    if (!fs.existsSync(file)) throw new SplitUnusable(`split part ${p.file} is missing; run ${maker.split(' ')[0]} again`);
    const id = await modelIdentity(file);
    if (id.size !== p.size || id.sha256 !== p.sha256) throw new SplitUnusable(`split part ${p.file} does not match its plan (size or sha256); run ${maker.split(' ')[0]} again`);
    parts.push({ file, sha256: p.sha256, size: p.size, inputs: p.inputs, outputs: p.outputs });
  }
  return { file: planFile, inputs: raw.inputs, outputs: raw.outputs, parts };
}

/** Decide the form of the graph for `model` (a resolved htdemucs.onnx). */
export async function resolveHtdemucsGraph(model: string, o: HtdemucsGraphOptions = {}): Promise<HtdemucsGraph> {
  const whole = (reason: string): HtdemucsGraph => ({ model, split: undefined, reason, sessionFile: model });
  // Other engines' models (spleeter-2stems) have no split form: their file runs as it is.
  if (o.modelId !== undefined && o.modelId !== 'htdemucs' && o.modelId !== HTDEMUCS_INT8_ID) return whole(`${path.basename(model)} as it is (${o.modelId} has no split form)`);
  const choice = o.split ?? splitChoiceFromEnv();
  if (choice === false) return whole('whole graph (DUB_HTDEMUCS_SPLIT=0)');
  if (choice === undefined && o.device !== undefined && o.device !== 'cpu') return whole(`whole graph (device ${o.device}: the parts are for bounded host memory on CPU)`);
  try {
    const split = await loadPlan(model, o.modelId ?? 'htdemucs', o.modelsDir);
    return { model, split, reason: `${split.parts.length} consecutive parts of this graph (${path.dirname(split.file)}), bounded memory on CPU`, sessionFile: split.parts[0]!.file };
  } catch (e) {
    if (!(e instanceof SplitUnusable)) throw e;
    if (choice === true) throw new ModelMissingError('htdemucs', `DUB_HTDEMUCS_SPLIT=1 but the HTDemucs split parts cannot be used: ${e.message}`);
    return whole(`whole graph (~2.8 GB peak per segment): ${e.message}`);
  }
}
