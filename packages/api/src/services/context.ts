/**
 * What every resource service shares: the database, blob store, job outbox, options, URL signer,
 * logger and clock; the asset view cache; the access check of a version (API key or signed studio
 * link) and of an asset; and the write transaction that turns status changes into outbox rows
 * (callbacks, e-mails) and sends its jobs only after it committed (job-outbox.ts).
 */
import { deriveAssetStatus, mergeGlossaries, NotFoundError, nowIso, type AssetStatus, type BlobStore, type Glossary, type JobQueue, type Logger, type PrepareVersionJob, type VersionSpec } from '@dub/core';
import { AssetViewCache, type AssetView } from '../asset-view-cache.js';
import * as cat from '../catalog.js';
import type { AssetRow, DubbingRow, VersionRow } from '../catalog.js';
import type { Db, Queryable } from '../db/db.js';
import { JobOutbox } from '../job-outbox.js';
import { outboxItemsFor, type StatusChange } from '../notifications.js';
import type { ResolvedApiOptions } from '../options.js';
import type { UrlSigner } from '../signing.js';

/** Who is asking: an organization (API key) or the holder of a signed studio link of one version. */
export type Access = { org: string } | { studioVersionId: string };

export interface ServiceDeps {
  db: Db;
  store: BlobStore;
  queue: JobQueue;
  options: ResolvedApiOptions;
  signer: UrlSigner;
  logger: Logger;
  /** Called after a transaction that wrote outbox rows committed (wakes the dispatcher). */
  onOutbox?: () => void;
  now?: () => Date;
  /** Cache asset views for GET asset (only when this process is the database's only writer). */
  assetCache?: boolean;
}

/** The body of a write transaction: it records status changes and the assets it touched. */
export type WriteTxBody = (tx: Queryable, changes: StatusChange[], touch: (assetId: string) => void) => Promise<void>;

export class ServiceContext {
  readonly db: Db;
  readonly store: BlobStore;
  readonly jobs: JobOutbox;
  readonly o: ResolvedApiOptions;
  readonly signer: UrlSigner;
  readonly log: Logger;
  readonly now: () => Date;
  private readonly onOutbox: () => void;
  private readonly cache: AssetViewCache | undefined;

  constructor(deps: ServiceDeps) {
    this.cache = deps.assetCache ? new AssetViewCache() : undefined;
    this.db = deps.db;
    this.store = deps.store;
    this.jobs = new JobOutbox({ db: deps.db, queue: deps.queue, logger: deps.logger, onLeft: () => this.onOutbox() });
    this.o = deps.options;
    this.signer = deps.signer;
    this.log = deps.logger;
    this.now = deps.now ?? (() => new Date());
    this.onOutbox = deps.onOutbox ?? (() => undefined);
  }

  /** Unix seconds now. */
  nowSeconds(): number {
    return Math.floor(this.now().getTime() / 1000);
  }

  // ---------------------------------------------------------------- access

  /** The version, when `access` may see it; 404 otherwise (another organization's is not found either). */
  async accessVersion(access: Access, versionId: string, q: Queryable = this.db, forUpdate = false): Promise<VersionRow> {
    const v = await cat.getVersion(q, versionId, forUpdate);
    const ok = v && ('org' in access ? v.org_id === access.org : access.studioVersionId === versionId);
    if (!v || !ok) throw new NotFoundError(`version ${versionId} not found`);
    return v;
  }

  /** The asset, when it belongs to `org`; 404 otherwise. */
  async ownAsset(org: string, assetId: string, q: Queryable = this.db): Promise<AssetRow> {
    const a = await cat.getAsset(q, assetId);
    if (!a || a.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    return a;
  }

  // ---------------------------------------------------------------- asset view cache

  /** Asset, dubbings and versions of one asset, from the cache when it is on and fresh. */
  async assetView(assetId: string): Promise<AssetView | undefined> {
    const hit = this.cache?.get(assetId);
    if (hit) return hit;
    const epoch = this.cache?.epoch(assetId) ?? 0;
    const asset = await cat.getAsset(this.db, assetId);
    if (!asset) return undefined;
    const [dubbings, versions] = await Promise.all([cat.dubbingsOf(this.db, [assetId]), cat.versionsOf(this.db, [assetId])]);
    const view = { asset, dubbings, versions };
    this.cache?.set(assetId, epoch, view);
    return view;
  }

  invalidate(assetId: string | undefined): void {
    if (assetId) this.cache?.invalidate(assetId);
  }

  // ---------------------------------------------------------------- writes

  /** A transaction that collects status changes and writes their outbox rows before committing. */
  async writeTx(fn: WriteTxBody): Promise<void> {
    let wrote = false;
    const touched = new Set<string>();
    try {
      await this.writeTxInner(fn, touched, () => (wrote = true));
    } finally {
      for (const id of touched) this.invalidate(id);
    }
    if (wrote) this.onOutbox();
  }

  private async writeTxInner(fn: WriteTxBody, touched: Set<string>, onWrote: () => void): Promise<void> {
    let wrote = false;
    let committed: Queryable | undefined;
    await this.db.transaction(async (tx) => {
      committed = tx;
      const changes: StatusChange[] = [];
      await fn(tx, changes, (id) => touched.add(id));
      for (const c of changes) touched.add(c.asset.asset_id);
      const now = this.now();
      for (const c of changes) {
        for (const item of outboxItemsFor(c, nowIso(now), this.o.orgEmails[c.asset.org_id])) {
          await cat.insertOutbox(tx, item, now.getTime());
          wrote = true;
        }
      }
    });
    // Only now, committed, may its jobs reach the queue.
    if (committed) await this.jobs.sendCommitted(committed);
    if (wrote) onWrote();
  }
}

/**
 * The job's spec of a version of dubbing `d`: its reference srt, and the glossary its translation
 * applies (the asset's, with the dubbing's terms on top).
 */
export function versionSpecOf(a: AssetRow, d: Pick<DubbingRow, 'dubbing_id' | 'locale' | 'srt'> & { glossary?: Glossary | null }, versionId: string): VersionSpec {
  const glossary = mergeGlossaries(a.options.glossary, d.glossary ?? undefined);
  return { version_id: versionId, dubbing_id: d.dubbing_id, locale: d.locale, ...(d.srt ? { srt: d.srt } : {}), ...(glossary ? { glossary } : {}) };
}

/** The prepare-version job of one version (a language added, or a version prepared again by revise). */
export function prepareVersionJob(a: AssetRow, spec: PrepareVersionJob['version'], suffix: string | undefined, copyFrom?: string): PrepareVersionJob {
  return {
    v: 1,
    type: 'prepare-version',
    job_id: `job_prepv_${spec.version_id}${suffix ? `_${suffix}` : ''}`,
    asset_id: a.asset_id,
    org_id: a.org_id,
    source_locale: a.locale,
    version: spec,
    ...(copyFrom ? { copy_from_version_id: copyFrom } : {}),
  };
}

export function assetStatusOf(a: AssetRow, versions: readonly Pick<VersionRow, 'status'>[]): AssetStatus {
  return deriveAssetStatus(a.error !== null, versions.map((v) => v.status));
}

/** Minutes with two decimals, for details. */
export function round(n: number): number {
  return Math.round(n * 100) / 100;
}
