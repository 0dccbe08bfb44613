import { describe, expect, it } from 'vitest';
import { migrate } from './migrations.js';
import { openPgliteDb } from './pglite-db.js';

describe('migrations', () => {
  it('apply once, record themselves and are idempotent; transactions roll back', async () => {
    const db = await openPgliteDb(undefined);
    try {
      expect(await migrate(db)).toEqual([1]);
      expect(await migrate(db)).toEqual([]);
      const r = await db.query<{ id: number; name: string }>('SELECT id, name FROM dub_migrations');
      expect(r.rows).toEqual([{ id: 1, name: 'catalogue' }]);
      await expect(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO org_usage (org_id, consumed_minutes) VALUES ('o', 1)");
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await db.query('SELECT * FROM org_usage')).rows).toEqual([]);
      expect(await migrate(db, [{ id: 2, name: 'extra', sql: 'CREATE TABLE extra (x int)' }])).toEqual([2]);
    } finally {
      await db.close();
    }
  });
});
