/**
 * A read cache of asset views (asset row, dubbings, versions) for GET /v1/assets/{id}, owned by
 * the service context (services/context.ts). Writers invalidate the asset after their
 * transaction; a reader stores what it read only when no invalidation of that asset happened
 * since it started reading, so a slow read never puts back data older than a write. Only correct
 * when this process is the only writer of the database: on by default with PGlite (single
 * process by construction), opt-in with PostgreSQL.
 */
import type { AssetRow, DubbingRow, VersionRow } from './catalog.js';

export interface AssetView {
  asset: AssetRow;
  dubbings: DubbingRow[];
  versions: VersionRow[];
}

export class AssetViewCache {
  private readonly views = new Map<string, AssetView>();
  private readonly epochs = new Map<string, number>();

  constructor(private readonly maxEntries = 10_000) {}

  get(assetId: string): AssetView | undefined {
    const v = this.views.get(assetId);
    if (v) {
      // keep recently used entries at the end (Map iteration order) for eviction
      this.views.delete(assetId);
      this.views.set(assetId, v);
    }
    return v;
  }

  /** A token to pass to `set` after reading from the database. */
  epoch(assetId: string): number {
    return this.epochs.get(assetId) ?? 0;
  }

  set(assetId: string, epoch: number, view: AssetView): void {
    if (this.epoch(assetId) !== epoch) return;
    this.views.set(assetId, view);
    if (this.views.size > this.maxEntries) this.views.delete(this.views.keys().next().value!);
  }

  invalidate(assetId: string): void {
    this.views.delete(assetId);
    this.epochs.set(assetId, this.epoch(assetId) + 1);
    if (this.epochs.size > this.maxEntries * 4) {
      // epochs of assets not cached can go: a reader of such an asset only risks not caching once
      for (const k of this.epochs.keys()) if (!this.views.has(k)) this.epochs.delete(k);
    }
  }
}
