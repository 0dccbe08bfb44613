/**
 * Versions and their state machine (versionTransition of @dub/core; optimistic concurrency on the
 * version row): read, revise, generate (with the balance reservation), a further version of a
 * dubbing, and the quality report of the current result.
 */
import {
  blobKeys,
  newId,
  NotFoundError,
  nowIso,
  versionTransition,
  type GenerateMode,
  type GenerateVersionJob,
  type Version,
  type VersionErrorObject,
  type VersionScript,
  type VersionTrigger,
} from '@dub/core';
import * as cat from '../catalog.js';
import type { AssetRow, VersionRow } from '../catalog.js';
import type { Queryable } from '../db/db.js';
import { ConcurrentUpdateError, InsufficientBalanceError, InvalidStateError, NotReadyError, ValidationError } from '../errors.js';
import type { StatusChange } from '../notifications.js';
import type { StudioUrlRequest } from '../schemas.js';
import { studioMinutes } from '../validators.js';
import { prepareVersionJob, round, versionSpecOf, type Access, type ServiceContext } from './context.js';
import type { LinkService } from './links.js';

/**
 * The generate-version job of a version: what POST generate enqueues, and (with job id
 * `job_line_*`, mode no_lips and the current generation) what a line re-dub or voice preview
 * synthesizes against. One place, so both carry the same options.
 */
export function generateJobOf(a: Pick<AssetRow, 'asset_id' | 'org_id' | 'options'>, v: Pick<VersionRow, 'version_id' | 'locale'>, at: { job_id: string; mode: GenerateMode; generation: number; script_key: string }): GenerateVersionJob {
  const o = a.options;
  return {
    v: 1,
    type: 'generate-version',
    job_id: at.job_id,
    asset_id: a.asset_id,
    org_id: a.org_id,
    version_id: v.version_id,
    locale: v.locale,
    mode: at.mode,
    script_key: at.script_key,
    generation: at.generation,
    options: {
      voice_over: o.voice_over,
      voice_anonymization: o.voice_anonymization,
      lips_model: o.lips_model,
      ...(o.voice_library_id ? { voice_library_id: o.voice_library_id } : {}),
    },
  };
}

export class VersionService {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly links: LinkService,
  ) {}

  // ---------------------------------------------------------------- read

  /** The version row, when `access` may see it (404 otherwise). */
  async versionRow(access: Access, versionId: string): Promise<VersionRow> {
    return this.ctx.accessVersion(access, versionId);
  }

  async getVersion(access: Access, versionId: string, baseUrl: string): Promise<Version> {
    return this.toVersion(await this.ctx.accessVersion(access, versionId), baseUrl);
  }

  /** The contract's Version object; a Completed version's result URLs are signed afresh. */
  toVersion(v: VersionRow, baseUrl: string): Version {
    const out: Version = {
      asset_id: v.asset_id,
      dubbing_id: v.dubbing_id,
      version_id: v.version_id,
      name: v.name,
      studio_url: this.links.plainStudioUrl(baseUrl, v.version_id),
      locale: v.locale,
      created_at: v.created_at,
      status: v.status,
      voice_over: v.voice_over,
    };
    if (v.status === 'Completed' && v.result_generation !== null) {
      const urls = this.links.resultUrls(baseUrl, v.version_id, v.result_generation);
      out.result_url = urls.video;
      out.result_audio_url = urls.audio;
      if (v.result_generated_at) out.result_generated_at = v.result_generated_at;
      if (v.result_engines) out.engines = v.result_engines;
    }
    if (v.status === 'Failed' && v.error) out.error = v.error;
    return out;
  }

  /**
   * GET /v1/versions/{id}/report: the quality report (dub.quality-report/1) of the version's
   * current result, as generation stored it. 404 before the first generation and after revise
   * (the result and its report are removed together).
   */
  async qualityReport(access: Access, versionId: string): Promise<Buffer> {
    const v = await this.ctx.accessVersion(access, versionId);
    if (v.result_generation === null) throw new NotFoundError(`version ${versionId} has no quality report: it has no generated result (status ${v.status})`);
    const key = blobKeys.qualityReport(versionId, v.result_generation);
    if (!(await this.ctx.store.has(key))) throw new NotFoundError(`version ${versionId} has no quality report for generation ${v.result_generation} (generated before reports existed)`);
    return this.ctx.store.getBuffer(key);
  }

  // ---------------------------------------------------------------- revise

  async revise(org: string, versionId: string, studio: StudioUrlRequest | undefined, baseUrl: string): Promise<{ studio_url?: string }> {
    const field = 'studio_url_request.expiration_minutes';
    if (studio) studioMinutes(studio.expiration_minutes, field);
    const removed: string[] = [];
    await this.ctx.writeTx(async (tx, changes, touch) => {
      const v = await this.ctx.accessVersion({ org }, versionId, tx, true);
      touch(v.asset_id);
      const a = (await cat.getAsset(tx, v.asset_id))!;
      const unprepared = v.status === 'Failed' && !v.script_key;
      const trigger: VersionTrigger = unprepared ? 'revise_unprepared' : 'revise';
      const t = versionTransition(v.status, trigger);
      if (!t.allowed) throw new InvalidStateError(`version ${versionId} is ${v.status}; revise is allowed only when it is Completed, ReadyToEdit or Failed`);
      if (unprepared && a.error) throw new InvalidStateError(`the asset of version ${versionId} failed (${a.error.error_code}); its versions cannot be prepared again`);
      const ok = await cat.updateVersionIf(tx, versionId, v.row_version, {
        status: t.to,
        error_code: null,
        error_detail: null,
        result_generation: null,
        result_video_key: null,
        result_audio_key: null,
        result_generated_at: null,
        generate_mode: null,
      });
      if (!ok) throw new ConcurrentUpdateError(`version ${versionId}`);
      for (const k of [v.result_video_key, v.result_audio_key]) if (k) removed.push(k);
      if (unprepared) {
        const d = (await cat.getDubbing(tx, v.dubbing_id))!;
        await this.ctx.jobs.add(tx, prepareVersionJob(a, versionSpecOf(a, d, v.version_id), `r${v.row_version + 1}`, v.copy_from_version_id ?? undefined));
      }
      if (t.event) changes.push({ event: t.event, asset: a, version: { ...v, status: t.to }, status: t.to, error: null });
    });
    // The generated video and audio are permanently removed (their signed URLs answer 410 from now
    // on), with the rest of the generation's result (its quality report). The re-dub state the
    // next generation updates from (mix, loudness gain, AAC and lips chunk identities, line caches)
    // lives outside the result prefix, under the asset (blobKeys.redubState, artifacts), and stays.
    const { store, log } = this.ctx;
    for (const k of removed) await store.delete(k).catch((e) => log.warn({ err: e, key: k }, 'could not delete a result blob'));
    await store.deletePrefix(blobKeys.resultPrefix(versionId)).catch((e) => log.warn({ err: e }, 'could not delete result blobs'));
    return studio ? { studio_url: await this.links.studioUrl(org, versionId, studio, baseUrl, field) } : {};
  }

  // ---------------------------------------------------------------- generate

  /**
   * POST generate. 202 with the version (Generating) on success; 400 when not ReadyToEdit or
   * with_lips on a voice-over version; 403 insufficient_balance when the balance cannot cover the
   * asset's duration: the version is then Failed with error_code insufficient_balance.
   */
  async generate(org: string, versionId: string, mode: GenerateMode, baseUrl: string): Promise<Version> {
    let failedForBalance: string | undefined;
    await this.ctx.writeTx(async (tx, changes, touch) => {
      const v = await this.ctx.accessVersion({ org }, versionId, tx, true);
      touch(v.asset_id);
      const a = (await cat.getAsset(tx, v.asset_id))!;
      failedForBalance = await this.startGeneration(tx, changes, a, v, mode);
    });
    if (failedForBalance) throw new InsufficientBalanceError(failedForBalance);
    return this.getVersion({ org }, versionId, baseUrl);
  }

  /**
   * Move a ReadyToEdit version to Generating and enqueue its job (generate, and auto_generate on
   * version_prepared); returns a message when it failed for balance (the version is then Failed).
   */
  async startGeneration(tx: Queryable, changes: StatusChange[], a: AssetRow, v: VersionRow, mode: GenerateMode): Promise<string | undefined> {
    const t = versionTransition(v.status, 'generate');
    if (!t.allowed) throw new InvalidStateError(`version ${v.version_id} is ${v.status}; generate is allowed only when it is ReadyToEdit`);
    if (mode === 'with_lips' && v.voice_over) throw new ValidationError('generate_mode: voice_over_with_lips_not_allowed: a voice-over version can only be generated with no_lips', { field: 'generate_mode' });
    if (!v.script_key) throw new NotReadyError(`version ${v.version_id} has no script`);
    const minutes = (a.duration ?? 0) / 60;
    const total = this.ctx.o.orgBalances[v.org_id];
    if (total !== undefined && !(await cat.reserveMinutes(tx, v.org_id, minutes, total))) {
      const left = total - (await cat.consumedMinutes(tx, v.org_id));
      const detail = `insufficient_balance: generating ${round(minutes)} minutes needs more than the organization's remaining balance of ${round(left)} minutes`;
      const fail = versionTransition('Generating', 'generate_failed');
      const error: VersionErrorObject = { error_code: 'insufficient_balance', detail };
      const ok = await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: 'Failed', error_code: error.error_code, error_detail: detail, generation: v.generation + 1, generate_mode: mode });
      if (!ok) throw new ConcurrentUpdateError(`version ${v.version_id}`);
      if (fail.allowed && fail.event) changes.push({ event: fail.event, asset: a, version: { ...v, status: 'Failed' }, status: 'Failed', error });
      return detail;
    }
    const generation = v.generation + 1;
    const ok = await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, generation, generate_mode: mode, charged_minutes: total !== undefined ? minutes : 0, error_code: null, error_detail: null });
    if (!ok) throw new ConcurrentUpdateError(`version ${v.version_id}`);
    const job = generateJobOf(a, v, { job_id: `job_gen_${v.version_id}_${generation}`, mode, generation, script_key: v.script_key });
    await this.ctx.jobs.add(tx, job);
    if (t.event) changes.push({ event: t.event, asset: a, version: { ...v, status: t.to }, status: t.to, error: null });
    return undefined;
  }

  // ---------------------------------------------------------------- further versions

  /** POST /v1/dubbings/{id}/versions: a new version as a copy of an existing one's script (ReadyToEdit at once). */
  async newVersion(org: string, dubbingId: string, body: { from_version_id?: string; name?: string }, baseUrl: string): Promise<Version> {
    const id = newId('ver');
    const { store, now } = this.ctx;
    await this.ctx.writeTx(async (tx, changes, touch) => {
      const d = await cat.getDubbing(tx, dubbingId);
      if (d) touch(d.asset_id);
      const a = d ? await cat.getAsset(tx, d.asset_id) : undefined;
      if (!d || !a || a.org_id !== org) throw new NotFoundError(`dubbing ${dubbingId} not found`);
      const siblings = (await cat.versionsOf(tx, [a.asset_id])).filter((v) => v.dubbing_id === dubbingId);
      let from: VersionRow | undefined;
      if (body.from_version_id !== undefined) {
        from = siblings.find((v) => v.version_id === body.from_version_id);
        if (!from) throw new ValidationError(`from_version_id: version ${body.from_version_id} is not a version of dubbing ${dubbingId}`, { field: 'from_version_id' });
      } else from = [...siblings].reverse().find((v) => v.script_key);
      if (!from || !from.script_key) throw new NotReadyError(`from_version_id: ${from ? `version ${from.version_id}` : `dubbing ${dubbingId}`} has no script yet (status ${from?.status ?? 'NotReady'}); wait until it is ReadyToEdit`, 'from_version_id');
      const name = (body.name ?? `${d.locale} v${siblings.length + 1}`).trim().slice(0, 255) || `${d.locale} v${siblings.length + 1}`;
      const script = JSON.parse((await store.getBuffer(from.script_key)).toString('utf8')) as VersionScript;
      const key = blobKeys.script(id);
      await store.put(key, JSON.stringify({ ...script, version_id: id, updated_at: nowIso(now()) }));
      const row: cat.NewVersion = {
        version_id: id,
        dubbing_id: dubbingId,
        asset_id: a.asset_id,
        org_id: org,
        name,
        locale: d.locale,
        created_at: nowIso(now()),
        status: 'ReadyToEdit',
        voice_over: from.voice_over,
        auto_generate: 'off',
        copy_from_version_id: from.version_id,
        script_key: key,
      };
      await cat.insertVersion(tx, row);
      const v = (await cat.getVersion(tx, id))!;
      changes.push({ event: 'version_ready', asset: a, version: v, status: 'ReadyToEdit', error: null });
    });
    return this.getVersion({ org }, id, baseUrl);
  }
}
