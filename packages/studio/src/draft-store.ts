/**
 * The draft store: the script as the server last gave it (`base`, with its ETag), the edited copy
 * (`draft`), the time fields whose text does not parse, the undo/redo history, and what the edits
 * amount to (validation issues, the diff against `base`, the speakers changed). It also saves the
 * draft with If-Match and, on 412, rebases the edits onto the script someone else saved. No DOM:
 * the panels read it and the edit controller changes it.
 */
import type { ScriptSegment, VersionScript } from '@dub/core';
import { ApiError, type StudioClient } from './api-client.js';
import { EditHistory } from './history.js';
import { diffScript, diffSpeakers, hasErrors, rebaseScript, rebaseSpeakers, validateSegments, type ScriptDiff, type ScriptIssue } from './script-edit.js';
import type { TaggedScript } from './types.js';

const cloneSegments = (s: readonly ScriptSegment[]): ScriptSegment[] => structuredClone(s as ScriptSegment[]);
const noDiff = (): ScriptDiff => ({ fields: [], added: [], removed: [], count: 0 });

/** What a save came to: saved (`count` changes), or rebased onto someone else's save (412). */
export type SaveOutcome = { kind: 'saved'; count: number } | { kind: 'rebased'; applied: number; conflicts: string[] };

export class DraftStore {
  /** The script as the server last gave it (null: the version has none yet). */
  base: TaggedScript | null = null;
  /** The edited copy. */
  draft: VersionScript | null = null;
  /** Time fields whose text does not parse: `${id}:${field}` -> message. */
  readonly parseErrors = new Map<string, string>();
  readonly history = new EditHistory<ScriptSegment[]>();
  issues: ScriptIssue[] = [];
  diff: ScriptDiff = noDiff();
  /** Speakers whose name or voice choice differ from the saved script. */
  speakerDiff: string[] = [];

  /** A script from the server (or none): the draft is a fresh copy, with no history. */
  load(script: TaggedScript | null): void {
    this.base = script;
    this.draft = script ? structuredClone(script.script) : null;
    this.parseErrors.clear();
    this.history.clear();
  }

  /** The API key was forgotten: nothing is loaded. */
  forget(): void {
    this.base = null;
    this.draft = null;
    this.diff = noDiff();
  }

  /** The draft's segments, copied (the state an undo entry holds). */
  snapshot = (): ScriptSegment[] => cloneSegments(this.draft!.segments);

  dirty(): boolean {
    return this.diff.count > 0 || this.speakerDiff.length > 0;
  }

  /** Unsaved changes as counted for the user: one per segment edited, added or removed, and one per speaker renamed or revoiced. */
  pendingCount(): number {
    return this.diff.count + this.speakerDiff.length;
  }

  /** Problems that block a save: unparsed time fields and validation errors. */
  blocked(): boolean {
    return this.parseErrors.size > 0 || hasErrors(this.issues);
  }

  errorCount(): number {
    return this.issues.filter((x) => x.severity === 'error').length + this.parseErrors.size;
  }

  /** Recompute validation, the diff and the speakers changed (`duration`: the asset's, when known). */
  recompute(duration: number | null): void {
    if (!this.draft || !this.base) {
      this.issues = [];
      this.diff = noDiff();
      this.speakerDiff = [];
    } else {
      this.issues = validateSegments(this.draft.segments, { duration, original: this.base.script.segments });
      this.diff = diffScript(this.base.script.segments, this.draft.segments);
      this.speakerDiff = diffSpeakers(this.base.script.speakers, this.draft.speakers);
    }
  }

  /** Record the state before a structural edit as its own undo entry, then replace the segments. */
  replaceSegments(segments: ScriptSegment[]): void {
    this.history.record(this.snapshot);
    this.history.cut();
    this.draft!.segments = segments;
  }

  /** Undo (or redo) one entry; false when there is none. */
  step(dir: 'undo' | 'redo'): boolean {
    const cur = this.snapshot();
    const to = dir === 'undo' ? this.history.undo(cur) : this.history.redo(cur);
    if (!to) return false;
    this.draft!.segments = to;
    this.parseErrors.clear();
    return true;
  }

  /** Back to the saved script. */
  discard(): void {
    if (!this.base) return;
    this.draft = structuredClone(this.base.script);
    this.parseErrors.clear();
    this.history.clear();
  }

  /** Save the draft with If-Match; on 412 reload the other save and re-apply what does not collide. */
  async save(c: StudioClient): Promise<SaveOutcome> {
    const count = this.pendingCount();
    try {
      const saved = await c.saveScript(this.draft!, this.base!.etag);
      this.base = saved;
      this.draft = structuredClone(saved.script);
      this.history.clear();
      return { kind: 'saved', count };
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 412) throw e;
      return this.rebaseAfterConflict(c);
    }
  }

  /** 412: someone else saved. Reload their script and re-apply what does not collide. */
  private async rebaseAfterConflict(c: StudioClient): Promise<SaveOutcome> {
    const mineBase = this.base!.script.segments;
    const mine = this.draft!;
    const remote = await c.script();
    const r = rebaseScript(mineBase, mine, remote.script);
    const sp = rebaseSpeakers(this.base!.script.speakers, mine.speakers, remote.script.speakers);
    r.script.speakers = sp.speakers;
    r.applied += sp.applied.length;
    r.conflicts.push(...sp.conflicts);
    this.base = remote;
    this.draft = r.script;
    this.parseErrors.clear();
    this.history.clear();
    return { kind: 'rebased', applied: r.applied, conflicts: r.conflicts };
  }
}
