/**
 * The edit controller: turns what the user does to the script (typing, time fields, dragging or
 * nudging an edge, split, merge, undo, redo, discard) into changes of the draft store, with one
 * undo entry per edit, and shows them (the block, the row, the refresh).
 */
import type { StudioHost } from './host.js';
import { freshId, mergeWithNext, placeEdge, splitSegment, edgeLimits } from './segment-ops.js';
import { segmentAt } from './script-edit.js';
import { formatTime, parseTime } from './time.js';
import type { ScriptSegment } from '@dub/core';
import type { Edge, EdgeKey } from './timeline.js';
import { nextBoundary } from './waveform.js';

/** A dragged edge snaps to a pause boundary within this many pixels. */
const SNAP_PX = 8;

export class EditController {
  private drag: { before: ScriptSegment[]; changed: boolean } | undefined;

  constructor(private readonly host: StudioHost) {}

  private get store() {
    return this.host.store;
  }

  onText(i: number, text: HTMLTextAreaElement): void {
    if (!this.host.editable()) return;
    const seg = this.store.draft!.segments[i]!;
    if (seg.target_text === text.value) return;
    this.store.history.record(this.store.snapshot, `text:${seg.id}`);
    seg.target_text = text.value;
    this.host.timeline?.updateBlock(i);
    this.host.refreshEdits();
  }

  commitTime(i: number, field: 'start' | 'end', input: HTMLInputElement): void {
    if (!this.store.draft || input.readOnly) return;
    const seg = this.store.draft.segments[i]!;
    const key = `${seg.id}:${field}`;
    const p = parseTime(input.value);
    if (p.ok) {
      if (seg[field] !== p.seconds) {
        this.store.history.record(this.store.snapshot);
        this.store.history.cut();
        seg[field] = p.seconds;
        this.host.timeline?.updateBlock(i);
      }
      input.value = formatTime(p.seconds);
      this.store.parseErrors.delete(key);
    } else this.store.parseErrors.set(key, p.error);
    this.host.refreshEdits();
  }

  /** A segment's speaker chosen in its row; false when nothing changed. */
  setSpeakerOf(i: number, speaker: string): boolean {
    const seg = this.store.draft?.segments[i];
    if (!seg || !this.host.editable() || seg.speaker === speaker) return false;
    this.store.history.record(this.store.snapshot);
    seg.speaker = speaker;
    this.store.history.cut();
    return true;
  }

  /** Set one edge of segment i (already placed) and show it everywhere. */
  private setEdge(i: number, edge: Edge, v: number): void {
    const seg = this.store.draft!.segments[i]!;
    seg[edge] = v;
    const r = this.host.rows[i];
    if (r) {
      (edge === 'start' ? r.start : r.end).value = formatTime(v);
      this.store.parseErrors.delete(`${seg.id}:${edge}`);
    }
    this.host.timeline?.updateBlock(i);
  }

  onDrag(i: number, edge: Edge, t: number, phase: 'start' | 'move' | 'end', snap: boolean): void {
    if (!this.host.editable()) return;
    const segs = this.store.draft!.segments;
    if (phase === 'start') {
      this.drag = { before: this.store.snapshot(), changed: false };
      this.host.select(i);
      return;
    }
    const d = this.drag;
    if (!d) return;
    const timeline = this.host.timeline;
    const v = placeEdge(segs, i, edge, t, { duration: this.host.ctx!.asset.duration, ...(snap && timeline ? { silences: this.host.silences, snapRadius: SNAP_PX * timeline.secondsPerPixel } : {}) });
    if (v !== segs[i]![edge]) {
      if (!d.changed) {
        this.store.history.record(d.before);
        this.store.history.cut();
        d.changed = true;
      }
      this.setEdge(i, edge, v);
      this.host.queueRefresh();
    }
    if (phase === 'end') {
      this.drag = undefined;
      this.host.refreshEdits();
      if (d.changed) this.host.say(`Segment ${i + 1} ${edge} moved to ${formatTime(segs[i]![edge])}.`);
    }
  }

  onEdgeKey(i: number, edge: Edge, key: EdgeKey): void {
    if (!this.host.editable()) return;
    const segs = this.store.draft!.segments;
    const cur = segs[i]![edge];
    const [lo, hi] = edgeLimits(segs, i, edge, this.host.ctx!.asset.duration);
    const target =
      key === 'dec' ? cur - 0.05
      : key === 'inc' ? cur + 0.05
      : key === 'dec-big' ? cur - 0.5
      : key === 'inc-big' ? cur + 0.5
      : key === 'min' ? lo
      : key === 'max' ? hi
      : nextBoundary(cur, edge, this.host.silences, key === 'prev-pause' ? -1 : 1) ?? cur;
    const v = placeEdge(segs, i, edge, target, { duration: this.host.ctx!.asset.duration });
    if (v === cur) return;
    this.store.history.record(this.store.snapshot, `nudge:${segs[i]!.id}:${edge}`);
    this.setEdge(i, edge, v);
    this.host.refreshEdits();
  }

  /** Split the selected segment (or the one under the playhead) at the playhead. */
  split(): void {
    if (!this.host.editable()) return;
    const segs = this.store.draft!.segments;
    const t = this.host.playhead;
    const sel = segs[this.host.selected];
    const i = sel && t > sel.start && t < sel.end ? this.host.selected : segmentAt(segs, t);
    if (i < 0) return this.host.showError(`No segment is under the playhead (${formatTime(t)}): move the playhead into the segment to split.`);
    const taken = new Set([...segs.map((s) => s.id), ...(this.store.base?.script.segments.map((s) => s.id) ?? [])]);
    const r = splitSegment(segs, i, t, freshId(segs[i]!.id, taken));
    if (!r.ok) return this.host.showError(`Cannot split: ${r.reason}.`);
    this.store.replaceSegments(r.segments);
    this.host.selected = i + 1;
    this.host.rebuild();
    this.host.clearMessages();
    this.host.say(`Segment ${i + 1} split at ${formatTime(r.segments[i]!.end)} into segments ${i + 1} and ${i + 2}.`);
  }

  merge(): void {
    if (!this.host.editable()) return;
    const i = this.host.selected;
    if (i < 0) return this.host.showError('Select a segment to merge with the next one (click its row or its block).');
    const r = mergeWithNext(this.store.draft!.segments, i);
    if (!r.ok) return this.host.showError(`Cannot merge: ${r.reason}.`);
    this.store.replaceSegments(r.segments);
    this.host.rebuild();
    this.host.clearMessages();
    this.host.say(`Segments ${i + 1} and ${i + 2} merged into segment ${i + 1}.`);
  }

  undo(): void {
    if (!this.host.editable()) return;
    if (!this.store.step('undo')) return this.host.say('Nothing to undo.');
    this.host.rebuild();
    this.host.say('Undone.');
  }

  redo(): void {
    if (!this.host.editable()) return;
    if (!this.store.step('redo')) return this.host.say('Nothing to redo.');
    this.host.rebuild();
    this.host.say('Redone.');
  }

  discard(): void {
    if (!this.store.base) return;
    this.store.discard();
    this.host.rebuild();
    this.host.say('Your unsaved changes were discarded.');
  }
}
