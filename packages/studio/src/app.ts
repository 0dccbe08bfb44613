/**
 * The studio page: renders one version and wires its parts together. The parts:
 * - draft-store.ts: the script as the server last gave it, the edited copy, undo/redo, save with
 *   If-Match and the rebase after a 412;
 * - panels: header-panel.ts (header, API-key form), toolbar-panel.ts, player-panel.ts,
 *   speakers-panel.ts, segments-panel.ts, report-panel.ts, glossary-panel.ts, timeline.ts;
 * - controllers: edit-controller.ts (edits), shortcut-controller.ts (keys), poll-controller.ts
 *   (status polling).
 * They see the page through host.ts (StudioHost), which this class implements. What a status
 * allows is the API's decision; the page only enables the buttons that match the status.
 */
import type { SrtProfileName } from '@dub/core';
import { ApiError, linkCredential, StudioClient, type StudioCredential } from './api-client.js';
import { byId, fill, h } from './dom.js';
import { DraftStore } from './draft-store.js';
import { EditController } from './edit-controller.js';
import { GlossaryPanel } from './glossary-panel.js';
import { fatalPage, keyForm, renderHeader } from './header-panel.js';
import type { Row, SelectOptions, StudioHost } from './host.js';
import { messageOf, setText } from './messages.js';
import type { Player, Track } from './player.js';
import { playerPane } from './player-panel.js';
import { PollController } from './poll-controller.js';
import { dirOf } from './reading.js';
import { ReportPanel } from './report-panel.js';
import { segmentAt } from './script-edit.js';
import { SegmentsPanel } from './segments-panel.js';
import { focusKind, ShortcutController } from './shortcut-controller.js';
import { SpeakersPanel } from './speakers-panel.js';
import { studioActions, type StudioActions } from './status.js';
import { formatTime } from './time.js';
import { Timeline } from './timeline.js';
import { ToolbarPanel } from './toolbar-panel.js';
import type { StudioBoot, StudioContext, TaggedScript } from './types.js';
import { decodeWaveform, findSilences, type Span, type WaveformData } from './waveform.js';

export { focusKind } from './shortcut-controller.js';

/** sessionStorage key of the API key (plain studio_url pages only; never in a URL). */
export const KEY_STORAGE = 'dub-studio-api-key';

export class StudioApp implements StudioHost {
  client: StudioClient | undefined;
  ctx: StudioContext | undefined;
  readonly store = new DraftStore();
  selected = -1;
  busy = false;
  player: Player | undefined;
  timeline: Timeline | undefined;
  silences: Span[] = [];
  playhead = 0;
  readonly main = byId('app');
  private waveform: WaveformData | undefined;
  private waveformLoading: Promise<void> | undefined;
  /** The Glossary panel (glossary-panel.ts), made once the client exists. */
  private glossary: GlossaryPanel | undefined;
  private refreshQueued = false;
  private rendered = false;
  private readonly notice = byId('notice');
  private readonly error = byId('error');
  private readonly edits = new EditController(this);
  private readonly report = new ReportPanel(this);
  private readonly speakers = new SpeakersPanel(this, this.edits);
  private readonly segments = new SegmentsPanel(this, { edits: this.edits, speakers: this.speakers, report: this.report });
  private readonly toolbar = new ToolbarPanel(this, { edits: this.edits, save: () => this.save() });
  private readonly poll = new PollController(this);
  private readonly keys = new ShortcutController(this, { edits: this.edits, save: () => this.save(), step: (d) => this.step(d), showShortcuts: () => this.toolbar.showShortcuts() });

  constructor(
    private readonly boot: StudioBoot,
    readonly win: Window = window,
  ) {}

  get rows(): readonly Row[] {
    return this.segments.rows;
  }

  start(): void {
    this.win.addEventListener('beforeunload', (e) => {
      if (this.store.dirty()) e.preventDefault();
    });
    this.win.addEventListener('keydown', (e) => this.keys.onKey(e));
    if (this.boot.error) return this.fatal(this.boot.error.detail);
    if (this.boot.access === 'link') {
      const cred = linkCredential(this.win.location.search);
      if (!cred) return this.fatal('This studio link is incomplete: its expires and sig parameters are missing. Ask for a new link.');
      this.connect(cred);
      if (this.boot.context) this.apply(this.boot.context, this.boot.script ?? null);
      else void this.reload();
      return;
    }
    const key = this.win.sessionStorage.getItem(KEY_STORAGE);
    if (!key) return this.keyForm();
    this.connect({ kind: 'key', key });
    void this.reload();
  }

  private connect(credential: StudioCredential): void {
    this.client = new StudioClient({ apiBase: this.boot.api_base, versionId: this.boot.version_id, credential });
  }

  // ------------------------------------------------------------------ loading

  async reload(): Promise<void> {
    const c = this.client!;
    try {
      const ctx = await c.context();
      const script = ctx.has_script ? await c.script() : null;
      this.apply(ctx, script);
    } catch (e) {
      // A key that is refused, or that belongs to another organization: ask again.
      if (e instanceof ApiError && this.boot.access === 'key' && !this.ctx && [401, 403, 404].includes(e.status)) {
        this.win.sessionStorage.removeItem(KEY_STORAGE);
        this.keyForm();
        return this.showError(e.status === 401 ? 'The API key was not accepted (401). Enter a valid key.' : messageOf(e));
      }
      if (!this.ctx) return this.fatal(messageOf(e));
      this.showError(messageOf(e));
    }
  }

  private apply(ctx: StudioContext, script: TaggedScript | null): void {
    this.ctx = ctx;
    this.store.load(script);
    this.report.clear();
    this.glossary ??= new GlossaryPanel(this.client!, (m) => this.showError(m));
    this.glossary.setSegments(this.store.base?.script.segments ?? []);
    this.render();
    this.schedulePoll();
    this.loadWaveform();
    void this.report.load();
    void this.speakers.loadVoices();
    void this.glossary.load();
  }

  actions(): StudioActions {
    if (!this.ctx) return studioActions('NotReady', false);
    return studioActions(this.ctx.version.status, this.ctx.has_script && this.store.base !== null);
  }

  editable(): boolean {
    return this.actions().edit && !this.busy && this.store.draft !== null;
  }

  profile(): SrtProfileName {
    return this.toolbar.profile();
  }

  setVersion(v: StudioContext['version']): void {
    this.ctx = { ...this.ctx!, version: v };
  }

  schedulePoll(): void {
    this.poll.schedule();
  }

  private duration(): number {
    const d = this.ctx?.asset.duration;
    if (d) return d;
    return Math.max(1, ...(this.store.draft?.segments.map((s) => s.end) ?? [1]));
  }

  /** The source audio's waveform, once per page (the API computes it on the first request for the asset). */
  private loadWaveform(): void {
    if (this.waveform) {
      this.timeline?.setWaveform(this.waveform, this.silences);
      return;
    }
    if (this.waveformLoading || !this.client || !this.ctx?.asset.source_video_url || !this.timeline) return;
    const c = this.client;
    fill(this.timeline.status, 'Loading the waveform\u2026');
    this.waveformLoading = (async () => {
      try {
        const w = decodeWaveform(await c.waveform());
        this.waveform = w;
        this.silences = findSilences(w);
        this.timeline?.setWaveform(w, this.silences);
        if (this.timeline) fill(this.timeline.status, `${this.silences.length} pauses found`);
        performance.mark('dub-studio-waveform');
      } catch (e) {
        if (this.timeline) fill(this.timeline.status, `No waveform: ${messageOf(e)}`);
      } finally {
        this.waveformLoading = undefined;
      }
    })();
  }

  // ------------------------------------------------------------------ rendering

  private fatal(detail: string): void {
    this.poll.stop();
    fatalPage(this.main, detail);
    this.showError(detail);
  }

  private keyForm(): void {
    keyForm(this.main, (key) => {
      this.win.sessionStorage.setItem(KEY_STORAGE, key);
      this.connect({ kind: 'key', key });
      this.clearMessages();
      void this.reload();
    });
  }

  render(): void {
    const ctx = this.ctx!;
    const v = ctx.version;
    const act = this.actions();
    const view = this.timeline?.view();
    const draft = this.store.draft;
    renderHeader(this.win.document, ctx, this.store.base, () => this.forgetKey());
    const reason = act.readOnlyReason + (v.status === 'Failed' && v.error ? ` Error ${v.error.error_code}: ${v.error.detail}` : '');
    this.timeline = draft ? this.makeTimeline(act.edit) : undefined;
    const toolbar = this.toolbar.build(act);
    const pane = playerPane(this, { onTime: (t) => this.setPlayhead(t, true), glossary: this.glossary?.el });
    this.player = pane.player;
    fill(
      this.main,
      h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Version actions' }, ...toolbar),
      reason ? h('p', { id: 'readonly-note', class: 'readonly-note', role: 'note' }, reason) : null,
      h('div', { class: 'workspace' }, h('section', { class: 'player-pane', 'aria-label': 'Players and speakers' }, ...pane.nodes), this.timeline?.el ?? null, this.segments.section(act, Boolean(reason))),
      this.toolbar.shortcutsDialog(),
    );
    // Nothing here reads the layout: the timeline takes its width (and its zoom) from a
    // ResizeObserver, after the first layout, so the page is laid out once for its first frame.
    if (this.timeline && draft) {
      this.timeline.setSegments(draft.segments, draft.speakers);
      if (view) this.timeline.restoreViewLater(view);
      if (this.waveform) this.timeline.setWaveform(this.waveform, this.silences);
    }
    this.segments.buildRows();
    if (this.selected >= (draft?.segments.length ?? 0)) this.selected = -1;
    this.speakers.render();
    this.applySelection(false);
    this.refreshEdits();
    this.report.show();
    this.setPlayhead(this.player?.time ?? this.playhead, false);
    if (!this.rendered) {
      this.rendered = true;
      this.win.document.documentElement.dataset.studioRendered = '1';
      performance.mark('dub-studio-rendered');
      // the frame after the one that showed it (the benchmark's "first render")
      requestAnimationFrame(() => requestAnimationFrame(() => performance.mark('dub-studio-first-frame')));
    }
  }

  private makeTimeline(editable: boolean): Timeline {
    return new Timeline(this.duration(), editable, dirOf(this.store.draft!.target_locale), {
      select: (i, at) => this.select(i, { seek: at ?? 'start', scroll: 'row' }),
      seek: (t) => this.player?.seek(t) ?? this.setPlayhead(t, false),
      drag: (i, edge, t, phase, snap) => this.edits.onDrag(i, edge, t, phase, snap),
      edgeKey: (i, edge, key) => this.edits.onEdgeKey(i, edge, key),
    });
  }

  /** After a structural change (split, merge, undo, redo, save): rows and blocks again, focus kept where it was. */
  rebuild(): void {
    const active = this.win.document.activeElement as HTMLElement | null;
    // a block keeps the focus as the selected block (its number may have changed); anything else by its id
    const onBlock = focusKind(active) === 'block';
    const focusId = onBlock ? undefined : active?.id;
    const draft = this.store.draft;
    this.segments.buildRows();
    this.speakers.render();
    if (this.timeline && draft) this.timeline.setSegments(draft.segments, draft.speakers);
    if (this.selected >= (draft?.segments.length ?? 0)) this.selected = (draft?.segments.length ?? 0) - 1;
    this.applySelection(false);
    this.refreshEdits();
    this.report.show();
    if (onBlock) this.timeline?.focusSelected();
    else if (focusId) {
      const el = this.win.document.getElementById(focusId);
      if (el) el.focus({ preventScroll: true });
      else if (this.selected >= 0) this.timeline?.focusSelected();
    }
  }

  /** Recompute validation, the diff and the reading figures, and update rows and buttons (no re-render: focus stays). */
  refreshEdits(): void {
    const act = this.actions();
    this.store.recompute(this.ctx?.asset.duration ?? null);
    this.segments.refresh(act);
    this.toolbar.refresh(act);
    this.speakers.refresh(act.edit);
  }

  /** Refresh at most once per frame (while dragging). */
  queueRefresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    requestAnimationFrame(() => {
      this.refreshQueued = false;
      this.refreshEdits();
    });
  }

  // ------------------------------------------------------------------ selection and playhead

  select(i: number, o: SelectOptions = {}): void {
    const s = this.store.draft?.segments[i];
    if (!s) return;
    this.selected = i;
    this.applySelection(false);
    if (o.seek !== undefined) this.player?.seek(o.seek === 'start' ? s.start : o.seek);
    if (o.scroll === 'row' || o.scroll === 'both') this.rows[i]?.tr.scrollIntoView({ block: 'nearest' });
    if (o.scroll === 'block' || o.scroll === 'both') this.timeline?.reveal(i);
  }

  applySelection(scroll: boolean): void {
    this.segments.showSelection(this.selected);
    this.timeline?.setSelected(this.selected);
    if (scroll && this.selected >= 0) this.rows[this.selected]?.tr.scrollIntoView({ block: 'nearest' });
  }

  private setPlayhead(t: number, follow: boolean): void {
    this.playhead = t;
    this.timeline?.setPlayhead(t, follow && Boolean(this.player?.playing));
    const label = this.main.querySelector('#playhead-time');
    if (label) setText(label, `Playhead ${formatTime(t)}`);
    if (!this.store.draft) return;
    this.segments.showPlaying(segmentAt(this.store.draft.segments, t));
  }

  /** Visible rows (the flag filter hides the others), for moving between segments. */
  private step(dir: -1 | 1): void {
    const segs = this.store.draft?.segments;
    if (!segs?.length) return;
    const n = segs.length;
    let i = this.selected;
    if (i < 0) i = dir > 0 ? -1 : n;
    const onBlock = focusKind(this.win.document.activeElement) === 'block';
    for (let j = i + dir; j >= 0 && j < n; j += dir) {
      if (!this.rows[j]?.tr.hidden) {
        this.select(j, { seek: 'start', scroll: 'both' });
        if (onBlock) this.timeline?.focusSelected();
        return;
      }
    }
  }

  play(track: Track, i: number): void {
    const s = this.store.draft?.segments[i];
    if (!s || !this.player?.has(track)) return;
    this.select(i, { scroll: 'block' });
    this.player.playSpan(track, s.start, s.end);
  }

  // ------------------------------------------------------------------ actions

  private async save(): Promise<void> {
    const store = this.store;
    if (!store.draft || !store.base || this.busy) return;
    if (store.blocked()) {
      this.showError('Fix the problems marked in the segments before saving.');
      this.rows.flatMap((r) => [r.start, r.end, r.text]).find((el) => el.getAttribute('aria-invalid') === 'true')?.focus();
      return;
    }
    if (!store.dirty()) return this.say('Nothing to save.');
    await this.run(async (c) => {
      const out = await store.save(c);
      this.busy = false;
      this.rebuild();
      if (out.kind === 'saved') return this.say(`Saved ${out.count} change${out.count === 1 ? '' : 's'}.`);
      this.showError(
        `Someone else saved this script while you were editing, so it was reloaded. ` +
          (out.applied ? `${out.applied} of your changes were applied to their version and are not saved yet: review and save again. ` : 'None of your changes needed to be applied again. ') +
          (out.conflicts.length ? `Their edits won where you both changed the same thing (${out.conflicts.join(', ')}).` : ''),
      );
    });
  }

  private forgetKey(): void {
    this.win.sessionStorage.removeItem(KEY_STORAGE);
    this.poll.stop();
    this.client = undefined;
    this.ctx = undefined;
    this.store.forget();
    this.timeline = undefined;
    this.player = undefined;
    fill(byId('meta'));
    this.keyForm();
    this.say('The API key was removed from this tab.');
  }

  /** Run an action with the buttons disabled; API errors are shown with their detail. */
  async run(fn: (c: StudioClient) => Promise<void>, lock = true): Promise<void> {
    if (!this.client) return;
    this.clearMessages();
    if (lock) {
      this.busy = true;
      this.refreshEdits();
    }
    try {
      await fn(this.client);
    } catch (e) {
      this.showError(messageOf(e));
      // A refused transition usually means the status moved under us: show the current one.
      if (e instanceof ApiError && (e.status === 400 || e.status === 403 || e.status === 404) && this.ctx) await this.poll.refreshStatus();
    } finally {
      if (lock) {
        this.busy = false;
        this.refreshEdits();
      }
    }
  }

  // ------------------------------------------------------------------ messages

  say(text: string): void {
    fill(this.notice, text);
  }

  showError(text: string): void {
    fill(this.error, h('p', {}, text));
  }

  clearMessages(): void {
    fill(this.notice);
    fill(this.error);
  }
}
