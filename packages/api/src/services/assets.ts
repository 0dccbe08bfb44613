/**
 * Assets: create (from a URL or an upload; the prepare-asset job leaves through the outbox), read
 * (one, as cached JSON, or a page of the list), add languages, the account limits and the balance
 * check of contract rule 3, and the waveform of an asset's source for the studio.
 */
import { newId, NotFoundError, nowIso, type Asset, type AutoGenerate, type Glossary, type Limits, type VersionGlossaryBody, type PrepareAssetJob } from '@dub/core';
import * as cat from '../catalog.js';
import type { AssetRow, DubbingRow, VersionRow } from '../catalog.js';
import type { Queryable } from '../db/db.js';
import { InsufficientBalanceError, InvalidStateError, LinkNotAllowedError, NotReadyError, ValidationError } from '../errors.js';
import type { CreateAssetInput, LanguageInput, PatchAssetInput } from '../validation.js';
import { decodeCursor, encodeCursor } from '../validators.js';
import { WaveformCache } from '../waveform.js';
import { assetStatusOf, prepareVersionJob, round, versionSpecOf, type Access, type ServiceContext } from './context.js';
import type { LinkService, MediaLink } from './links.js';

export interface UploadedMedia {
  videoKey: string;
  backgroundKey?: string;
}

export class AssetService {
  private waveforms: WaveformCache | undefined;
  /** Rendered asset JSON per cached view object (a changed asset is a new view object). */
  private readonly assetJson = new WeakMap<object, { key: string; body: string }>();

  constructor(
    private readonly ctx: ServiceContext,
    private readonly links: LinkService,
  ) {}

  // ---------------------------------------------------------------- limits and balance

  limitsFor(org: string): Limits {
    const o = this.ctx.o;
    const per = o.orgLimits[org] ?? {};
    const limits: Limits = {};
    const v = per.maxVideoSeconds ?? o.maxVideoSeconds;
    const b = per.maxMediaBytes ?? o.maxMediaBytes;
    if (v !== undefined && v > 0) limits.max_video_seconds = v;
    if (b !== undefined && b > 0) limits.max_media_bytes = b;
    if (o.allowPrivateUrls) limits.allow_private_urls = true;
    return limits;
  }

  /** Remaining balance in minutes; undefined when the organization is unlimited. */
  async remainingMinutes(org: string, q: Queryable = this.ctx.db): Promise<number | undefined> {
    const total = this.ctx.o.orgBalances[org];
    if (total === undefined) return undefined;
    return total - (await cat.consumedMinutes(q, org));
  }

  /** Rule 3 of the contract: auto_generate with an exhausted balance is refused before anything is created. */
  async checkCreateBalance(org: string, auto: AutoGenerate): Promise<void> {
    if (auto === 'off') return;
    const left = await this.remainingMinutes(org);
    if (left !== undefined && left <= 0) throw new InsufficientBalanceError(`insufficient_balance: the organization's remaining video-generation balance (${round(left)} minutes) cannot cover auto_generate=${auto}`);
  }

  // ---------------------------------------------------------------- create

  async createAsset(org: string, input: CreateAssetInput, baseUrl: string, upload?: UploadedMedia & { assetId: string }): Promise<Asset> {
    await this.checkCreateBalance(org, input.auto_generate);
    const assetId = upload?.assetId ?? newId('ast');
    const created = nowIso(this.ctx.now());
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
    await this.ctx.writeTx(async (tx) => {
      await cat.insertAsset(tx, row);
      const specs = await this.insertLanguages(tx, org, assetId, languages, input.voice_over, input.auto_generate, false, created, input.glossary);
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
      await this.ctx.jobs.add(tx, job);
    });
    return this.getAsset(org, assetId, baseUrl);
  }

  /** One dubbing and its first version (NotReady) per language. */
  private async insertLanguages(tx: Queryable, org: string, assetId: string, languages: readonly LanguageInput[], voiceOver: boolean, auto: AutoGenerate, added: boolean, created: string, assetGlossary?: Glossary) {
    const specs: PrepareAssetJob['versions'] = [];
    for (const l of languages) {
      const dubbingId = newId('dub');
      const versionId = newId('ver');
      const dubbing = { dubbing_id: dubbingId, asset_id: assetId, locale: l.locale, created_at: created, srt: l.srt ?? null, added, glossary: l.glossary ?? null };
      await cat.insertDubbing(tx, dubbing);
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
      const spec = versionSpecOf({ options: { glossary: assetGlossary } } as cat.AssetRow, dubbing, versionId);
      // an empty srt travels as it was given (versionSpecOf leaves out an empty one)
      specs.push(l.srt !== undefined ? { ...spec, srt: l.srt } : spec);
    }
    return specs;
  }

  async addLanguages(org: string, assetId: string, languages: LanguageInput[], auto: AutoGenerate, baseUrl: string): Promise<Asset> {
    await this.checkCreateBalance(org, auto);
    try {
      await this.ctx.writeTx(async (tx) => {
        const a = await this.ctx.ownAsset(org, assetId, tx);
        if (a.error) throw new InvalidStateError(`asset ${assetId} failed (${a.error.error_code}); languages cannot be added to a failed asset`, 'asset_id');
        const existing = new Set((await cat.dubbingsOf(tx, [assetId])).map((d) => d.locale));
        languages.forEach((l, i) => {
          if (existing.has(l.locale)) throw new ValidationError(`languages[${i}].locale: the asset already has a dubbing for "${l.locale}"`, { field: `languages[${i}].locale` });
        });
        const specs = await this.insertLanguages(tx, org, assetId, languages, a.options.voice_over, auto, true, nowIso(this.ctx.now()), a.options.glossary);
        // Before the asset is prepared, the asset_prepared event enqueues these (services/events.ts).
        if (a.transcript_key) for (const s of specs) await this.ctx.jobs.add(tx, prepareVersionJob(a, s, undefined));
      });
    } finally {
      this.ctx.invalidate(assetId);
    }
    return this.getAsset(org, assetId, baseUrl);
  }

  /**
   * Extension: PATCH /v1/assets/{asset_id}: replace the asset's glossary and/or dubbings' (null
   * clears). It applies to translations made from then on (a language added, a version prepared
   * again); a script already made (it may carry studio edits) is not translated again.
   */
  async patchAsset(org: string, assetId: string, patch: PatchAssetInput, baseUrl: string): Promise<Asset> {
    try {
      await this.ctx.writeTx(async (tx) => {
        const a = await this.ctx.ownAsset(org, assetId, tx);
        if (patch.languages) {
          const dubs = new Map((await cat.dubbingsOf(tx, [assetId])).map((d) => [d.locale, d]));
          for (const [i, l] of patch.languages.entries()) {
            const d = dubs.get(l.locale);
            if (!d) throw new ValidationError(`languages[${i}].locale: the asset has no dubbing for "${l.locale}" (its languages: ${[...dubs.keys()].join(', ')})`, { field: `languages[${i}].locale` });
            await cat.setDubbingGlossary(tx, d.dubbing_id, l.glossary);
          }
        }
        if (patch.glossary !== undefined) {
          const { glossary: _old, ...options } = a.options;
          await cat.setAssetOptions(tx, assetId, patch.glossary ? { ...options, glossary: patch.glossary } : options);
        }
      });
    } finally {
      this.ctx.invalidate(assetId);
    }
    return this.getAsset(org, assetId, baseUrl);
  }

  /** Extension: the glossaries a version's translation applies (GET /v1/versions/{id}/glossary; the studio's panel). */
  async versionGlossary(access: Access, versionId: string): Promise<VersionGlossary> {
    const v = await this.ctx.accessVersion(access, versionId);
    const [a, d] = await Promise.all([cat.getAsset(this.ctx.db, v.asset_id), cat.getDubbing(this.ctx.db, v.dubbing_id)]);
    return { asset_id: v.asset_id, dubbing_id: v.dubbing_id, locale: v.locale, asset: a?.options.glossary ?? [], language: d?.glossary ?? [], can_edit_asset: 'org' in access };
  }

  /**
   * Extension: PUT /v1/versions/{id}/glossary: the asset's (API key only: it is every language's)
   * and/or this version's language's glossary, as PATCH /v1/assets/{id} does.
   */
  async putVersionGlossary(access: Access, versionId: string, body: { asset?: Glossary | null; language?: Glossary | null }): Promise<VersionGlossary> {
    const v = await this.ctx.accessVersion(access, versionId);
    if (body.asset !== undefined && !('org' in access)) throw new LinkNotAllowedError("a studio link changes only its own language's glossary; the asset's (every language's) needs the API key");
    const org = 'org' in access ? access.org : v.org_id;
    await this.patchAsset(org, v.asset_id, { ...(body.asset !== undefined ? { glossary: body.asset } : {}), ...(body.language !== undefined ? { languages: [{ locale: v.locale, glossary: body.language }] } : {}) }, '');
    return this.versionGlossary(access, versionId);
  }

  // ---------------------------------------------------------------- read

  async getAsset(org: string, assetId: string, baseUrl: string): Promise<Asset> {
    const view = await this.ctx.assetView(assetId);
    if (!view || view.asset.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    return toAsset(view.asset, view.dubbings, view.versions, this.links.mediaLink(baseUrl));
  }

  /**
   * GET /v1/assets/{id} as JSON text. The signed media links expire on a whole minute (5 days
   * plus at most 59 s after the response), so the text of an unchanged asset is reused within
   * that minute: one serialization and two signatures per asset and minute, not per request.
   */
  async getAssetJson(org: string, assetId: string, baseUrl: string): Promise<string> {
    const view = await this.ctx.assetView(assetId);
    if (!view || view.asset.org_id !== org) throw new NotFoundError(`asset ${assetId} not found`);
    const key = `${baseUrl}|${this.links.linkExpiry()}`;
    const hit = this.assetJson.get(view);
    if (hit?.key === key) return hit.body;
    const body = JSON.stringify(toAsset(view.asset, view.dubbings, view.versions, this.links.mediaLink(baseUrl)));
    this.assetJson.set(view, { key, body });
    return body;
  }

  async listAssets(org: string, limit: number, cursor: string | undefined, baseUrl: string): Promise<{ items: Asset[]; next_cursor: string | null }> {
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const db = this.ctx.db;
    const rows = await cat.listAssets(db, org, limit + 1, before);
    const page = rows.slice(0, limit);
    const ids = page.map((r) => r.asset_id);
    const [dubs, vers] = await Promise.all([cat.dubbingsOf(db, ids), cat.versionsOf(db, ids)]);
    const link = this.links.mediaLink(baseUrl);
    const items = page.map((a) => toAsset(a, dubs.filter((d) => d.asset_id === a.asset_id), vers.filter((v) => v.asset_id === a.asset_id), link));
    return { items, next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.seq) : null };
  }

  /** The asset row, whoever owns it (callers checked access through one of its versions). */
  async assetRow(assetId: string): Promise<AssetRow | undefined> {
    return cat.getAsset(this.ctx.db, assetId);
  }

  /** GET waveform: the waveform body (JSON bytes) of the version's asset source, computed once per asset (../waveform.ts). */
  async waveform(access: Access, versionId: string): Promise<{ assetId: string; body: Buffer }> {
    const v = await this.ctx.accessVersion(access, versionId);
    const a = (await cat.getAsset(this.ctx.db, v.asset_id))!;
    if (!a.source_video_key) throw new NotReadyError(`the source video of asset ${a.asset_id} is not ready yet (asset status ${assetStatusOf(a, [v])})`, 'version_id');
    this.waveforms ??= new WaveformCache(this.ctx.store, this.ctx.log);
    return { assetId: a.asset_id, body: await this.waveforms.get(a.asset_id, a.source_video_key) };
  }
}

/** GET /v1/versions/{id}/glossary: the asset's and the version's language's glossary (the wire body, in @dub/core). */
export type VersionGlossary = VersionGlossaryBody;

/** The contract's Asset object of an asset row with its dubbings and versions. */
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
      ...(d.glossary?.length ? { glossary: d.glossary } : {}),
    })),
  };
  if (a.error) out.error = a.error;
  if (a.options.glossary?.length) out.glossary = a.options.glossary;
  return out;
}
