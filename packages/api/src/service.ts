/**
 * The API's business logic, free of HTTP: assets, dubbings and versions, state transitions
 * (versionTransition of @dub/core, optimistic concurrency on the version row), balance, signed
 * URLs, SRT and scripts, and applying the worker's events. Status changes and their callbacks /
 * e-mails are written in one transaction (the outbox), so none is lost. Jobs too go through the
 * outbox and reach the queue only after their transaction committed (see job-outbox.ts).
 */
import {
  blobKeys,
  deriveAssetStatus,
  newId,
  NotFoundError,
  nowIso,
  ValidationError,
  validate,
  versionTransition,
  VersionScriptSchema,
  type Asset,
  type AssetStatus,
  type BlobStore,
  type GenerateMode,
  type GenerateVersionJob,
  type Job,
  type JobQueue,
  type Limits,
  type Logger,
  type PrepareAssetJob,
  type PrepareVersionJob,
  type SrtLocality,
  type SrtProfileName,
  type Transcript,
  type Version,
  type VersionScript,
  type VersionTrigger,
  type WorkerEvent,
  type AutoGenerate,
  type AssetErrorObject,
  type VersionErrorObject,
} from '@dub/core';
import { formatSubtitles, scriptSubtitles, serializeSrt, transcriptSubtitles, type SubtitleSegment } from '@dub/srt';
import { AssetViewCache, type AssetView } from './asset-view-cache.js';
import {
  ConcurrentUpdateError,
  GoneError,
  InsufficientBalanceError,
  InvalidStateError,
  LinkExpiredError,
  LinkInvalidError,
  NotReadyError,
  NotVisibleError,
  PreconditionFailedError,
  type LinkKind,
} from './errors.js';
import { JobOutbox } from './job-outbox.js';
import * as cat from './catalog.js';
import type { AssetRow, DubbingRow, VersionRow } from './catalog.js';
import type { Db, Queryable } from './db/db.js';
import { outboxItemsFor, type StatusChange } from './notifications.js';
import type { ResolvedApiOptions } from './options.js';
import type { StudioUrlRequest } from './schemas.js';
import type { SignedClaims, UrlSigner } from './signing.js';
import type { CreateAssetInput, LanguageInput } from './validation.js';
import { WaveformCache } from './waveform.js';

/** Who is asking: an organization (API key) or the holder of a signed studio link of one version. */
export type Access = { org: string } | { studioVersionId: string };

export const DEFAULT_STUDIO_MINUTES = 180;
export const MAX_STUDIO_MINUTES = 43_200;

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

export interface UploadedMedia {
  videoKey: string;
  backgroundKey?: string;
}

export interface ScriptWithTag {
  script: VersionScript;
  etag: string;
}

/** A refused signature check of a signed link: expired or invalid (403 either way). */
function linkRefused(reason: 'expired' | 'bad_signature', kind: LinkKind): LinkExpiredError | LinkInvalidError {
  return reason === 'expired' ? new LinkExpiredError(kind) : new LinkInvalidError(kind);
}

export class DubService {
  private readonly db: Db;
  private readonly store: BlobStore;
  private readonly jobs: JobOutbox;
  private readonly o: ResolvedApiOptions;
  private readonly signer: UrlSigner;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly onOutbox: () => void;
  private readonly cache: AssetViewCache | undefined;
  private waveforms: WaveformCache | undefined;

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

  // ---------------------------------------------------------------- limits and balance

  limitsFor(org: string): Limits {
    const per = this.o.orgLimits[org] ?? {};
    const limits: Limits = {};
    const v = per.maxVideoSeconds ?? this.o.maxVideoSeconds;
    const b = per.maxMediaBytes ?? this.o.maxMediaBytes;
    if (v !== undefined && v > 0) limits.max_video_seconds = v;
    if (b !== undefined && b > 0) limits.max_media_bytes = b;
    if (this.o.allowPrivateUrls) limits.allow_private_urls = true;
    return limits;
  }

  /** Remaining balance in minutes; undefined when the organization is unlimited. */
  async remainingMinutes(org: string, q: Queryable = this.db): Promise<number | undefined> {
    const total = this.o.orgBalances[org];
    if (total === undefined) return undefined;
    return total - (await cat.consumedMinutes(q, org));
  }

  // ---------------------------------------------------------------- assets

  /** Rule 3 of the contract: auto_generate with an exhausted balance is refused before anything is created. */
  async checkCreateBalance(org: string, auto: AutoGenerate): Promise<void> {
    if (auto === 'off') return;
    const left = await this.remainingMinutes(org);
    if (left !== undefined && left <= 0) throw new InsufficientBalanceError(`insufficient_balance: the organization's remaining video-generation balance (${round(left)} minutes) cannot cover auto_generate=${auto}`);
  }

  async createAsset(org: string, input: CreateAssetInput, baseUrl: string, upload?: UploadedMedia & { assetId: string }): Promise<Asset> {
    await this.checkCreateBalance(org, input.auto_generate);
    const assetId = upload?.assetId ?? newId('ast');
    const created = nowIso(this.now());
    const { name, locale, languages, ...rest } = input;
    const options: cat.AssetOptions = { ...rest, ...(upload ? { upload_video_key: upload.videoKey, ...(upload.backgroundKey ? { upload_background_key: upload.backgroundKey } : {}) } : {}) };
    const row: Omit<AssetRow, 'seq' | 'duration' | 'error' | 'source_video_key' | 'thumbnail_key' | 'transcript_key'> = {
      asset_id: assetId,
      org_id: org,
      name,
      locale,
      created_at: created,
      callback_url: input.callback_url ?? null,
      options,
    };
    await this.writeTx(async (tx) => {
      await cat.insertAsset(tx, row);
      const specs = await this.insertLanguages(tx, org, assetId, languages, input.voice_over, input.auto_generate, false, created);
      const job: PrepareAssetJob = {
        v: 1,
        type: 'prepare-asset',
        job_id: `job_prep_${assetId}`,
        asset_id: assetId,
        org_id: org,
        locale,
        media: upload ? { blob: upload.videoKey } : { url: input.media_url! },
        versions: specs,
        limits: this.limitsFor(org),
      };
      if (upload?.backgroundKey) job.background = { blob: upload.backgroundKey };
      else if (input.background_url) job.background = { url: input.background_url };
      if (input.speech_url) job.speech = { url: input.speech_url };
      if (input.start_time !== undefined) job.start_time = input.start_time;
      if (input.end_time !== undefined) job.end_time = input.end_time;
      if (input.speakers_count !== undefined) job.speakers_count = input.speakers_count;
      if (input.source_srt !== undefined) job.source_srt = input.source_srt;
      // Through the outbox: enqueued once the asset is committed (a worker never sees it missing).
      await this.jobs.add(tx, job);
    });
    return this.getAsset(org, assetId, baseUrl);
  }

  private async insertLanguages(tx: Queryable, org: string, assetId: string, languages: readonly LanguageInput[], voiceOver: boolean, auto: AutoGenerate, added: boolean, created: string) {
    const specs: PrepareAssetJob['versions'] = [];
    for (const l of languages) {
      const dubbingId = newId('dub');
      const versionId = newId('ver');
      await cat.insertDubbing(tx, { dubbing_id: dubbingId, asset_id: assetId, locale: l.locale, created_at: created, srt: l.srt ?? null, added });
      await cat.insertVersion(tx, {
        version_id: versionId,
        dubbing_id: dubbingId,
        asset_id: assetId,
        org_id: org,
        name: `${l.locale} v1`,
        locale: l.locale,
        created_at: created,
        status: 'NotReady',
        voice_over: voiceOver,
        auto_generate: auto,
        copy_from_version_id: null,
        script_key: null,
      });
      specs.push({ version_id: versionId, dubbing_id: dubbingId, locale: l.locale, ...(l.srt !== undefined ? { srt: l.srt } : {}) });
    }
    return specs;
  }

  private async ownAsset(org: string, assetId: string, q: Queryable = this.db): Promise<AssetRow> {
    const a = await cat.getAsset(q, assetId);
    if (!a || a.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    return a;
  }

  async getAsset(org: string, assetId: string, baseUrl: string): Promise<Asset> {
    const view = await this.assetView(assetId);
    if (!view || view.asset.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    return toAsset(view.asset, view.dubbings, view.versions, this.mediaLink(baseUrl));
  }

  /**
   * GET /v1/assets/{id} as JSON text. The signed media links expire on a whole minute (5 days
   * plus at most 59 s after the response), so the text of an unchanged asset is reused within
   * that minute: one serialization and two signatures per asset and minute, not per request.
   */
  async getAssetJson(org: string, assetId: string, baseUrl: string): Promise<string> {
    const view = await this.assetView(assetId);
    if (!view || view.asset.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    const key = `${baseUrl}|${this.linkExpiry()}`;
    const hit = this.assetJson.get(view);
    if (hit?.key === key) return hit.body;
    const body = JSON.stringify(toAsset(view.asset, view.dubbings, view.versions, this.mediaLink(baseUrl)));
    this.assetJson.set(view, { key, body });
    return body;
  }

  /** Rendered asset JSON per cached view object (a changed asset is a new view object). */
  private readonly assetJson = new WeakMap<object, { key: string; body: string }>();

  /** Expiry of signed links made now: the result URL lifetime, rounded up to a whole minute. */
  private linkExpiry(): number {
    return Math.ceil(this.now().getTime() / 60_000) * 60 + this.o.resultUrlTtlSeconds;
  }

  private async assetView(assetId: string): Promise<AssetView | undefined> {
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

  private invalidate(assetId: string | undefined): void {
    if (assetId) this.cache?.invalidate(assetId);
  }

  /** Signed links to an asset's source video and thumbnail (same lifetime as result URLs). */
  mediaLink(baseUrl: string): MediaLink {
    const expires = this.linkExpiry();
    return (assetId, kind) => this.signedUrl(baseUrl, { purpose: kind === 'source' ? 'source-video' : 'thumbnail', versionId: assetId, generation: 0, expires });
  }

  /** Resolve a signed source/thumbnail link of an asset. */
  async resolveAssetMedia(assetId: string, kind: 'source' | 'thumbnail', expires: unknown, sig: unknown): Promise<{ key: string; contentType: string; filename: string }> {
    const check = this.signer.verify({ purpose: kind === 'source' ? 'source-video' : 'thumbnail', versionId: assetId, generation: 0, expires: Number(expires) }, String(sig ?? ''), Math.floor(this.now().getTime() / 1000));
    if (!check.ok) throw linkRefused(check.reason, 'link');
    const a = await cat.getAsset(this.db, assetId);
    const key = kind === 'source' ? a?.source_video_key : a?.thumbnail_key;
    if (!a || !key) throw new NotFoundError(`${kind} of asset ${assetId} not found`);
    return { key, contentType: kind === 'source' ? 'video/mp4' : 'image/jpeg', filename: `${assetId}-${kind}.${kind === 'source' ? 'mp4' : 'jpg'}` };
  }

  async listAssets(org: string, limit: number, cursor: string | undefined, baseUrl: string): Promise<{ items: Asset[]; next_cursor: string | null }> {
    let before: number | undefined;
    if (cursor !== undefined) {
      const text = Buffer.from(cursor, 'base64url').toString('utf8');
      const n = Number(text.slice(2));
      // A safe integer: a larger one would overflow the query's bigint (a 500, not a 400).
      if (!/^s:\d{1,16}$/.test(text) || !Number.isSafeInteger(n)) throw new ValidationError('cursor: invalid cursor (use next_cursor of the previous page)', { field: 'cursor' });
      before = n;
    }
    const rows = await cat.listAssets(this.db, org, limit + 1, before);
    const page = rows.slice(0, limit);
    const ids = page.map((r) => r.asset_id);
    const [dubs, vers] = await Promise.all([cat.dubbingsOf(this.db, ids), cat.versionsOf(this.db, ids)]);
    const link = this.mediaLink(baseUrl);
    const items = page.map((a) => toAsset(a, dubs.filter((d) => d.asset_id === a.asset_id), vers.filter((v) => v.asset_id === a.asset_id), link));
    const next = rows.length > limit ? Buffer.from(`s:${page[page.length - 1]!.seq}`).toString('base64url') : null;
    return { items, next_cursor: next };
  }

  async addLanguages(org: string, assetId: string, languages: LanguageInput[], auto: AutoGenerate, baseUrl: string): Promise<Asset> {
    await this.checkCreateBalance(org, auto);
    try {
      await this.addLanguagesTx(org, assetId, languages, auto);
    } finally {
      this.invalidate(assetId);
    }
    return this.getAsset(org, assetId, baseUrl);
  }

  private async addLanguagesTx(org: string, assetId: string, languages: LanguageInput[], auto: AutoGenerate): Promise<void> {
    await this.writeTx(async (tx) => {
      const a = await this.ownAsset(org, assetId, tx);
      if (a.error) throw new InvalidStateError(`asset ${assetId} failed (${a.error.error_code}); languages cannot be added to a failed asset`, 'asset_id');
      const existing = new Set((await cat.dubbingsOf(tx, [assetId])).map((d) => d.locale));
      languages.forEach((l, i) => {
        if (existing.has(l.locale)) throw new ValidationError(`languages[${i}].locale: the asset already has a dubbing for "${l.locale}"`, { field: `languages[${i}].locale` });
      });
      const specs = await this.insertLanguages(tx, org, assetId, languages, a.options.voice_over, auto, true, nowIso(this.now()));
      // Before the asset is prepared, the asset_prepared event enqueues these (see applyWorkerEvent).
      if (a.transcript_key) for (const s of specs) await this.jobs.add(tx, this.prepareVersionJob(a, s, undefined));
    });
  }

  private prepareVersionJob(a: AssetRow, spec: PrepareVersionJob['version'], suffix: string | undefined, copyFrom?: string): PrepareVersionJob {
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

  // ---------------------------------------------------------------- versions

  private async accessVersion(access: Access, versionId: string, q: Queryable = this.db, forUpdate = false): Promise<VersionRow> {
    const v = await cat.getVersion(q, versionId, forUpdate);
    const ok = v && ('org' in access ? v.org_id === access.org : access.studioVersionId === versionId);
    if (!v || !ok) throw new NotFoundError(`version ${versionId} not found`);
    return v;
  }

  async getVersion(access: Access, versionId: string, baseUrl: string): Promise<Version> {
    const v = await this.accessVersion(access, versionId);
    return this.toVersion(v, baseUrl);
  }

  /** Plain (authenticated) studio URL of a version. */
  plainStudioUrl(baseUrl: string, versionId: string): string {
    return `${baseUrl}/v1/versions/${versionId}/studio`;
  }

  toVersion(v: VersionRow, baseUrl: string): Version {
    const out: Version = {
      asset_id: v.asset_id,
      dubbing_id: v.dubbing_id,
      version_id: v.version_id,
      name: v.name,
      studio_url: this.plainStudioUrl(baseUrl, v.version_id),
      locale: v.locale,
      created_at: v.created_at,
      status: v.status,
      voice_over: v.voice_over,
    };
    if (v.status === 'Completed' && v.result_generation !== null) {
      const expires = Math.floor(this.now().getTime() / 1000) + this.o.resultUrlTtlSeconds;
      out.result_url = this.signedUrl(baseUrl, { purpose: 'result-video', versionId: v.version_id, generation: v.result_generation, expires });
      out.result_audio_url = this.signedUrl(baseUrl, { purpose: 'result-audio', versionId: v.version_id, generation: v.result_generation, expires });
      if (v.result_generated_at) out.result_generated_at = v.result_generated_at;
      if (v.result_engines) out.engines = v.result_engines;
    }
    if (v.status === 'Failed' && v.error) out.error = v.error;
    return out;
  }

  private signedUrl(baseUrl: string, c: SignedClaims): string {
    const sig = this.signer.sign(c);
    if (c.purpose === 'source-video' || c.purpose === 'thumbnail') return `${baseUrl}/v1/media/${c.versionId}/${c.purpose === 'source-video' ? 'source' : 'thumbnail'}?expires=${c.expires}&sig=${sig}`;
    if (c.purpose === 'studio') return `${baseUrl}/studio/${c.versionId}?expires=${c.expires}&sig=${sig}`;
    const kind = c.purpose === 'result-video' ? 'video' : 'audio';
    return `${baseUrl}/v1/downloads/${c.versionId}/${c.generation}/${kind}?expires=${c.expires}&sig=${sig}`;
  }

  async studioUrl(org: string, versionId: string, req: StudioUrlRequest, baseUrl: string): Promise<string> {
    await this.accessVersion({ org }, versionId);
    const minutes = req.expiration_minutes ?? DEFAULT_STUDIO_MINUTES;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_STUDIO_MINUTES) throw new ValidationError(`expiration_minutes: must be an integer from 1 to ${MAX_STUDIO_MINUTES}`, { field: 'expiration_minutes' });
    if (req.sign_url === false) return this.plainStudioUrl(baseUrl, versionId);
    const expires = Math.floor(this.now().getTime() / 1000) + minutes * 60;
    return this.signedUrl(baseUrl, { purpose: 'studio', versionId, generation: 0, expires });
  }

  /** Check a signed studio link; throws 403 when tampered or expired. */
  checkStudioToken(versionId: string, expires: unknown, sig: unknown): Access {
    const check = this.signer.verify({ purpose: 'studio', versionId, generation: 0, expires: Number(expires) }, String(sig ?? ''), Math.floor(this.now().getTime() / 1000));
    if (!check.ok) throw linkRefused(check.reason, 'studio link');
    return { studioVersionId: versionId };
  }

  /** Resolve a signed download: 403 bad/expired signature, 410 when the generation is gone. */
  async resolveDownload(versionId: string, generation: number, kind: 'video' | 'audio', expires: unknown, sig: unknown): Promise<{ key: string; contentType: string; filename: string }> {
    const purpose = kind === 'video' ? 'result-video' : 'result-audio';
    const check = this.signer.verify({ purpose, versionId, generation, expires: Number(expires) }, String(sig ?? ''), Math.floor(this.now().getTime() / 1000));
    if (!check.ok) throw linkRefused(check.reason, 'download link');
    const v = await cat.getVersion(this.db, versionId);
    if (!v) throw new NotFoundError(`version ${versionId} not found`);
    const key = kind === 'video' ? v.result_video_key : v.result_audio_key;
    if (v.status !== 'Completed' || v.result_generation !== generation || !key) throw new GoneError(`generation ${generation} of version ${versionId} is no longer available`);
    return { key, contentType: kind === 'video' ? 'video/mp4' : 'audio/mp4', filename: `${versionId}-${generation}.${kind === 'video' ? 'mp4' : 'm4a'}` };
  }

  async revise(org: string, versionId: string, studio: StudioUrlRequest | undefined, baseUrl: string): Promise<{ studio_url?: string }> {
    if (studio?.expiration_minutes !== undefined && (studio.expiration_minutes < 1 || studio.expiration_minutes > MAX_STUDIO_MINUTES)) {
      throw new ValidationError(`studio_url_request.expiration_minutes: must be an integer from 1 to ${MAX_STUDIO_MINUTES}`, { field: 'studio_url_request.expiration_minutes' });
    }
    const removed: string[] = [];
    await this.writeTx(async (tx, changes, touch) => {
      const v = await this.accessVersion({ org }, versionId, tx, true);
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
        await this.jobs.add(tx, this.prepareVersionJob(a, { version_id: v.version_id, dubbing_id: v.dubbing_id, locale: v.locale, ...(d.srt ? { srt: d.srt } : {}) }, `r${v.row_version + 1}`, v.copy_from_version_id ?? undefined));
      }
      if (t.event) changes.push({ event: t.event, asset: a, version: { ...v, status: t.to }, status: t.to, error: null });
    });
    // The generated video and audio are permanently removed (their signed URLs answer 410 from now on).
    for (const k of removed) await this.store.delete(k).catch((e) => this.log.warn({ err: e, key: k }, 'could not delete a result blob'));
    await this.store.deletePrefix(blobKeys.resultPrefix(versionId)).catch((e) => this.log.warn({ err: e }, 'could not delete result blobs'));
    return studio ? { studio_url: await this.studioUrl(org, versionId, studio, baseUrl) } : {};
  }

  /**
   * POST generate. 202 with the version (Generating) on success; 400 when not ReadyToEdit or
   * with_lips on a voice-over version; 403 insufficient_balance when the balance cannot cover the
   * asset's duration: the version is then Failed with error_code insufficient_balance.
   */
  async generate(org: string, versionId: string, mode: GenerateMode, baseUrl: string): Promise<Version> {
    let failedForBalance: string | undefined;
    await this.writeTx(async (tx, changes, touch) => {
      const v = await this.accessVersion({ org }, versionId, tx, true);
      touch(v.asset_id);
      const a = (await cat.getAsset(tx, v.asset_id))!;
      failedForBalance = await this.startGeneration(tx, changes, a, v, mode);
    });
    if (failedForBalance) throw new InsufficientBalanceError(failedForBalance);
    return this.getVersion({ org }, versionId, baseUrl);
  }

  /** Move a ReadyToEdit version to Generating and enqueue its job; returns a message when it failed for balance. */
  private async startGeneration(tx: Queryable, changes: StatusChange[], a: AssetRow, v: VersionRow, mode: GenerateMode): Promise<string | undefined> {
    const t = versionTransition(v.status, 'generate');
    if (!t.allowed) throw new InvalidStateError(`version ${v.version_id} is ${v.status}; generate is allowed only when it is ReadyToEdit`);
    if (mode === 'with_lips' && v.voice_over) throw new ValidationError('generate_mode: voice_over_with_lips_not_allowed: a voice-over version can only be generated with no_lips', { field: 'generate_mode' });
    if (!v.script_key) throw new NotReadyError(`version ${v.version_id} has no script`);
    const minutes = (a.duration ?? 0) / 60;
    const total = this.o.orgBalances[v.org_id];
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
    const o = a.options;
    const job: GenerateVersionJob = {
      v: 1,
      type: 'generate-version',
      job_id: `job_gen_${v.version_id}_${generation}`,
      asset_id: a.asset_id,
      org_id: a.org_id,
      version_id: v.version_id,
      locale: v.locale,
      mode,
      script_key: v.script_key,
      generation,
      options: {
        voice_over: o.voice_over,
        voice_anonymization: o.voice_anonymization,
        lips_model: o.lips_model,
        ...(o.voice_library_id ? { voice_library_id: o.voice_library_id } : {}),
      },
    };
    await this.jobs.add(tx, job);
    if (t.event) changes.push({ event: t.event, asset: a, version: { ...v, status: t.to }, status: t.to, error: null });
    return undefined;
  }

  /** POST /v1/dubbings/{id}/versions: a new version as a copy of an existing one's script (ReadyToEdit at once). */
  async newVersion(org: string, dubbingId: string, body: { from_version_id?: string; name?: string }, baseUrl: string): Promise<Version> {
    const id = newId('ver');
    await this.writeTx(async (tx, changes, touch) => {
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
      const script = JSON.parse((await this.store.getBuffer(from.script_key)).toString('utf8')) as VersionScript;
      const key = blobKeys.script(id);
      await this.store.put(key, JSON.stringify({ ...script, version_id: id, updated_at: nowIso(this.now()) }));
      const row: cat.NewVersion = {
        version_id: id,
        dubbing_id: dubbingId,
        asset_id: a.asset_id,
        org_id: org,
        name,
        locale: d.locale,
        created_at: nowIso(this.now()),
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

  // ---------------------------------------------------------------- SRT and script

  async srt(access: Access, versionId: string, locality: SrtLocality, profile: SrtProfileName): Promise<string> {
    const v = await this.accessVersion(access, versionId);
    const a = (await cat.getAsset(this.db, v.asset_id))!;
    let segments: SubtitleSegment[];
    let locale: string;
    if (locality === 'source') {
      const key = a.transcript_key ?? blobKeys.transcript(a.asset_id);
      if (!(await this.store.has(key))) throw new NotReadyError(`the source transcript of asset ${a.asset_id} is not ready yet (asset status ${assetStatusOf(a, [v])})`, 'locality');
      const t = JSON.parse((await this.store.getBuffer(key)).toString('utf8')) as Transcript;
      segments = transcriptSubtitles(t);
      locale = a.locale;
    } else {
      if (!v.script_key) throw new NotReadyError(`version ${versionId} has no translation yet (status ${v.status})`, 'locality');
      segments = scriptSubtitles(await this.readScript(v));
      locale = v.locale;
    }
    const cues = formatSubtitles(segments, profile, { locale, ...(a.duration ? { mediaDuration: a.duration } : {}) });
    return serializeSrt(cues);
  }

  /**
   * GET /v1/versions/{id}/report: the quality report (dub.quality-report/1) of the version's
   * current result, as generation stored it. 404 before the first generation and after revise
   * (the result and its report are removed together).
   */
  async qualityReport(access: Access, versionId: string): Promise<Buffer> {
    const v = await this.accessVersion(access, versionId);
    if (v.result_generation === null) throw new NotFoundError(`version ${versionId} has no quality report: it has no generated result (status ${v.status})`);
    const key = blobKeys.qualityReport(versionId, v.result_generation);
    if (!(await this.store.has(key))) throw new NotFoundError(`version ${versionId} has no quality report for generation ${v.result_generation} (generated before reports existed)`);
    return this.store.getBuffer(key);
  }

  private async readScript(v: VersionRow): Promise<VersionScript> {
    return JSON.parse((await this.store.getBuffer(v.script_key!)).toString('utf8')) as VersionScript;
  }

  static etagOf(v: VersionRow): string {
    return `"${v.version_id}-r${v.script_rev}"`;
  }

  async getScript(access: Access, versionId: string): Promise<ScriptWithTag & { version: VersionRow }> {
    const v = await this.accessVersion(access, versionId);
    if (!v.script_key) throw new NotReadyError(`version ${versionId} has no script yet (status ${v.status})`);
    return { script: await this.readScript(v), etag: DubService.etagOf(v), version: v };
  }

  /** Replace the script (only in ReadyToEdit, trigger `edit`); `ifMatch` must equal the current etag when given. */
  async putScript(access: Access, versionId: string, body: unknown, ifMatch: string | undefined, isLibraryVoice?: (id: string) => boolean): Promise<ScriptWithTag> {
    const script = validate<VersionScript>(VersionScriptSchema, body, 'script');
    // A speaker's voice choice: a library voice must name one that exists.
    for (const [i, sp] of script.speakers.entries()) {
      if (sp.voice?.source !== 'library') continue;
      const field = `script.speakers[${i}].voice.library_voice_id`;
      if (!sp.voice.library_voice_id) throw new ValidationError(`${field}: a library voice needs library_voice_id (GET /v1/voices lists them)`, { field });
      if (isLibraryVoice && !isLibraryVoice(sp.voice.library_voice_id)) throw new ValidationError(`${field}: unknown voice "${sp.voice.library_voice_id}" (GET /v1/voices lists them)`, { field });
    }
    let etag = '';
    await this.db.transaction(async (tx) => {
      const v = await this.accessVersion(access, versionId, tx, true);
      const t = versionTransition(v.status, 'edit');
      if (!t.allowed) throw new InvalidStateError(`version ${versionId} is ${v.status}; the script can be edited only when it is ReadyToEdit`);
      if (!v.script_key) throw new NotReadyError(`version ${versionId} has no script yet`);
      if (ifMatch !== undefined && ifMatch !== DubService.etagOf(v)) throw new PreconditionFailedError(`the script changed since it was read (If-Match ${ifMatch}, current ${DubService.etagOf(v)})`);
      if (script.version_id !== versionId || script.asset_id !== v.asset_id) throw new ValidationError('script: asset_id and version_id must be those of the version', { field: 'script.version_id' });
      for (const [i, s] of script.segments.entries()) if (s.end < s.start) throw new ValidationError(`script.segments[${i}]: end must not be before start`, { field: `script.segments[${i}].end` });
      checkScriptSpeakers(script);
      const ok = await cat.updateVersionIf(tx, versionId, v.row_version, { script_rev: v.script_rev + 1 });
      // Under the row lock this cannot happen; with If-Match it is that precondition that failed.
      if (!ok) throw ifMatch !== undefined ? new PreconditionFailedError(`the script changed since it was read (If-Match ${ifMatch})`) : new ConcurrentUpdateError(`the script of version ${versionId}`);
      await this.store.put(v.script_key, JSON.stringify({ ...script, updated_at: nowIso(this.now()) }));
      etag = DubService.etagOf({ ...v, script_rev: v.script_rev + 1 });
    });
    const { script: saved } = await this.getScript(access, versionId);
    return { script: saved, etag };
  }

  /** GET waveform: the waveform body (JSON bytes) of the version's asset source, computed once per asset (./waveform.ts). */
  async waveform(access: Access, versionId: string): Promise<{ assetId: string; body: Buffer }> {
    const v = await this.accessVersion(access, versionId);
    const a = (await cat.getAsset(this.db, v.asset_id))!;
    if (!a.source_video_key) throw new NotReadyError(`the source video of asset ${a.asset_id} is not ready yet (asset status ${assetStatusOf(a, [v])})`, 'version_id');
    this.waveforms ??= new WaveformCache(this.store, this.log);
    return { assetId: a.asset_id, body: await this.waveforms.get(a.asset_id, a.source_video_key) };
  }

  async versionRow(access: Access, versionId: string): Promise<VersionRow> {
    return this.accessVersion(access, versionId);
  }

  async assetRow(assetId: string): Promise<AssetRow | undefined> {
    return cat.getAsset(this.db, assetId);
  }

  // ---------------------------------------------------------------- worker events

  /**
   * Apply one worker event (at least once delivery: stale or repeated events change nothing). An
   * event whose asset or version is not visible (yet) throws NotVisibleError: the feed delivers
   * it again (see event-retry.ts).
   */
  async applyWorkerEvent(ev: WorkerEvent): Promise<void> {
    if (ev.type === 'progress' || ev.type === 'stage_done') return;
    await this.writeTx(async (tx, changes, touch) => {
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
            if (d && v.status === 'NotReady' && !v.script_key) await this.jobs.add(tx, this.prepareVersionJob(a, { version_id: v.version_id, dubbing_id: d.dubbing_id, locale: d.locale, ...(d.srt ? { srt: d.srt } : {}) }, undefined));
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
            this.log.warn({ event: ev.type, version_id: ev.version_id, asset_id: ev.asset_id }, 'worker event for a version of another asset ignored');
            return;
          }
          await this.applyVersionEvent(tx, changes, a, v, ev);
          return;
        }
      }
    });
  }

  private async applyVersionEvent(tx: Queryable, changes: StatusChange[], a: AssetRow, v: VersionRow, ev: Extract<WorkerEvent, { version_id: string; type: `version_${string}` }>): Promise<void> {
    const dub = await cat.getDubbing(tx, v.dubbing_id);
    const added = dub?.added ?? false;
    const stale = (why: string) => this.log.info({ event: ev.type, version_id: v.version_id, status: v.status }, `worker event ignored: ${why}`);
    if (ev.type === 'version_prepared') {
      const t = versionTransition(v.status, 'prepared');
      if (!t.allowed) return stale(`version is ${v.status}`);
      if (!(await cat.updateVersionIf(tx, v.version_id, v.row_version, { status: t.to, script_key: ev.script_key, error_code: null, error_detail: null }))) throw new ConcurrentUpdateError(`version ${v.version_id}`);
      const ready = { ...v, status: t.to, script_key: ev.script_key, row_version: v.row_version + 1 };
      changes.push({ event: t.event!, asset: a, version: ready, status: t.to, error: null, addedLanguage: added });
      if (v.auto_generate === 'with_lips' || v.auto_generate === 'no_lips') {
        const mode: GenerateMode = v.auto_generate === 'with_lips' && !v.voice_over ? 'with_lips' : 'no_lips';
        const asset = (await cat.getAsset(tx, a.asset_id))!;
        await this.startGeneration(tx, changes, asset, ready, mode);
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
        result_generated_at: ev.at || nowIso(this.now()),
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

  // ---------------------------------------------------------------- internals

  /** A transaction that collects status changes and writes their outbox rows before committing. */
  private async writeTx(fn: (tx: Queryable, changes: StatusChange[], touch: (assetId: string) => void) => Promise<void>): Promise<void> {
    let wrote = false;
    const touched = new Set<string>();
    try {
      await this.writeTxInner(fn, touched, () => (wrote = true));
    } finally {
      for (const id of touched) this.invalidate(id);
    }
    if (wrote) this.onOutbox();
  }

  private async writeTxInner(fn: (tx: Queryable, changes: StatusChange[], touch: (assetId: string) => void) => Promise<void>, touched: Set<string>, onWrote: () => void): Promise<void> {
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

/** Every segment's speaker is one of the script's speakers (generation never lends another speaker's voice). */
export function checkScriptSpeakers(script: VersionScript): void {
  const ids = new Set<string>();
  for (const [i, sp] of script.speakers.entries()) {
    if (ids.has(sp.id)) throw new ValidationError(`script.speakers[${i}]: speaker id "${sp.id}" appears twice`, { field: `script.speakers[${i}].id` });
    ids.add(sp.id);
  }
  const known = [...ids].slice(0, 20).join(', ') || 'none';
  for (const [i, s] of script.segments.entries()) {
    if (!ids.has(s.speaker)) {
      throw new ValidationError(`script.segments[${i}] (${s.id.slice(0, 64)}): speaker "${s.speaker.slice(0, 64)}" is not one of the script's speakers (${known})`, { field: `script.segments[${i}].speaker` });
    }
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function assetStatusOf(a: AssetRow, versions: readonly Pick<VersionRow, 'status'>[]): AssetStatus {
  return deriveAssetStatus(a.error !== null, versions.map((v) => v.status));
}

export type MediaLink = (assetId: string, kind: 'source' | 'thumbnail') => string;

export function toAsset(a: AssetRow, dubs: readonly DubbingRow[], vers: readonly VersionRow[], link?: MediaLink): Asset {
  const out: Asset = {
    asset_id: a.asset_id,
    name: a.name,
    locale: a.locale,
    created_at: a.created_at,
    status: assetStatusOf(a, vers),
    duration: a.duration,
    source_video_url: a.source_video_key && link ? link(a.asset_id, 'source') : null,
    thumbnail_url: a.thumbnail_key && link ? link(a.asset_id, 'thumbnail') : null,
    languages: dubs.map((d) => ({
      dubbing_id: d.dubbing_id,
      locale: d.locale,
      versions: vers.filter((v) => v.dubbing_id === d.dubbing_id).map((v) => ({ version_id: v.version_id, voice_over: v.voice_over })),
    })),
  };
  if (a.error) out.error = a.error;
  return out;
}

export type { Job };
