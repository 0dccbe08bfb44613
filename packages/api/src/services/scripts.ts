/**
 * The texts of a version: its editable script (read with an ETag; replaced only in ReadyToEdit,
 * with If-Match) and its subtitles as SRT (target: from the script; source: from the asset's
 * transcript), laid out by formatSubtitles of @dub/srt.
 */
import { blobKeys, nowIso, validate, versionTransition, VersionScriptSchema, type SrtLocality, type SrtProfileName, type Transcript, type VersionScript } from '@dub/core';
import { formatSubtitles, scriptSubtitles, serializeSrt, transcriptSubtitles, type SubtitleSegment } from '@dub/srt';
import * as cat from '../catalog.js';
import type { VersionRow } from '../catalog.js';
import { ConcurrentUpdateError, InvalidStateError, NotReadyError, PreconditionFailedError, ValidationError } from '../errors.js';
import { assetStatusOf, type Access, type ServiceContext } from './context.js';

export interface ScriptWithTag {
  script: VersionScript;
  etag: string;
}

/** The ETag of a version's script: its id and script revision. */
export function etagOf(v: Pick<VersionRow, 'version_id' | 'script_rev'>): string {
  return `"${v.version_id}-r${v.script_rev}"`;
}

export class ScriptService {
  constructor(private readonly ctx: ServiceContext) {}

  private async readScript(v: VersionRow): Promise<VersionScript> {
    return JSON.parse((await this.ctx.store.getBuffer(v.script_key!)).toString('utf8')) as VersionScript;
  }

  async getScript(access: Access, versionId: string): Promise<ScriptWithTag & { version: VersionRow }> {
    const v = await this.ctx.accessVersion(access, versionId);
    if (!v.script_key) throw new NotReadyError(`version ${versionId} has no script yet (status ${v.status})`);
    return { script: await this.readScript(v), etag: etagOf(v), version: v };
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
    await this.ctx.db.transaction(async (tx) => {
      const v = await this.ctx.accessVersion(access, versionId, tx, true);
      const t = versionTransition(v.status, 'edit');
      if (!t.allowed) throw new InvalidStateError(`version ${versionId} is ${v.status}; the script can be edited only when it is ReadyToEdit`);
      if (!v.script_key) throw new NotReadyError(`version ${versionId} has no script yet`);
      if (ifMatch !== undefined && ifMatch !== etagOf(v)) throw new PreconditionFailedError(`the script changed since it was read (If-Match ${ifMatch}, current ${etagOf(v)})`);
      if (script.version_id !== versionId || script.asset_id !== v.asset_id) throw new ValidationError('script: asset_id and version_id must be those of the version', { field: 'script.version_id' });
      for (const [i, s] of script.segments.entries()) if (s.end < s.start) throw new ValidationError(`script.segments[${i}]: end must not be before start`, { field: `script.segments[${i}].end` });
      checkScriptSpeakers(script);
      const ok = await cat.updateVersionIf(tx, versionId, v.row_version, { script_rev: v.script_rev + 1 });
      // Under the row lock this cannot happen; with If-Match it is that precondition that failed.
      if (!ok) throw ifMatch !== undefined ? new PreconditionFailedError(`the script changed since it was read (If-Match ${ifMatch})`) : new ConcurrentUpdateError(`the script of version ${versionId}`);
      await this.ctx.store.put(v.script_key, JSON.stringify({ ...script, updated_at: nowIso(this.ctx.now()) }));
      etag = etagOf({ ...v, script_rev: v.script_rev + 1 });
    });
    const { script: saved } = await this.getScript(access, versionId);
    return { script: saved, etag };
  }

  /** GET srt: target subtitles from the script, source subtitles from the asset's transcript. */
  async srt(access: Access, versionId: string, locality: SrtLocality, profile: SrtProfileName): Promise<string> {
    const v = await this.ctx.accessVersion(access, versionId);
    const a = (await cat.getAsset(this.ctx.db, v.asset_id))!;
    const store = this.ctx.store;
    let segments: SubtitleSegment[];
    let locale: string;
    if (locality === 'source') {
      const key = a.transcript_key ?? blobKeys.transcript(a.asset_id);
      if (!(await store.has(key))) throw new NotReadyError(`the source transcript of asset ${a.asset_id} is not ready yet (asset status ${assetStatusOf(a, [v])})`, 'locality');
      const t = JSON.parse((await store.getBuffer(key)).toString('utf8')) as Transcript;
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
