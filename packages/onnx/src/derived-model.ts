/**
 * A model file derived from another by a rewrite of its bytes (conv-integer.ts, graph-outputs.ts),
 * kept in the derived-models folder: made once per source file (same path, size and modification
 * time) and derivation key, written whole, then renamed into place, with a record of what the
 * rewrite found. A derivation that changes nothing is recorded and the source itself is loaded;
 * where the folder cannot be written, the derived bytes are returned instead.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pruneDerivedModels } from './prune-derived.js';

/** Where derived models are kept: `$XDG_CACHE_HOME/dub/derived` (default `~/.cache/dub/derived`). */
export function derivedModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dub', 'derived');
}

export interface Derivation<F extends object> {
  /** The derived file's name: `<stem>.<id>.<suffix>.onnx`. */
  suffix: string;
  /** What the derived file depends on besides the source file (the rewrite's version, its options): part of its id. */
  key: string;
  /** The derived model from the source's bytes; `changed` false when it is the source as it is. */
  derive(model: Uint8Array): { bytes: Uint8Array; changed: boolean; facts: F };
  /** Written into the record beside the facts. */
  record?: Record<string, unknown>;
}

/** The derivation's facts, and the file to load (the derived file, or the source when nothing changed), or the bytes. */
export type DerivedModel<F extends object> = F & {
  file?: string;
  bytes?: Uint8Array;
  /** Whether this call made the derived model (false: taken from the folder). */
  made: boolean;
};

export async function derivedModelFile<F extends object>(file: string, d: Derivation<F>, dir = derivedModelsDir()): Promise<DerivedModel<F>> {
  const st = await fsp.stat(file);
  const id = crypto.createHash('sha256').update(`${path.resolve(file)}|${st.size}|${st.mtimeMs}|${d.key}`).digest('hex').slice(0, 16);
  const stem = path.basename(file).replace(/\.onnx$/i, '');
  const target = path.join(dir, `${stem}.${id}.${d.suffix}.onnx`);
  const record = `${target}.json`;
  try {
    const r = JSON.parse(await fsp.readFile(record, 'utf8')) as { changed?: boolean; facts?: F };
    if (r.facts && r.changed === false) return { ...r.facts, file, made: false };
    if (r.facts && r.changed === true && fs.existsSync(target)) return { ...r.facts, file: target, made: false };
  } catch {
    // not made yet
  }
  const r = d.derive(new Uint8Array(await fsp.readFile(file)));
  try {
    await fsp.mkdir(dir, { recursive: true });
    if (r.changed) {
      const part = `${target}.${process.pid}.part`;
      await fsp.writeFile(part, r.bytes);
      await fsp.rename(part, target);
    }
    const part = `${record}.${process.pid}.part`;
    await fsp.writeFile(part, JSON.stringify({ source: path.resolve(file), size: st.size, mtimeMs: st.mtimeMs, ...d.record, changed: r.changed, facts: r.facts }));
    await fsp.rename(part, record);
  } catch {
    return r.changed ? { ...r.facts, bytes: r.bytes, made: true } : { ...r.facts, file, made: true };
  }
  // a new file: those of changed or removed models go (prune-derived.ts)
  await pruneDerivedModels(dir);
  return { ...r.facts, file: r.changed ? target : file, made: true };
}
