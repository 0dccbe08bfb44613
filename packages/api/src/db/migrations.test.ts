import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from './migrations.js';
import { openPgliteDb } from './pglite-db.js';

describe('migrations', () => {
  it('apply once, record themselves and are idempotent; transactions roll back', async () => {
    const db = await openPgliteDb(undefined);
    try {
      expect(await migrate(db)).toEqual([1, 2, 3]);
      expect(await migrate(db)).toEqual([]);
      const r = await db.query<{ id: number; name: string }>('SELECT id, name FROM dub_migrations ORDER BY id');
      expect(r.rows).toEqual([{ id: 1, name: 'catalogue' }, { id: 2, name: 'version engines' }, { id: 3, name: 'dubbing glossaries' }]);
      await expect(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO org_usage (org_id, consumed_minutes) VALUES ('o', 1)");
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await db.query('SELECT * FROM org_usage')).rows).toEqual([]);
      expect(await migrate(db, [{ id: 99, name: 'extra', sql: 'CREATE TABLE extra (x int)' }])).toEqual([99]);
    } finally {
      await db.close();
    }
  });

  it('a database made by an earlier release gets only the newer migrations', async () => {
    const db = await openPgliteDb(undefined);
    try {
      expect(await migrate(db, MIGRATIONS.filter((m) => m.id === 1))).toEqual([1]);
      expect(await migrate(db)).toEqual([2, 3]);
      expect((await db.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'versions' AND column_name = 'result_engines'")).rows).toHaveLength(1);
      expect((await db.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'dubbings' AND column_name = 'glossary'")).rows).toHaveLength(1);
    } finally {
      await db.close();
    }
  });
});
