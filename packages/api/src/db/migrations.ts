/**
 * Schema migrations: numbered SQL strings applied in order inside one transaction each, recorded
 * in `dub_migrations`. An advisory lock keeps two API instances from migrating at once.
 */
import type { Db } from './db.js';

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'catalogue',
    sql: `
CREATE TABLE assets (
  asset_id text PRIMARY KEY,
  org_id text NOT NULL,
  seq bigserial NOT NULL,
  name text NOT NULL,
  locale text NOT NULL,
  created_at text NOT NULL,
  duration double precision,
  error_code text,
  error_detail text,
  source_video_key text,
  thumbnail_key text,
  transcript_key text,
  callback_url text,
  options jsonb NOT NULL
);
CREATE INDEX assets_org_seq ON assets (org_id, seq DESC);

CREATE TABLE dubbings (
  dubbing_id text PRIMARY KEY,
  asset_id text NOT NULL REFERENCES assets (asset_id),
  seq bigserial NOT NULL,
  locale text NOT NULL,
  created_at text NOT NULL,
  srt text,
  added boolean NOT NULL DEFAULT false,
  UNIQUE (asset_id, locale)
);

CREATE TABLE versions (
  version_id text PRIMARY KEY,
  dubbing_id text NOT NULL REFERENCES dubbings (dubbing_id),
  asset_id text NOT NULL REFERENCES assets (asset_id),
  org_id text NOT NULL,
  seq bigserial NOT NULL,
  name text NOT NULL,
  locale text NOT NULL,
  created_at text NOT NULL,
  status text NOT NULL,
  row_version integer NOT NULL DEFAULT 0,
  error_code text,
  error_detail text,
  voice_over boolean NOT NULL DEFAULT false,
  auto_generate text NOT NULL DEFAULT 'off',
  copy_from_version_id text,
  script_key text,
  script_rev integer NOT NULL DEFAULT 0,
  generation integer NOT NULL DEFAULT 0,
  generate_mode text,
  charged_minutes double precision NOT NULL DEFAULT 0,
  result_generation integer,
  result_video_key text,
  result_audio_key text,
  result_generated_at text
);
CREATE INDEX versions_asset ON versions (asset_id, seq);

CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  asset_id text,
  target text NOT NULL,
  subject text,
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  created_at bigint NOT NULL,
  delivered_at bigint,
  given_up boolean NOT NULL DEFAULT false,
  last_error text
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL AND NOT given_up;

CREATE TABLE org_usage (
  org_id text PRIMARY KEY,
  consumed_minutes double precision NOT NULL DEFAULT 0
);
`,
  },
  {
    id: 2,
    name: 'version engines',
    sql: `
ALTER TABLE versions ADD COLUMN result_engines text
`,
  },
  {
    id: 3,
    name: 'dubbing glossaries',
    sql: `
ALTER TABLE dubbings ADD COLUMN glossary text
`,
  },
];

/** Apply every migration not yet recorded. Returns the ids applied now. */
export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7261001)');
    await tx.query('CREATE TABLE IF NOT EXISTS dub_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)');
    const done = new Set((await tx.query<{ id: number }>('SELECT id FROM dub_migrations')).rows.map((r) => Number(r.id)));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.id - b.id)) {
      if (done.has(m.id)) continue;
      for (const stmt of m.sql.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean)) await tx.query(stmt);
      await tx.query('INSERT INTO dub_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [m.id, m.name, new Date().toISOString()]);
      applied.push(m.id);
    }
    return applied;
  });
}
