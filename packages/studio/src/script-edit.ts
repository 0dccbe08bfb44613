/**
 * The page's pure script logic: validation of edited timings and texts, the diff between the
 * script as loaded and as edited, and re-applying one's edits onto a script someone else saved.
 * The API stays the authority (it refuses edits outside ReadyToEdit and stale If-Match); these
 * checks tell the editor what is wrong before anything is sent.
 */
import type { ScriptSegment, Speaker, VersionScript } from '@dub/core';
import { formatTime } from './time.js';

/** The fields the studio edits. */
export type EditableField = 'target_text' | 'start' | 'end' | 'speaker';
export const EDITABLE_FIELDS: readonly EditableField[] = ['start', 'end', 'target_text', 'speaker'];

export type SegmentLike = Pick<ScriptSegment, 'id' | 'start' | 'end' | 'target_text'> & { speaker?: string };

export interface ScriptIssue {
  /** Index of the segment in the script. */
  index: number;
  id: string;
  field: EditableField;
  /** `error` blocks saving; `warning` is shown only (a condition the loaded script already had). */
  severity: 'error' | 'warning';
  message: string;
}

export interface ValidateOptions {
  /** Duration of the (trimmed) source video in seconds; null when unknown. */
  duration: number | null;
  /**
   * The script as loaded. A timing problem of segments whose times the editor did not change is
   * only a warning (a prepared script may, say, let two speakers overlap); without it every
   * problem is an error.
   */
  original?: readonly SegmentLike[];
}

const EPS = 1e-6;

/**
 * Checks every segment: start >= 0, end > start, end inside the video, no overlap with the
 * previous or next segment (in script order), target text not empty (a warning: that segment
 * stays silent).
 */
export function validateSegments(segments: readonly SegmentLike[], opts: ValidateOptions): ScriptIssue[] {
  const before = new Map((opts.original ?? []).map((s) => [s.id, s]));
  const timingChanged = (s: SegmentLike) => {
    if (!opts.original) return true;
    const o = before.get(s.id);
    return !o || o.start !== s.start || o.end !== s.end;
  };
  const issues: ScriptIssue[] = [];
  const add = (index: number, field: EditableField, severity: ScriptIssue['severity'], message: string) =>
    issues.push({ index, id: segments[index]!.id, field, severity, message });
  segments.forEach((s, i) => {
    const sev = timingChanged(s) ? 'error' : 'warning';
    if (!Number.isFinite(s.start) || s.start < 0) add(i, 'start', 'error', 'start must be a time of 0 or more');
    if (!Number.isFinite(s.end)) add(i, 'end', 'error', 'end must be a time');
    else if (s.end <= s.start + EPS) add(i, 'end', sev, `end must be after start (${formatTime(s.start)})`);
    if (opts.duration !== null && Number.isFinite(s.end) && s.end > opts.duration + EPS) add(i, 'end', sev, `end is after the end of the video (${formatTime(opts.duration)})`);
    if (opts.duration !== null && Number.isFinite(s.start) && s.start >= opts.duration - EPS) add(i, 'start', sev, `start is not inside the video (${formatTime(opts.duration)})`);
    const prev = segments[i - 1];
    if (prev && s.start < prev.end - EPS) {
      const pairSev = timingChanged(s) || timingChanged(prev) ? 'error' : 'warning';
      add(i, 'start', pairSev, `starts before the previous segment ends (${formatTime(prev.end)})`);
      add(i - 1, 'end', pairSev, `ends after the next segment starts (${formatTime(s.start)})`);
    }
    if (s.target_text.trim() === '') add(i, 'target_text', 'warning', 'the target text is empty: this segment will be silent');
  });
  return issues.sort((a, b) => a.index - b.index || EDITABLE_FIELDS.indexOf(a.field) - EDITABLE_FIELDS.indexOf(b.field));
}

export const hasErrors = (issues: readonly ScriptIssue[]) => issues.some((i) => i.severity === 'error');

export interface SegmentChange {
  id: string;
  /** Index in the edited script. */
  index: number;
  field: EditableField;
  before: string | number;
  after: string | number;
}

/** The edits that turn `base` into `edited`, segment by segment (matched by id), in script order. */
export function diffSegments(base: readonly SegmentLike[], edited: readonly SegmentLike[]): SegmentChange[] {
  const byId = new Map(base.map((s) => [s.id, s]));
  const out: SegmentChange[] = [];
  edited.forEach((s, index) => {
    const b = byId.get(s.id);
    for (const field of EDITABLE_FIELDS) {
      if (!b || b[field] !== s[field]) out.push({ id: s.id, index, field, before: b ? (b[field] ?? '') : field === 'target_text' || field === 'speaker' ? '' : Number.NaN, after: s[field] ?? '' });
    }
  });
  return out;
}

export interface RebaseResult {
  /** The remote script with the edits re-applied. */
  script: VersionScript;
  /** Edits re-applied (the remote value was still the one they started from). */
  applied: SegmentChange[];
  /** Edits whose field the other save changed too, or whose segment is gone: the remote value is kept. */
  conflicts: (SegmentChange & { remote: string | number | undefined })[];
}

/**
 * Re-apply one's unsaved edits onto the script someone else saved meanwhile (after a 412). An edit
 * applies when that field still has the value the edit started from; an edit that the other save
 * already made is dropped silently; any other is a conflict and the remote value wins.
 */
export function rebaseEdits(changes: readonly SegmentChange[], remote: VersionScript): RebaseResult {
  const script: VersionScript = structuredClone(remote);
  const byId = new Map(script.segments.map((s) => [s.id, s]));
  const applied: SegmentChange[] = [];
  const conflicts: RebaseResult['conflicts'] = [];
  for (const c of changes) {
    const seg = byId.get(c.id);
    if (!seg) {
      conflicts.push({ ...c, remote: undefined });
      continue;
    }
    const now = seg[c.field];
    if (now === c.after) continue;
    if (now === c.before) {
      setField(seg, c.field, c.after);
      applied.push(c);
    } else conflicts.push({ ...c, remote: now });
  }
  return { script, applied, conflicts };
}

export interface ScriptDiff {
  /** Field edits of segments that are in both (as diffSegments). */
  fields: SegmentChange[];
  /** Segments of the edited script that the base does not have (a split's second part), with their index in the edited script. */
  added: { id: string; index: number }[];
  /** Segments of the base that the edited script does not have (merged away), with their index in the base. */
  removed: { id: string; index: number }[];
  /** Unsaved changes as the page counts them: one per segment edited (whatever its fields), added or removed. */
  count: number;
}

/** Everything that turns `base` into `edited`: field edits, segments added and removed. */
export function diffScript(base: readonly SegmentLike[], edited: readonly SegmentLike[]): ScriptDiff {
  const inBase = new Set(base.map((s) => s.id));
  const inEdited = new Set(edited.map((s) => s.id));
  const fields = diffSegments(base, edited.filter((s) => inBase.has(s.id))).map((c) => ({ ...c, index: edited.findIndex((s) => s.id === c.id) }));
  const added = edited.flatMap((s, index) => (inBase.has(s.id) ? [] : [{ id: s.id, index }]));
  const removed = base.flatMap((s, index) => (inEdited.has(s.id) ? [] : [{ id: s.id, index }]));
  return { fields, added, removed, count: new Set(fields.map((c) => c.id)).size + added.length + removed.length };
}

export interface ScriptRebase {
  /** The remote script with the edits re-applied. */
  script: VersionScript;
  /** How many edits were re-applied. */
  applied: number;
  /** What could not be re-applied because the other save changed it too (their version is kept), in words. */
  conflicts: string[];
}

const sameSegment = (a: ScriptSegment, b: ScriptSegment) => JSON.stringify(a) === JSON.stringify(b);

/**
 * After a 412: re-apply the edits that turned `base` into `mine` onto `remote` (someone else's
 * save). Field edits as rebaseEdits; a segment I removed (merged) is removed when the other save
 * left it exactly as it was, else kept; a segment I added (split) is inserted after the nearest
 * segment before it in my script that the result has.
 */
export function rebaseScript(base: readonly ScriptSegment[], mine: VersionScript, remote: VersionScript): ScriptRebase {
  const d = diffScript(base, mine.segments);
  const fr = rebaseEdits(d.fields, remote);
  const segs = fr.script.segments;
  const conflicts = fr.conflicts.map((c) => (c.remote === undefined ? `segment ${c.index + 1} (the other save removed it)` : `segment ${c.index + 1} ${fieldLabel(c.field)}`));
  let applied = new Set(fr.applied.map((c) => c.id)).size;
  const baseById = new Map(base.map((s) => [s.id, s]));
  // A split or merge also changed the source side of the segment it kept: carry that over where the other save left it alone.
  const remoteById = new Map(segs.map((s) => [s.id, s]));
  for (const m of mine.segments) {
    const b = baseById.get(m.id);
    const r = remoteById.get(m.id);
    if (!b || !r) continue;
    for (const k of ['source_text', 'source_words', 'target_words'] as const) {
      const was = JSON.stringify(b[k]);
      if (JSON.stringify(m[k]) !== was && JSON.stringify(r[k]) === was) {
        if (m[k] === undefined) delete r[k];
        else (r as unknown as Record<string, unknown>)[k] = structuredClone(m[k]);
      }
    }
  }
  for (const r of d.removed) {
    const i = segs.findIndex((s) => s.id === r.id);
    if (i < 0) continue;
    if (sameSegment(segs[i]!, baseById.get(r.id)!)) {
      segs.splice(i, 1);
      applied++;
    } else conflicts.push(`segment ${r.id} that you merged away (the other save changed it, so it is kept)`);
  }
  for (const a of d.added) {
    if (segs.some((s) => s.id === a.id)) {
      conflicts.push(`segment ${a.id} that you added (the other save added one with the same id)`);
      continue;
    }
    let at = 0;
    for (let k = a.index - 1; k >= 0; k--) {
      const j = segs.findIndex((s) => s.id === mine.segments[k]!.id);
      if (j >= 0) {
        at = j + 1;
        break;
      }
    }
    segs.splice(at, 0, structuredClone(mine.segments[a.index]!));
    applied++;
  }
  return { script: fr.script, applied, conflicts };
}

/** Set one editable field (a time in seconds or the target text). */
export function setField(seg: SegmentLike, field: EditableField, value: string | number): void {
  if (field === 'target_text') seg.target_text = String(value);
  else if (field === 'speaker') seg.speaker = String(value);
  else seg[field] = Number(value);
}

/** Human name of a field for messages. */
export function fieldLabel(field: EditableField): string {
  return field === 'target_text' ? 'target text' : field;
}

/** What a speaker entry of the script carries that the studio edits: display name and voice choice. */
export type SpeakerLike = Pick<Speaker, 'id' | 'name' | 'voice'>;

const speakerKey = (s: SpeakerLike | undefined): string => JSON.stringify([s?.name?.trim() || null, s?.voice ? [s.voice.source, s.voice.library_voice_id ?? null, s.voice.anonymization ?? null] : null]);

/** Ids of the speakers whose name or voice differ between `base` and `edited` (a speaker missing on one side counts as having neither). */
export function diffSpeakers(base: readonly SpeakerLike[], edited: readonly SpeakerLike[]): string[] {
  const ids = [...new Set([...base.map((s) => s.id), ...edited.map((s) => s.id)])];
  return ids.filter((id) => speakerKey(base.find((s) => s.id === id)) !== speakerKey(edited.find((s) => s.id === id)));
}

/**
 * Re-apply one's speaker edits (name, voice) onto the speakers someone else saved meanwhile: an
 * edit applies where the other save left that speaker as it was; otherwise theirs wins (a conflict).
 */
export function rebaseSpeakers<S extends SpeakerLike>(base: readonly S[], mine: readonly S[], remote: readonly S[]): { speakers: S[]; applied: string[]; conflicts: string[] } {
  const speakers = structuredClone(remote as S[]);
  const applied: string[] = [];
  const conflicts: string[] = [];
  for (const id of diffSpeakers(base, mine)) {
    const b = base.find((s) => s.id === id);
    const m = mine.find((s) => s.id === id);
    const i = speakers.findIndex((s) => s.id === id);
    const r = i >= 0 ? speakers[i] : undefined;
    if (speakerKey(r) === speakerKey(m)) continue;
    if (speakerKey(r) !== speakerKey(b) || !m) {
      conflicts.push(`speaker ${id}`);
      continue;
    }
    const next = { ...(r ?? ({ id } as S)) } as S;
    delete next.name;
    delete next.voice;
    if (m.name?.trim()) next.name = m.name;
    if (m.voice) next.voice = structuredClone(m.voice);
    if (i >= 0) speakers[i] = next;
    else speakers.push(next);
    applied.push(id);
  }
  return { speakers, applied, conflicts };
}

/** Per speaker: how many segments and how many seconds of speech the script gives them. */
export function speakerStats(script: Pick<VersionScript, 'speakers' | 'segments'>): { id: string; segments: number; seconds: number }[] {
  const ids = [...script.speakers.map((s) => s.id)];
  for (const s of script.segments) if (!ids.includes(s.speaker)) ids.push(s.speaker);
  return ids.map((id) => {
    const mine = script.segments.filter((s) => s.speaker === id);
    return { id, segments: mine.length, seconds: Math.round(mine.reduce((t, s) => t + Math.max(0, s.end - s.start), 0) * 1000) / 1000 };
  });
}

/** The segment playing at time t (seconds), if any. */
export function segmentAt(segments: readonly SegmentLike[], t: number): number {
  return segments.findIndex((s) => t >= s.start && t < s.end);
}
