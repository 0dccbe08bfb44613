/**
 * SQL access to assets, dubbings, versions, the outbox and organization usage. Every function takes
 * a Queryable so the service can run it inside a transaction.
 */
import type { AssetErrorObject, EngineRecord, Glossary, VersionErrorObject, VersionStatus, AutoGenerate, GenerateMode } from '@dub/core';
import type { Queryable } from './db/db.js';
import type { CreateAssetInput } from './validation.js';

export interface AssetOptions extends Omit<CreateAssetInput, 'name' | 'locale' | 'languages'> {
  /** Blob keys of uploaded media (upload endpoint). */
  upload_video_key?: string;
  upload_background_key?: string;
}

type Raw = Record<string, unknown>;

/** How one field of a row is read from the raw row the driver answers (`name`: the field's column). */
type Column<T> = (r: Raw, name: string) => T;
/** The row a table of columns reads. */
type RowOf<C> = { [K in keyof C]: C[K] extends Column<infer T> ? T : never };

const text = <T extends string = string>(): Column<T> => (r, n) => r[n] as T;
const textOrNull = <T extends string = string>(): Column<T | null> => (r, n) => (r[n] as T) ?? null;
const num: Column<number> = (r, n) => Number(r[n]);
const numOrNull: Column<number | null> = (r, n) => (r[n] === null || r[n] === undefined ? null : Number(r[n]));
const flag: Column<boolean> = (r, n) => Boolean(r[n]);
/** JSON the driver answers parsed (Postgres) or as text (SQLite). */
const json = <T>(): Column<T> => (r, n) => (typeof r[n] === 'string' ? JSON.parse(r[n] as string) : r[n]) as T;
/** JSON kept as text; null where the column is NULL. */
const jsonTextOrNull = <T>(): Column<T | null> => (r, n) => (typeof r[n] === 'string' ? (JSON.parse(r[n] as string) as T) : null);
/** A row's error, stored as the columns error_code and error_detail. */
const errorObject = <T>(): Column<T | null> => (r) => (r.error_code ? ({ error_code: r.error_code, detail: r.error_detail ?? '' } as T) : null);

/** The reader of a table's rows: each field read by its column. */
function rowReader<C extends Record<string, Column<unknown>>>(columns: C): (r: Raw) => RowOf<C> {
  const names = Object.keys(columns);
  return (r) => {
    const row: Record<string, unknown> = {};
    for (const n of names) row[n] = columns[n]!(r, n);
    return row as RowOf<C>;
  };
}

/** What assets, dubbings and versions all have: their order among their parent's (seq), locale, creation time. */
const SEQUENCED = { seq: num, locale: text(), created_at: text() };

/** The row of each table is read by its columns here, and typed by them (AssetRow, DubbingRow, VersionRow). */
const ASSET_COLUMNS = {
  asset_id: text(),
  org_id: text(),
  name: text(),
  ...SEQUENCED,
  duration: numOrNull,
  error: errorObject<AssetErrorObject>(),
  source_video_key: textOrNull(),
  thumbnail_key: textOrNull(),
  transcript_key: textOrNull(),
  callback_url: textOrNull(),
  options: json<AssetOptions>(),
};

const DUBBING_COLUMNS = {
  dubbing_id: text(),
  asset_id: text(),
  ...SEQUENCED,
  srt: textOrNull(),
  added: flag,
  /** Extension: the dubbing's own glossary terms (migration 3). */
  glossary: jsonTextOrNull<Glossary>(),
};

const VERSION_COLUMNS = {
  version_id: text(),
  dubbing_id: text(),
  asset_id: text(),
  org_id: text(),
  name: text(),
  ...SEQUENCED,
  status: text<VersionStatus>(),
  row_version: num,
  error: errorObject<VersionErrorObject>(),
  voice_over: flag,
  auto_generate: text<AutoGenerate>(),
  copy_from_version_id: textOrNull(),
  script_key: textOrNull(),
  script_rev: num,
  generation: num,
  generate_mode: textOrNull<GenerateMode>(),
  charged_minutes: num,
  result_generation: numOrNull,
  result_video_key: textOrNull(),
  result_audio_key: textOrNull(),
  result_generated_at: textOrNull(),
  result_engines: jsonTextOrNull<Record<string, EngineRecord>>(),
};

export type AssetRow = RowOf<typeof ASSET_COLUMNS>;
export type DubbingRow = RowOf<typeof DUBBING_COLUMNS>;
export type VersionRow = RowOf<typeof VERSION_COLUMNS>;

const asset = rowReader(ASSET_COLUMNS);
const dubbing = rowReader(DUBBING_COLUMNS);
const version = rowReader(VERSION_COLUMNS);

export async function insertAsset(q: Queryable, a: Omit<AssetRow, 'seq' | 'duration' | 'error' | 'source_video_key' | 'thumbnail_key' | 'transcript_key'>): Promise<void> {
  await q.query('INSERT INTO assets (asset_id, org_id, name, locale, created_at, callback_url, options) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    a.asset_id,
    a.org_id,
    a.name,
    a.locale,
    a.created_at,
    a.callback_url,
    JSON.stringify(a.options),
  ]);
}

export async function insertDubbing(q: Queryable, d: Omit<DubbingRow, 'seq'>): Promise<void> {
  await q.query('INSERT INTO dubbings (dubbing_id, asset_id, locale, created_at, srt, added, glossary) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    d.dubbing_id,
    d.asset_id,
    d.locale,
    d.created_at,
    d.srt,
    d.added,
    d.glossary?.length ? JSON.stringify(d.glossary) : null,
  ]);
}

/** Extension: replace a dubbing's glossary (null clears it). */
export async function setDubbingGlossary(q: Queryable, dubbingId: string, glossary: Glossary | null): Promise<void> {
  await q.query('UPDATE dubbings SET glossary = $2 WHERE dubbing_id = $1', [dubbingId, glossary?.length ? JSON.stringify(glossary) : null]);
}

/** Replace an asset's options (its glossary lives there). */
export async function setAssetOptions(q: Queryable, assetId: string, options: AssetOptions): Promise<void> {
  await q.query('UPDATE assets SET options = $2 WHERE asset_id = $1', [assetId, JSON.stringify(options)]);
}

export interface NewVersion {
  version_id: string;
  dubbing_id: string;
  asset_id: string;
  org_id: string;
  name: string;
  locale: string;
  created_at: string;
  status: VersionStatus;
  voice_over: boolean;
  auto_generate: AutoGenerate;
  copy_from_version_id: string | null;
  script_key: string | null;
}

export async function insertVersion(q: Queryable, v: NewVersion): Promise<void> {
  await q.query(
    `INSERT INTO versions (version_id, dubbing_id, asset_id, org_id, name, locale, created_at, status, voice_over, auto_generate, copy_from_version_id, script_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [v.version_id, v.dubbing_id, v.asset_id, v.org_id, v.name, v.locale, v.created_at, v.status, v.voice_over, v.auto_generate, v.copy_from_version_id, v.script_key],
  );
}

export async function getAsset(q: Queryable, assetId: string): Promise<AssetRow | undefined> {
  const r = await q.query<Raw>('SELECT * FROM assets WHERE asset_id = $1', [assetId]);
  return r.rows[0] ? asset(r.rows[0]) : undefined;
}

/** Newest first; `beforeSeq` is the cursor (exclusive). */
export async function listAssets(q: Queryable, orgId: string, limit: number, beforeSeq: number | undefined): Promise<AssetRow[]> {
  const r = beforeSeq === undefined
    ? await q.query<Raw>('SELECT * FROM assets WHERE org_id = $1 ORDER BY seq DESC LIMIT $2', [orgId, limit])
    : await q.query<Raw>('SELECT * FROM assets WHERE org_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3', [orgId, beforeSeq, limit]);
  return r.rows.map(asset);
}

export async function dubbingsOf(q: Queryable, assetIds: readonly string[]): Promise<DubbingRow[]> {
  if (assetIds.length === 0) return [];
  const r = await q.query<Raw>('SELECT * FROM dubbings WHERE asset_id = ANY($1::text[]) ORDER BY seq', [assetIds]);
  return r.rows.map(dubbing);
}

export async function getDubbing(q: Queryable, dubbingId: string): Promise<DubbingRow | undefined> {
  const r = await q.query<Raw>('SELECT * FROM dubbings WHERE dubbing_id = $1', [dubbingId]);
  return r.rows[0] ? dubbing(r.rows[0]) : undefined;
}

export async function versionsOf(q: Queryable, assetIds: readonly string[]): Promise<VersionRow[]> {
  if (assetIds.length === 0) return [];
  const r = await q.query<Raw>('SELECT * FROM versions WHERE asset_id = ANY($1::text[]) ORDER BY seq', [assetIds]);
  return r.rows.map(version);
}

export async function getVersion(q: Queryable, versionId: string, forUpdate = false): Promise<VersionRow | undefined> {
  const r = await q.query<Raw>(`SELECT * FROM versions WHERE version_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [versionId]);
  return r.rows[0] ? version(r.rows[0]) : undefined;
}

/** The columns of a version an update may set, typed as VersionRow types them. */
type PatchableColumn = 'status' | 'script_key' | 'script_rev' | 'generation' | 'generate_mode' | 'charged_minutes' | 'result_generation' | 'result_video_key' | 'result_audio_key' | 'result_generated_at';

export type VersionPatch = Partial<
  Pick<VersionRow, PatchableColumn> & {
    /** The row's `error` is stored as these two columns. */
    error_code: string | null;
    error_detail: string | null;
    /** JSON of the engines record of the current result (VersionRow.result_engines, serialized). */
    result_engines: string | null;
  }
>;

/**
 * Optimistic update: applies only when the row still has `rowVersion`; bumps row_version.
 * Returns false when another writer got there first.
 */
export async function updateVersionIf(q: Queryable, versionId: string, rowVersion: number, patch: VersionPatch): Promise<boolean> {
  const cols = Object.keys(patch) as (keyof VersionPatch)[];
  const sets = cols.map((c, i) => `${c} = $${i + 3}`);
  sets.push('row_version = row_version + 1');
  const r = await q.query(`UPDATE versions SET ${sets.join(', ')} WHERE version_id = $1 AND row_version = $2`, [versionId, rowVersion, ...cols.map((c) => patch[c])]);
  return r.rowCount === 1;
}

export type AssetPatch = Partial<{ duration: number; error_code: string; error_detail: string; source_video_key: string; thumbnail_key: string | null; transcript_key: string }>;

export async function updateAsset(q: Queryable, assetId: string, patch: AssetPatch): Promise<void> {
  const cols = Object.keys(patch) as (keyof AssetPatch)[];
  if (cols.length === 0) return;
  await q.query(`UPDATE assets SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(', ')} WHERE asset_id = $1`, [assetId, ...cols.map((c) => patch[c])]);
}

/** Reserve minutes of an organization's balance atomically; false when it cannot cover them. */
export async function reserveMinutes(q: Queryable, orgId: string, minutes: number, balance: number): Promise<boolean> {
  await q.query('INSERT INTO org_usage (org_id, consumed_minutes) VALUES ($1, 0) ON CONFLICT (org_id) DO NOTHING', [orgId]);
  const r = await q.query('UPDATE org_usage SET consumed_minutes = consumed_minutes + $2 WHERE org_id = $1 AND consumed_minutes + $2 <= $3', [orgId, minutes, balance]);
  return r.rowCount === 1;
}

export async function releaseMinutes(q: Queryable, orgId: string, minutes: number): Promise<void> {
  if (minutes > 0) await q.query('UPDATE org_usage SET consumed_minutes = GREATEST(0, consumed_minutes - $2) WHERE org_id = $1', [orgId, minutes]);
}

export async function consumedMinutes(q: Queryable, orgId: string): Promise<number> {
  const r = await q.query<{ consumed_minutes: number }>('SELECT consumed_minutes FROM org_usage WHERE org_id = $1', [orgId]);
  return r.rows[0] ? Number(r.rows[0].consumed_minutes) : 0;
}

export interface OutboxItem {
  /** callback: POST to target; email: mail to target; job: a job (body) for the queue, target its job_id. */
  kind: 'callback' | 'email' | 'job';
  asset_id: string | null;
  target: string;
  subject: string | null;
  body: string;
}

export interface OutboxRow extends OutboxItem {
  id: number;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
}

/** Insert an outbox row, due at `dueAt` (default now); returns its id. */
export async function insertOutbox(q: Queryable, item: OutboxItem, now: number, dueAt = now): Promise<number> {
  const r = await q.query<{ id: string | number }>(
    'INSERT INTO outbox (kind, asset_id, target, subject, body, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id',
    [item.kind, item.asset_id, item.target, item.subject, item.body, dueAt, now],
  );
  return Number(r.rows[0]!.id);
}

/** Remove a delivered row (jobs: their body is not kept once the queue holds them). */
export async function deleteOutbox(q: Queryable, id: number): Promise<void> {
  await q.query('DELETE FROM outbox WHERE id = $1', [id]);
}

/**
 * Claim due deliveries: their next_attempt_at moves `leaseMs` ahead so another dispatcher (or this
 * one after a crash) picks them up again only when the lease runs out.
 */
export async function claimDue(q: Queryable, now: number, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  const r = await q.query<Raw>(
    `UPDATE outbox SET next_attempt_at = $2 + $3 WHERE id IN (
       SELECT id FROM outbox WHERE delivered_at IS NULL AND NOT given_up AND next_attempt_at <= $2 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
     ) RETURNING *`,
    [limit, now, leaseMs],
  );
  return r.rows
    .map((x) => ({
      id: Number(x.id),
      kind: x.kind as OutboxItem['kind'],
      asset_id: (x.asset_id as string) ?? null,
      target: x.target as string,
      subject: (x.subject as string) ?? null,
      body: x.body as string,
      attempts: Number(x.attempts),
      next_attempt_at: Number(x.next_attempt_at),
      created_at: Number(x.created_at),
    }))
    .sort((a, b) => a.id - b.id);
}

export async function markDelivered(q: Queryable, id: number, now: number): Promise<void> {
  await q.query('UPDATE outbox SET delivered_at = $2, attempts = attempts + 1, last_error = NULL WHERE id = $1', [id, now]);
}

export async function markFailedAttempt(q: Queryable, id: number, error: string, nextAt: number | null): Promise<void> {
  if (nextAt === null) await q.query('UPDATE outbox SET attempts = attempts + 1, last_error = $2, given_up = true WHERE id = $1', [id, error]);
  else await q.query('UPDATE outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3 WHERE id = $1', [id, error, nextAt]);
}

export async function outboxCounts(q: Queryable): Promise<{ pending: number; delivered: number; given_up: number }> {
  const r = await q.query<Raw>(
    `SELECT count(*) FILTER (WHERE delivered_at IS NULL AND NOT given_up) AS pending,
            count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
            count(*) FILTER (WHERE given_up) AS given_up FROM outbox`,
  );
  const x = r.rows[0] ?? {};
  return { pending: Number(x.pending ?? 0), delivered: Number(x.delivered ?? 0), given_up: Number(x.given_up ?? 0) };
}

export async function nextDueAt(q: Queryable): Promise<number | undefined> {
  const r = await q.query<Raw>('SELECT min(next_attempt_at) AS t FROM outbox WHERE delivered_at IS NULL AND NOT given_up');
  const t = r.rows[0]?.t;
  return t === null || t === undefined ? undefined : Number(t);
}
