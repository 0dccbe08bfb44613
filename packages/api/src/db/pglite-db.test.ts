import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgliteDb, pgliteTemplateFile } from './pglite-db.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-pglite-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const env = { XDG_CACHE_HOME: path.join(tmp, 'cache') };

describe('PGlite: a new database starts from the initdb template', () => {
  it('names the template by the PGlite version under the cache folder; off turns it off', () => {
    // npm hoists the package to the repository's node_modules
    const version = (JSON.parse(fs.readFileSync(fileURLToPath(new URL('../../../../node_modules/@electric-sql/pglite/package.json', import.meta.url)), 'utf8')) as { version: string }).version;
    expect(pgliteTemplateFile(env)).toBe(path.join(tmp, 'cache', 'dub', 'pglite', `initdb-${version}.tar.gz`));
    expect(pgliteTemplateFile({ ...env, DUB_PGLITE_TEMPLATE: 'off' })).toBeUndefined();
    expect(pgliteTemplateFile({ ...env, DUB_PGLITE_TEMPLATE: '0' })).toBeUndefined();
    expect(pgliteTemplateFile({ ...env, DUB_PGLITE_TEMPLATE: 'on' })).toBe(pgliteTemplateFile(env));
    expect(() => pgliteTemplateFile({ ...env, DUB_PGLITE_TEMPLATE: 'of' })).toThrow(/DUB_PGLITE_TEMPLATE must be 1\/on or 0\/off, got "of"/);
  });

  it('the first new database leaves the template; the next new one is loaded from it; an existing folder is opened as it is', async () => {
    const file = pgliteTemplateFile(env)!;
    const first = await openPgliteDb(undefined, env);
    await first.close();
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip
    // a template with a marker table in it: a new database that has the marker was loaded from it
    const marked = await openPgliteDb(path.join(tmp, 'marked'), { ...env, DUB_PGLITE_TEMPLATE: 'off' });
    await marked.query('CREATE TABLE template_marker (n int)');
    await marked.close();
    const { PGlite } = await import('@electric-sql/pglite');
    const reopened = await PGlite.create(path.join(tmp, 'marked'));
    fs.writeFileSync(file, Buffer.from(await (await reopened.dumpDataDir('gzip')).arrayBuffer()));
    await reopened.close();
    const dir = path.join(tmp, 'db');
    const loaded = await openPgliteDb(dir, env);
    expect((await loaded.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'template_marker'")).rows[0]!.n).toBe(1);
    await loaded.query('CREATE TABLE mine (n int)');
    await loaded.query('INSERT INTO mine VALUES (7)');
    await loaded.close();
    // not new: opened as it is, whatever the template holds
    fs.writeFileSync(file, 'not a tarball');
    const again = await openPgliteDb(dir, env);
    expect((await again.query<{ n: number }>('SELECT n FROM mine')).rows).toEqual([{ n: 7 }]);
    await again.close();
    expect(fs.readFileSync(file, 'utf8')).toBe('not a tarball');
  }, 60_000);

  it('a template PGlite cannot load is replaced: the new database runs initdb and keeps a good template', async () => {
    const file = pgliteTemplateFile(env)!;
    fs.writeFileSync(file, 'not a tarball');
    const dir = path.join(tmp, 'after-bad');
    const db = await openPgliteDb(dir, env);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect((await db.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'template_marker'")).rows[0]!.n).toBe(0);
    await db.close();
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  }, 60_000);
});
