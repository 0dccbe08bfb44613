/**
 * The worker's events applied to assets and versions (at least once delivery: a stale or repeated
 * event changes nothing). An event whose asset or version is not visible (yet) throws
 * NotVisibleError: the feed delivers it again (event-retry.ts). Status changes and their
 * callbacks / e-mails are written in one transaction (the outbox), so none is lost.
 */
import { nowIso, versionTransition, type AssetErrorObject, type GenerateMode, type VersionErrorObject, type WorkerEvent } from '@dub/core';
import * as cat from '../catalog.js';
import type { AssetRow, VersionRow } from '../catalog.js';
import type { Queryable } from '../db/db.js';
import { ConcurrentUpdateError, NotVisibleError } from '../errors.js';
import type { StatusChange } from '../notifications.js';
import { prepareVersionJob, versionSpecOf, type ServiceContext } from './context.js';
import type { VersionService } from './versions.js';

type VersionEvent = Extract<WorkerEvent, { version_id: string; type: `version_${string}` }>;

export class WorkerEventService {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly versions: VersionService,
  ) {}

  /** Apply one worker event. */
  async applyWorkerEvent(ev: WorkerEvent): Promise<void> {
    if (ev.type === 'progress' || ev.type === 'stage_done') return;
    await this.ctx.writeTx(async (tx, changes, touch) => {
      touch(ev.asset_id);
      const a = await cat.getAsset(tx, ev.asset_id);
      if (!a) throw new NotVisibleError(`worker event ${ev.type} of job ${ev.job_id}: asset ${ev.asset_id} is not visible`);
      switch (ev.type) {
        case 'asset_prepared': {
          await cat.updateAsset(tx, a.asset_id, { duration: ev.duration, source_video_key: ev.source_video_key, transcript_key: ev.transcript_key, ...(ev.thumbnail_key ? { thumbnail_key: ev.thumbnail_key } : {}) });
          // Languages added while the asset was being prepared were not in its job: prepare them now.
          const dubs = await cat.dubbingsOf(tx, [a.asset_id]);
          const added = new Map(dubs.filter((d) => d.added).map((d) => [d.dubbing_id, d]));
          for (const v of await cat.versionsOf(tx, [a.asset_id])) {
            const d = added.get(v.dubbing_id);
            if (d && v.status === 'NotReady' && !v.script_key) await this.ctx.jobs.add(tx, prepareVersionJob(a, versionSpecOf(a, d, v.version_id), undefined));
          }
          return;
        }
        case 'asset_failed': {
          if (a.error) return;
          await cat.updateAsset(tx, a.asset_id, { error_code: ev.error.error_code, error_detail: ev.error.detail });
          const failed = { ...a, error: ev.error as AssetErrorObject };
          changes.push({ event: 'asset_failed', asset: failed, version: null, status: 'Failed', error: ev.error as AssetErrorObject });
          // Versions still being prepared cannot finish: they fail with the asset.
          for (const v of await cat.versionsOf(tx, [a.asset_id])) {
            const t = versionTransition(v.status, 'prepare_failed');
            if (!t.allowed) continue;
            const error: VersionErrorObject = { error_code: 'general_error', detail: `asset processing failed: ${ev.error.error_code}: ${ev.error.detail}` };
            if (await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, error_code: error.error_code, error_detail: error.detail })) {
              changes.push({ event: t.event!, asset: failed, version: { ...v, status: t.to }, status: t.to, error });
            }
          }
          return;
        }
        case 'version_prepared':
        case 'version_failed':
        case 'version_generated':
        case 'version_generate_failed': {
          const v = await cat.getVersion(tx, ev.version_id, true);
          if (!v) throw new NotVisibleError(`worker event ${ev.type} of job ${ev.job_id}: version ${ev.version_id} of asset ${ev.asset_id} is not visible`);
          if (v.asset_id !== a.asset_id) {
            this.ctx.log.warn({ event: ev.type, version_id: ev.version_id, asset_id: ev.asset_id }, 'worker event for a version of another asset ignored');
            return;
          }
          await this.applyVersionEvent(tx, changes, a, v, ev);
          return;
        }
      }
    });
  }

  private async applyVersionEvent(tx: Queryable, changes: StatusChange[], a: AssetRow, v: VersionRow, ev: VersionEvent): Promise<void> {
    const dub = await cat.getDubbing(tx, v.dubbing_id);
    const added = dub?.added ?? false;
    const stale = (why: string) => this.ctx.log.info({ event: ev.type, version_id: v.version_id, status: v.status }, `worker event ignored: ${why}`);
    if (ev.type === 'version_prepared') {
      const t = versionTransition(v.status, 'prepared');
      if (!t.allowed) return stale(`version is ${v.status}`);
      if (!(await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, script_key: ev.script_key, error_code: null, error_detail: null }))) throw new ConcurrentUpdateError(`version ${v.version_id}`);
      const ready = { ...v, status: t.to, script_key: ev.script_key, row_version: v.row_version + 1 };
      changes.push({ event: t.event!, asset: a, version: ready, status: t.to, error: null, addedLanguage: added });
      if (v.auto_generate === 'with_lips' || v.auto_generate === 'no_lips') {
        const mode: GenerateMode = v.auto_generate === 'with_lips' && !v.voice_over ? 'with_lips' : 'no_lips';
        const asset = (await cat.getAsset(tx, a.asset_id))!;
        await this.versions.startGeneration(tx, changes, asset, ready, mode);
      }
      return;
    }
    if (ev.type === 'version_failed') {
      const t = versionTransition(v.status, 'prepare_failed');
      if (!t.allowed) return stale(`version is ${v.status}`);
      await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, error_code: ev.error.error_code, error_detail: ev.error.detail });
      changes.push({ event: t.event!, asset: a, version: { ...v, status: t.to }, status: t.to, error: ev.error as VersionErrorObject, addedLanguage: added });
      return;
    }
    if (v.generation !== ev.generation) return stale(`generation ${ev.generation} is not the current ${v.generation}`);
    if (ev.type === 'version_generated') {
      const t = versionTransition(v.status, 'generated');
      if (!t.allowed) return stale(`version is ${v.status}`);
      await cat.updateVersionIf(tx, v.version_id, v.row_version, {
        status: t.to,
        result_generation: ev.generation,
        result_video_key: ev.result_video_key,
        result_audio_key: ev.result_audio_key,
        result_generated_at: ev.at || nowIso(this.ctx.now()),
        result_engines: ev.engines ? JSON.stringify(ev.engines) : null,
      });
      changes.push({ event: t.event!, asset: a, version: { ...v, status: t.to }, status: t.to, error: null });
      return;
    }
    const t = versionTransition(v.status, 'generate_failed');
    if (!t.allowed) return stale(`version is ${v.status}`);
    await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, error_code: ev.error.error_code, error_detail: ev.error.detail, charged_minutes: 0 });
    // A failed generation gives its reserved minutes back.
    await cat.releaseMinutes(tx, v.org_id, v.charged_minutes);
    changes.push({ event: t.event!, asset: a, version: { ...v, status: t.to }, status: t.to, error: ev.error as VersionErrorObject });
  }
}
