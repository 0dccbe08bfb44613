/**
 * onnxruntime's graph optimizations, done once per model and machine instead of at every session
 * creation (issue #27, cold start). A CPU session is created with `graphOptimizationLevel: 'all'`;
 * its optimized graph (fusions, constant folding, the CPU's blocked layouts) is what runs. The
 * first creation also writes that graph to the derived-models folder (`optimizedModelFilePath`);
 * later creations load the written graph with the optimizations off, the offline mode
 * onnxruntime documents, so the same graph runs without being optimized again (Kokoro-82M int8:
 * 1.04 s -> 0.41 s per session on the 2-core machine, Whisper base's decoder 0.33 s -> 0.19 s).
 *
 * The graph depends on the model file, onnxruntime's version and the CPU (the blocked layouts
 * follow its vector width), so all three are in the file's name: another model, onnxruntime or
 * CPU optimizes again. `DUB_ONNX_OPTIMIZED_GRAPHS=0` turns the cache off.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pruneDerivedModels, type DerivedSourceRecord } from './prune-derived.js';

/** Bumped when what is written changes; older files are then not read. */
export const OPTIMIZED_GRAPH_VERSION = 1;

/**
 * Models smaller than this load as they are: their optimization is quick, and test fixtures made
 * in temporary folders leave nothing in the user's cache.
 */
export const OPTIMIZED_GRAPH_MIN_BYTES = 1 << 20;

/** Whether CPU sessions use the optimized-graph cache: `DUB_ONNX_OPTIMIZED_GRAPHS`, `1`/`on` (default) or `0`/`off`. */
export function optimizedGraphsOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_ONNX_OPTIMIZED_GRAPHS ?? '').trim().toLowerCase();
  if (v === '' || v === '1' || v === 'on' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return false;
  throw new RangeError(`DUB_ONNX_OPTIMIZED_GRAPHS must be 1/on or 0/off, got "${env.DUB_ONNX_OPTIMIZED_GRAPHS}"`);
}

let cpuId: string | undefined;
/** The CPU as the optimizations see it: architecture, model name and instruction-set flags. */
export function cpuIdentity(): string {
  if (cpuId !== undefined) return cpuId;
  let flags = '';
  try {
    const info = fs.readFileSync('/proc/cpuinfo', 'utf8');
    flags = /^(?:flags|Features)\s*:\s*(.*)$/m.exec(info)?.[1]?.trim() ?? '';
  } catch {
    // not Linux: the model name and architecture only
  }
  cpuId = `${os.arch()}|${os.cpus()[0]?.model ?? ''}|${flags}`;
  return cpuId;
}

export interface OptimizedGraph {
  /** Where the optimized graph of `file` is (or goes). */
  target: string;
  /** Whether it is there already. */
  cached: boolean;
}

/** Where the optimized graph of model `file` for onnxruntime `ortVersion` on this CPU is kept, and whether it is there. */
export async function optimizedGraphFile(file: string, ortVersion: string, dir: string): Promise<OptimizedGraph> {
  const st = await fsp.stat(file);
  const id = crypto.createHash('sha256').update(`${path.resolve(file)}|${st.size}|${st.mtimeMs}|ort ${ortVersion}|${cpuIdentity()}|v${OPTIMIZED_GRAPH_VERSION}`).digest('hex').slice(0, 16);
  const stem = path.basename(file).replace(/\.onnx$/i, '');
  const target = path.join(dir, `${stem}.${id}.optimized.onnx`);
  return { target, cached: fs.existsSync(target) };
}

/**
 * Create a CPU session of `file` through the cache: the kept optimized graph with optimizations
 * off, or `file` optimized and its graph written (to a part file renamed into place, so a reader
 * never sees half a file). Where writing or reading the cache fails, or the model is under
 * `minBytes`, `file` is loaded as it is.
 */
export async function createThroughOptimizedGraph<S>(
  file: string,
  ortVersion: string,
  dir: string,
  create: (file: string, extra: { graphOptimizationLevel?: 'disabled'; optimizedModelFilePath?: string }) => Promise<S>,
  minBytes = OPTIMIZED_GRAPH_MIN_BYTES,
): Promise<{ session: S; loadedFrom?: string; wrote?: string }> {
  let g: OptimizedGraph;
  try {
    if ((await fsp.stat(file)).size < minBytes) return { session: await create(file, {}) };
    g = await optimizedGraphFile(file, ortVersion, dir);
  } catch {
    return { session: await create(file, {}) };
  }
  if (g.cached) {
    try {
      const session = await create(g.target, { graphOptimizationLevel: 'disabled' });
      // a graph kept before records were written gets one now (its name matches the source as it is)
      if (!fs.existsSync(`${g.target}.json`)) await writeRecord(file, g.target, ortVersion).catch(() => undefined);
      return { session, loadedFrom: g.target };
    } catch {
      // unreadable or damaged: optimized again below, and replaced
    }
  }
  const part = `${g.target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.part.onnx`;
  try {
    await fsp.mkdir(dir, { recursive: true });
  } catch {
    return { session: await create(file, {}) };
  }
  let session: S;
  try {
    session = await create(file, { optimizedModelFilePath: part });
  } catch {
    await fsp.rm(part, { force: true }).catch(() => undefined);
    return { session: await create(file, {}) };
  }
  try {
    await fsp.rename(part, g.target);
  } catch {
    await fsp.rm(part, { force: true }).catch(() => undefined);
    return { session };
  }
  // its record (the source's identity), then the files of changed or removed models go (prune-derived.ts)
  try {
    await writeRecord(file, g.target, ortVersion);
    await pruneDerivedModels(dir);
  } catch {
    // no record: the graph is used, and left when its model changes
  }
  return { session, wrote: g.target };
}

/** `<target>.json`: the identity of the model file `target` was optimized from, for pruneDerivedModels. */
async function writeRecord(file: string, target: string, ortVersion: string): Promise<void> {
  const st = await fsp.stat(file);
  const record: DerivedSourceRecord & { ort: string } = { source: path.resolve(file), size: st.size, mtimeMs: st.mtimeMs, ort: ortVersion };
  const part = `${target}.json.${process.pid}.part`;
  await fsp.writeFile(part, JSON.stringify(record));
  await fsp.rename(part, `${target}.json`);
}
