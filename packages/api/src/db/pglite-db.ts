import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Db, Queryable, QueryResult } from './db.js';

type PGliteLike = {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[]; affectedRows?: number }>;
  transaction<T>(fn: (tx: { query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }> }) => Promise<T>): Promise<T>;
  dumpDataDir(compression?: 'none' | 'gzip' | 'auto'): Promise<Blob>;
  close(): Promise<void>;
};

function wrap(q: Pick<PGliteLike, 'query'>): Queryable {
  return {
    async query<T>(sql: string, params: unknown[] = []): Promise<QueryResult<T>> {
      const r = await q.query<T>(sql, params);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
  };
}

/**
 * Where a freshly initialized PGlite data directory is kept, to start the next new database from
 * (`$XDG_CACHE_HOME/dub/pglite/initdb-<pglite version>.tar.gz`, default under `~/.cache`), or
 * undefined when `DUB_PGLITE_TEMPLATE=off` (or 0; anything but 1/on/0/off is refused). A new database runs PostgreSQL's initdb inside PGlite:
 * 3.0-3.4 s of CPU here on every `dub serve` with a new data folder, every in-memory database and
 * every test API; loading the same initialized directory from its 4.5 MB gzip tarball takes
 * 0.4-0.6 s. The template holds initdb's result alone (no table of the project's: the migrations
 * run after, as on any new database), and is named by the PGlite version, whose PostgreSQL makes it.
 */
export function pgliteTemplateFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = (env.DUB_PGLITE_TEMPLATE ?? '').trim().toLowerCase();
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return undefined;
  if (!(v === '' || v === '1' || v === 'on' || v === 'true' || v === 'yes')) throw new RangeError(`DUB_PGLITE_TEMPLATE must be 1/on or 0/off, got "${env.DUB_PGLITE_TEMPLATE}"`);
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dub', 'pglite', `initdb-${pgliteVersion()}.tar.gz`);
}

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@electric-sql/pglite');
  // dist/index.cjs -> the package folder
  let dir = path.dirname(main);
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** A data directory PGlite would initialize: in memory, absent or empty. */
function isNewDataDir(dataDir: string | undefined): boolean {
  return !dataDir || !fs.existsSync(dataDir) || fs.readdirSync(dataDir).length === 0;
}

/** Keeps `pg`'s data directory (just initialized) as the template; best effort, atomic (rename). */
async function keepTemplate(pg: PGliteLike, file: string): Promise<void> {
  try {
    const tar = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer());
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    fs.writeFileSync(tmp, tar);
    fs.renameSync(tmp, file);
  } catch {
    // a read-only or full cache only costs the next new database its initdb
  }
}

/**
 * Embedded PostgreSQL (PGlite) with its data directory on disk; `undefined` keeps it in memory.
 * A new database starts from the initdb template (pgliteTemplateFile) when there is one, and
 * leaves one when there is none; a template PGlite cannot load is removed and initdb runs.
 */
export async function openPgliteDb(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Db> {
  const { PGlite } = await import('@electric-sql/pglite');
  const fresh = isNewDataDir(dataDir);
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
  const template = fresh ? pgliteTemplateFile(env) : undefined;
  let pg: PGliteLike | undefined;
  if (template && fs.existsSync(template)) {
    try {
      pg = (await PGlite.create(dataDir ?? 'memory://', { loadDataDir: new Blob([fs.readFileSync(template)]) })) as unknown as PGliteLike;
    } catch {
      fs.rmSync(template, { force: true });
      if (dataDir) for (const f of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, f), { recursive: true, force: true });
    }
  }
  if (!pg) {
    pg = (await PGlite.create(dataDir ?? 'memory://')) as unknown as PGliteLike;
    if (template) await keepTemplate(pg, template);
  }
  const db = pg;
  const base = wrap(db);
  return {
    kind: 'pglite',
    query: base.query,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    close: () => db.close(),
  };
}
