/**
 * The derived-models folder (derived-model.ts, optimized-graph.ts) keeps one file per source model
 * file, derivation and (for optimized graphs) onnxruntime version and CPU, named by the source's
 * path, size and modification time. A model that is updated or removed leaves its files behind:
 * on a worker host that updates its models, the folder would grow by a model's size (up to
 * ~100 MB a file) with each update. Each file therefore has a record beside it (`<file>.json`: the
 * source's path, size and modification time), and whenever a new file is written the folder is
 * pruned: files whose source is gone or has changed, and part files left by a process that died
 * while writing, are removed. Files of the same source for another onnxruntime or CPU (a cache
 * folder shared between hosts) are kept.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';

/** What a derived file's record holds of its source (derived-model.ts and optimized-graph.ts write it). */
export interface DerivedSourceRecord {
  source: string;
  size: number;
  mtimeMs: number;
}

/** Part files older than this are taken for the leftovers of a process that died while writing. */
export const PART_FILE_MAX_AGE_MS = 60 * 60 * 1000;

export interface PruneResult {
  /** The files removed (derived files, their records, stale part files). */
  removed: string[];
  /** Bytes freed. */
  bytes: number;
}

/**
 * Remove from `dir` the derived files whose source (in their record) no longer exists or has
 * another size or modification time, with their records, and part files older than
 * PART_FILE_MAX_AGE_MS. Files without a record are left alone. Never throws: a folder that
 * cannot be read prunes nothing.
 */
export async function pruneDerivedModels(dir: string, now = Date.now()): Promise<PruneResult> {
  const out: PruneResult = { removed: [], bytes: 0 };
  // a file derived from a derived file (the optimized graph of a rewritten model) goes in the pass after its source
  for (let pass = 0; pass < 3; pass++) {
    const before = out.removed.length;
    await prunePass(dir, now, out);
    if (out.removed.length === before) break;
  }
  return out;
}

async function prunePass(dir: string, now: number, out: PruneResult): Promise<void> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return;
  }
  const remove = async (name: string): Promise<void> => {
    const f = path.join(dir, name);
    try {
      const st = await fsp.stat(f);
      await fsp.rm(f, { force: true });
      out.removed.push(f);
      out.bytes += st.size;
    } catch {
      // gone already, or not ours to remove
    }
  };
  for (const name of names) {
    if (/\.part(\.onnx)?$/.test(name)) {
      try {
        if (now - (await fsp.stat(path.join(dir, name))).mtimeMs > PART_FILE_MAX_AGE_MS) await remove(name);
      } catch {
        // gone meanwhile
      }
      continue;
    }
    if (!name.endsWith('.onnx.json')) continue;
    let rec: Partial<DerivedSourceRecord>;
    try {
      rec = JSON.parse(await fsp.readFile(path.join(dir, name), 'utf8')) as Partial<DerivedSourceRecord>;
    } catch {
      continue;
    }
    if (typeof rec.source !== 'string' || typeof rec.size !== 'number' || typeof rec.mtimeMs !== 'number') continue;
    let stale: boolean;
    try {
      const st = await fsp.stat(rec.source);
      stale = st.size !== rec.size || st.mtimeMs !== rec.mtimeMs;
    } catch (e) {
      stale = (e as NodeJS.ErrnoException).code === 'ENOENT';
    }
    if (!stale) continue;
    await remove(name.slice(0, -'.json'.length));
    await remove(name);
  }
}
