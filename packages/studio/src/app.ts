/**
 * The studio page: renders one version (header, players, timeline, segment table), keeps the
 * edited copy of the script next to the one the server last gave (with undo/redo), and runs the
 * actions (save with If-Match, generate, revise, SRT download, status polling) through
 * StudioClient. What a status allows is the API's decision; the page only enables the buttons
 * that match the status.
 */
import type { GenerateMode, ScriptSegment, SpeakerVoice, SrtLocality, SrtProfileName, VersionScript } from '@dub/core';
import { ApiError, linkCredential, StudioClient, type LibraryVoiceView, type StudioCredential } from './api-client.js';
import { byId, fill, h } from './dom.js';
import { GlossaryPanel } from './glossary-panel.js';
import { EditHistory } from './history.js';
import { segmentActions } from './hooks.js';
import { Player, type Track } from './player.js';
import { dirOf, readingStats, READING_LIMITS } from './reading.js';
import { reportIndex, segmentFigures, summaryText, type QualityReportView } from './report.js';
import { licenceWarningText } from './licences.js';
import { srtNotesText } from './srt-notes.js';
import { diffScript, diffSpeakers, fieldLabel, hasErrors, rebaseScript, rebaseSpeakers, segmentAt, speakerStats, validateSegments, type EditableField, type ScriptDiff, type ScriptIssue } from './script-edit.js';
import { showLineAudio } from './redub.js';
import { freshId, mergeWithNext, placeEdge, splitSegment, edgeLimits } from './segment-ops.js';
import { shortcutFor, SHORTCUTS, type FocusKind, type ShortcutAction } from './shortcuts.js';
import { pollDelayMs, studioActions, type StudioActions } from './status.js';
import { formatTime, parseTime } from './time.js';
import { Timeline, type Edge, type EdgeKey } from './timeline.js';
import type { StudioBoot, StudioContext, TaggedScript } from './types.js';
import { decodeWaveform, findSilences, nextBoundary, type Span, type WaveformData } from './waveform.js';

/** sessionStorage key of the API key (plain studio_url pages only; never in a URL). */
export const KEY_STORAGE = 'dub-studio-api-key';

const SRT_PROFILES: readonly SrtProfileName[] = ['regular', 'mobile', 'global_regular', 'global_mobile'];
/** A dragged edge snaps to a pause boundary within this many pixels. */
const SNAP_PX = 8;

interface Row {
  tr: HTMLTableRowElement;
  start: HTMLInputElement;
  end: HTMLInputElement;
  text: HTMLTextAreaElement;
  issues: HTMLUListElement;
  reading: HTMLParagraphElement;
  quality: HTMLDivElement;
  playSource: HTMLButtonElement;
  playDub: HTMLButtonElement;
  actions: HTMLButtonElement[];
  speaker: HTMLSelectElement | undefined;
}

const cloneSegments = (s: readonly ScriptSegment[]): ScriptSegment[] => structuredClone(s as ScriptSegment[]);

export class StudioApp {
  private client: StudioClient | undefined;
  private ctx: StudioContext | undefined;
  /** The script as the server last gave it (null: the version has none yet). */
  private base: TaggedScript | null = null;
  /** The edited copy. */
  private draft: VersionScript | null = null;
  /** Time fields whose text does not parse: `${id}:${field}` -> message. */
  private readonly parseErrors = new Map<string, string>();
  private readonly history = new EditHistory<ScriptSegment[]>();
  private rows: Row[] = [];
  private tbody: HTMLTableSectionElement | undefined;
  private issues: ScriptIssue[] = [];
  private diff: ScriptDiff = { fields: [], added: [], removed: [], count: 0 };
  /** Speakers whose name or voice choice differ from the saved script. */
  private speakerDiff: string[] = [];
  /** The library voices a speaker can be given (GET /voices of the version). */
  private libraryVoices: LibraryVoiceView[] | undefined;
  private selected = -1;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private pollSince = 0;
  private busy = false;
  private player: Player | undefined;
  private timeline: Timeline | undefined;
  private waveform: WaveformData | undefined;
  private waveformLoading: Promise<void> | undefined;
  private silences: Span[] = [];
  private report: QualityReportView | undefined;
  private reportError = '';
  /** The Glossary panel (glossary-panel.ts), made once the client exists. */
  private glossary: GlossaryPanel | undefined;
  private playhead = 0;
  private drag: { before: ScriptSegment[]; changed: boolean } | undefined;
  private refreshQueued = false;
  private rendered = false;
  private readonly main = byId('app');
  private readonly notice = byId('notice');
  private readonly error = byId('error');

  constructor(
    private readonly boot: StudioBoot,
    private readonly win: Window = window,
  ) {}

  start(): void {
    this.win.addEventListener('beforeunload', (e) => {
      if (this.dirty()) e.preventDefault();
    });
    this.win.addEventListener('keydown', (e) => this.onKey(e));
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

  private async reload(): Promise<void> {
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
    this.base = script;
    this.draft = script ? structuredClone(script.script) : null;
    this.parseErrors.clear();
    this.history.clear();
    this.report = undefined;
    this.reportError = '';
    this.glossary ??= new GlossaryPanel(this.client!, (m) => this.showError(m));
    this.glossary.setSegments(this.base?.script.segments ?? []);
    this.render();
    this.schedulePoll();
    this.loadWaveform();
    void this.loadReport();
    void this.loadVoices();
    void this.glossary.load();
  }

  private async loadVoices(): Promise<void> {
    if (this.libraryVoices || !this.client) return;
    try {
      this.libraryVoices = await this.client.voices();
      this.renderSpeakers();
    } catch (e) {
      this.libraryVoices = [];
      this.showError(`The library voices could not be loaded: ${messageOf(e)}`);
    }
  }

  private actions(): StudioActions {
    if (!this.ctx) return studioActions('NotReady', false);
    return studioActions(this.ctx.version.status, this.ctx.has_script && this.base !== null);
  }

  private dirty(): boolean {
    return this.diff.count > 0 || this.speakerDiff.length > 0;
  }

  /** Unsaved changes as counted for the user: one per segment edited, added or removed, and one per speaker renamed or revoiced. */
  private pendingCount(): number {
    return this.diff.count + this.speakerDiff.length;
  }

  private editable(): boolean {
    return this.actions().edit && !this.busy && this.draft !== null;
  }

  private duration(): number {
    const d = this.ctx?.asset.duration;
    if (d) return d;
    return Math.max(1, ...(this.draft?.segments.map((s) => s.end) ?? [1]));
  }

  private profile(): SrtProfileName {
    const v = this.main.querySelector<HTMLSelectElement>('#srt-profile')?.value;
    return v && (SRT_PROFILES as readonly string[]).includes(v) ? (v as SrtProfileName) : 'regular';
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

  /** The quality report of the last generation, when the API has one. */
  private async loadReport(): Promise<void> {
    if (!this.client || !this.ctx?.has_script) return;
    const versionId = this.ctx.version.version_id;
    try {
      const r = await this.client.report();
      if (this.ctx?.version.version_id !== versionId) return;
      this.report = r;
      this.reportError = '';
    } catch (e) {
      this.report = undefined;
      this.reportError = `The quality report could not be read: ${messageOf(e)}`;
    }
    this.showReport();
  }

  // ------------------------------------------------------------------ rendering

  private fatal(detail: string): void {
    this.stopPoll();
    fill(this.main, h('section', { class: 'fatal', 'aria-labelledby': 'fatal-h' }, h('h2', { id: 'fatal-h' }, 'The studio cannot open this version'), h('p', {}, detail)));
    this.showError(detail);
  }

  private keyForm(): void {
    const input = h('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'api-key-help' });
    const form = h(
      'form',
      {
        class: 'key-form',
        'aria-labelledby': 'key-h',
        on: {
          submit: (e) => {
            e.preventDefault();
            const key = input.value.trim();
            if (!key) return;
            this.win.sessionStorage.setItem(KEY_STORAGE, key);
            this.connect({ kind: 'key', key });
            this.clearMessages();
            void this.reload();
          },
        },
      },
      h('h2', { id: 'key-h' }, 'Sign in with your API key'),
      h('p', { id: 'api-key-help' }, 'This is the studio link without a signature, so it needs the API key of the organization that owns the version. The key stays in this browser tab only (sessionStorage) and is sent as an Authorization header; it never goes into a URL.'),
      h('label', { for: 'api-key' }, 'API key'),
      input,
      h('button', { type: 'submit' }, 'Open the studio'),
    );
    fill(this.main, form);
    fill(byId('title'), 'Studio');
    input.focus();
  }

  private render(): void {
    const ctx = this.ctx!;
    const v = ctx.version;
    const a = ctx.asset;
    const act = this.actions();
    const view = this.timeline?.view();
    this.win.document.title = `${v.name} - ${a.name} - Studio`;
    const licenceWarning = licenceWarningText(v.engines);
    // what reading a source or reference SRT normalised: the script's records (before a generation too)
    const srtNotes = srtNotesText(this.base?.script.engines ?? v.engines);
    fill(byId('title'), `${a.name}: ${v.name}`);
    fill(
      byId('meta'),
      h('span', {}, `${a.locale} \u2192 ${v.locale}`),
      h('span', { class: `status status-${v.status}`, id: 'status', 'data-status': v.status }, v.status),
      h('span', {}, h('code', {}, v.version_id)),
      ctx.access === 'link' && ctx.link_expires_at ? h('span', {}, `Link valid until ${new Date(ctx.link_expires_at).toLocaleString()}`) : null,
      ctx.access === 'key' ? h('button', { type: 'button', class: 'link-button', on: { click: () => this.forgetKey() } }, 'Forget API key') : null,
      h('span', { id: 'report-summary', class: 'report-summary' }),
      // weights not cleared for commercial use made this dub: say which (the API's Version engines)
      licenceWarning ? h('span', { id: 'licence-warning', class: 'licence-warning', role: 'note' }, licenceWarning) : null,
      srtNotes ? h('span', { id: 'srt-notes', class: 'srt-notes', role: 'note' }, srtNotes) : null,
    );

    const reason = act.readOnlyReason + (v.status === 'Failed' && v.error ? ` Error ${v.error.error_code}: ${v.error.detail}` : '');
    this.timeline = this.draft ? this.makeTimeline(act.edit) : undefined;
    fill(
      this.main,
      h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Version actions' }, ...this.toolbar(act)),
      reason ? h('p', { id: 'readonly-note', class: 'readonly-note', role: 'note' }, reason) : null,
      h('div', { class: 'workspace' }, h('section', { class: 'player-pane', 'aria-label': 'Players and speakers' }, ...this.media()), this.timeline?.el ?? null, this.segmentsSection(act, Boolean(reason))),
      this.shortcutsDialog(),
    );
    // Nothing here reads the layout: the timeline takes its width (and its zoom) from a
    // ResizeObserver, after the first layout, so the page is laid out once for its first frame.
    if (this.timeline && this.draft) {
      this.timeline.setSegments(this.draft.segments, this.draft.speakers);
      if (view) this.timeline.restoreViewLater(view);
      if (this.waveform) this.timeline.setWaveform(this.waveform, this.silences);
    }
    this.buildRows();
    if (this.selected >= (this.draft?.segments.length ?? 0)) this.selected = -1;
    this.renderSpeakers();
    this.applySelection(false);
    this.refreshEdits();
    this.showReport();
    this.setPlayhead(this.player?.time ?? this.playhead, false);
    if (!this.rendered) {
      this.rendered = true;
      this.win.document.documentElement.dataset.studioRendered = '1';
      performance.mark('dub-studio-rendered');
      // the frame after the one that showed it (the benchmark's "first render")
      requestAnimationFrame(() => requestAnimationFrame(() => performance.mark('dub-studio-first-frame')));
    }
  }

  private toolbar(act: StudioActions): Node[] {
    const mode = h('select', { id: 'generate-mode', disabled: !act.generate }, h('option', { value: 'no_lips' }, 'without lips'), h('option', { value: 'with_lips' }, 'with lips'));
    const locality = h('select', { id: 'srt-locality' }, h('option', { value: 'target' }, 'target'), h('option', { value: 'source' }, 'source'));
    const profile = h('select', { id: 'srt-profile', 'aria-describedby': 'srt-profile-help', on: { change: () => this.refreshEdits() } }, ...SRT_PROFILES.map((p) => h('option', { value: p }, p)));
    return [
      h('div', { class: 'group' },
        h('button', { type: 'button', id: 'save', disabled: true, 'aria-keyshortcuts': 'Control+S', on: { click: () => void this.save() } }, 'Save'),
        h('button', { type: 'button', id: 'discard', disabled: true, on: { click: () => this.discard() } }, 'Discard'),
        h('button', { type: 'button', id: 'undo', disabled: true, 'aria-keyshortcuts': 'Control+Z', on: { click: () => this.undo() } }, 'Undo'),
        h('button', { type: 'button', id: 'redo', disabled: true, 'aria-keyshortcuts': 'Control+Shift+Z', on: { click: () => this.redo() } }, 'Redo'),
        h('span', { id: 'dirty', class: 'dirty', 'aria-live': 'polite' }),
      ),
      h('div', { class: 'group' },
        h('label', { for: 'generate-mode' }, 'Generate'),
        mode,
        h('button', { type: 'button', id: 'generate', disabled: !act.generate, on: { click: () => void this.generate(mode.value as GenerateMode) } }, 'Generate'),
        h('button', { type: 'button', id: 'revise', disabled: !act.revise, on: { click: () => void this.revise() } }, 'Revise'),
      ),
      h('div', { class: 'group' },
        h('label', { for: 'srt-locality' }, 'SRT'),
        locality,
        h('label', { for: 'srt-profile', class: 'visually-hidden' }, 'SRT profile (also the reading-speed limit of the lines)'),
        profile,
        h('span', { id: 'srt-profile-help', class: 'visually-hidden' }, 'The line lengths and reading speeds shown in the segments are checked against this profile.'),
        h('button', { type: 'button', id: 'download-srt', on: { click: () => void this.downloadSrt(locality.value as SrtLocality, profile.value as SrtProfileName) } }, 'Download SRT'),
      ),
      h('div', { class: 'group' }, h('button', { type: 'button', id: 'shortcuts', 'aria-keyshortcuts': 'Shift+?', on: { click: () => this.showShortcuts() } }, 'Keyboard shortcuts')),
    ];
  }

  private media(): Node[] {
    const { asset: a, version: v } = this.ctx!;
    const hasDub = v.status === 'Completed' && Boolean(v.result_url);
    let source: HTMLVideoElement | undefined;
    let dub: HTMLVideoElement | undefined;
    const shown: Track = this.player?.shown === 'dub' && hasDub ? 'dub' : 'source';
    const tab = (track: Track, text: string, enabled: boolean) =>
      h('button', {
        type: 'button', role: 'tab', id: `tab-${track}`, 'aria-controls': `panel-${track}`, 'aria-selected': String(track === shown), tabindex: track === shown ? '0' : '-1', disabled: !enabled,
        on: {
          click: () => this.player?.show(track),
          keydown: (e) => {
            const k = (e as KeyboardEvent).key;
            if (k === 'ArrowLeft' || k === 'ArrowRight') {
              e.preventDefault();
              const other = track === 'source' ? 'dub' : 'source';
              if (this.player?.has(other)) {
                this.player.show(other);
                byId(`tab-${other}`).focus();
              }
            }
          },
        },
      }, text);
    const sourcePanel = h('div', { id: 'panel-source', role: 'tabpanel', 'aria-labelledby': 'tab-source', hidden: shown !== 'source' });
    if (a.source_video_url) {
      source = h('video', { id: 'source-video', controls: true, preload: 'metadata', src: a.source_video_url, poster: a.thumbnail_url ?? undefined, 'aria-label': 'Source video' });
      sourcePanel.append(source);
    } else sourcePanel.append(h('p', {}, 'The source video is not available yet.'));
    const dubPanel = h('div', { id: 'panel-dub', role: 'tabpanel', 'aria-labelledby': 'tab-dub', hidden: shown !== 'dub' });
    if (hasDub) {
      dub = h('video', { id: 'result-video', controls: true, preload: 'metadata', src: v.result_url!, 'aria-label': 'Dubbed result' });
      dubPanel.append(
        dub,
        h('p', { class: 'small' },
          h('a', { href: v.result_url!, download: '' }, 'Download video'),
          ' \u00b7 ',
          v.result_audio_url ? h('a', { href: v.result_audio_url, download: '' }, 'Download audio') : null,
          v.result_generated_at ? ` \u00b7 generated ${new Date(v.result_generated_at).toLocaleString()}` : null,
        ),
      );
    }
    const dubNote = hasDub ? '' : v.status === 'Generating' ? 'The dub is being generated\u2026' : 'Not generated yet: Play dub needs a generated result (generate the version; revising it removes the result).';
    this.player = new Player({
      source,
      dub,
      onTime: (t) => this.setPlayhead(t, true),
      onTrack: (track) => {
        for (const t of ['source', 'dub'] as const) {
          const b = this.main.querySelector<HTMLButtonElement>(`#tab-${t}`);
          b?.setAttribute('aria-selected', String(t === track));
          if (b) b.tabIndex = t === track ? 0 : -1;
          const p = this.main.querySelector<HTMLElement>(`#panel-${t}`);
          if (p) p.hidden = t !== track;
        }
      },
      onError: (m) => this.showError(m),
    });
    const out: Node[] = [
      h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Player' }, tab('source', 'Source', Boolean(source)), tab('dub', 'Dubbed', hasDub)),
      sourcePanel,
      dubPanel,
      h('p', { class: 'small playhead-line' }, h('span', { id: 'playhead-time' }, `Playhead ${formatTime(0)}`), a.duration !== null ? ` of ${formatTime(a.duration)}` : null),
    ];
    if (dubNote) out.push(h('p', { class: 'small', id: 'dub-note' }, dubNote));
    out.push(h('h2', { id: 'speakers-h' }, 'Speakers'));
    if (this.draft) {
      out.push(
        h('ul', { id: 'speakers', class: 'speakers', 'aria-labelledby': 'speakers-h' }),
        h('p', { class: 'small' }, 'Speaker labels come from speaker detection; a name saved for a speaker in the script is shown with its label.'),
      );
    } else out.push(h('p', { class: 'small' }, 'Known once the version is prepared.'));
    if (this.glossary) out.push(this.glossary.el);
    return out;
  }

  private makeTimeline(editable: boolean): Timeline {
    return new Timeline(this.duration(), editable, dirOf(this.draft!.target_locale), {
      select: (i, at) => this.select(i, { seek: at ?? 'start', scroll: 'row' }),
      seek: (t) => this.player?.seek(t) ?? this.setPlayhead(t, false),
      drag: (i, edge, t, phase, snap) => this.onDrag(i, edge, t, phase, snap),
      edgeKey: (i, edge, key) => this.onEdgeKey(i, edge, key),
    });
  }

  private shortcutsDialog(): HTMLDialogElement {
    return h(
      'dialog',
      { id: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-h' },
      h('h2', { id: 'shortcuts-h' }, 'Keyboard shortcuts'),
      h('p', { class: 'small' }, 'Outside text fields. In a text field, Esc goes back to the timeline; Ctrl/\u2318 shortcuts work everywhere.'),
      h('table', { class: 'shortcut-table' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Keys'), h('th', { scope: 'col' }, 'What they do'))), h('tbody', {}, ...SHORTCUTS.map((s) => h('tr', {}, h('th', { scope: 'row' }, h('kbd', {}, s.keys)), h('td', {}, s.does))))),
      h('form', { method: 'dialog' }, h('button', { type: 'submit', id: 'shortcuts-close' }, 'Close')),
    );
  }

  private segmentsSection(act: StudioActions, hasNote: boolean): HTMLElement {
    const section = h('section', { id: 'segments', class: 'segments', 'aria-labelledby': 'segments-h', tabindex: '-1' });
    const script = this.draft;
    this.rows = [];
    this.tbody = undefined;
    if (!script) {
      section.append(h('h2', { id: 'segments-h' }, 'Segments'), h('p', {}, 'The script is not ready yet.'));
      return section;
    }
    const ro = !act.edit;
    const onlyFlagged = h('input', { type: 'checkbox', id: 'only-flagged', disabled: true, on: { change: () => this.applyFilter() } });
    this.tbody = h('tbody');
    this.tbody.addEventListener('click', (e) => {
      const t = e.target as HTMLElement;
      if (t.closest('button, input, textarea, select, a, label')) return;
      const tr = t.closest('tr');
      const i = this.rows.findIndex((r) => r.tr === tr);
      if (i >= 0) this.select(i, { scroll: 'block' });
    });
    this.tbody.addEventListener('focusin', (e) => {
      const tr = (e.target as HTMLElement).closest('tr');
      const i = this.rows.findIndex((r) => r.tr === tr);
      if (i >= 0 && i !== this.selected) this.select(i, { scroll: 'block' });
    });
    const tdir = dirOf(script.target_locale);
    const table = h(
      'table',
      { class: 'segment-table', 'aria-describedby': hasNote ? 'readonly-note' : undefined },
      h('caption', { class: 'visually-hidden' }, `Segments: ${script.source_locale} source and ${script.target_locale} target text${ro ? ' (read-only)' : ''}`),
      h('colgroup', {}, ...['num', 'time', 'speaker', 'source', 'target', 'quality'].map((c) => h('col', { class: `col-${c}` }))),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Speaker'), h('th', { scope: 'col' }, `Source (${script.source_locale})`), h('th', { scope: 'col', dir: tdir }, `Target (${script.target_locale})`), h('th', { scope: 'col' }, 'Quality'))),
      this.tbody,
    );
    section.append(
      h('div', { class: 'segments-head' },
        h('h2', { id: 'segments-h' }, `Segments (${script.segments.length})`),
        h('div', { class: 'group', role: 'group', 'aria-label': 'Segment edits' },
          h('button', { type: 'button', id: 'split', disabled: ro, 'aria-keyshortcuts': 'S', on: { click: () => this.split() } }, 'Split at playhead'),
          h('button', { type: 'button', id: 'merge', disabled: ro, 'aria-keyshortcuts': 'M', on: { click: () => this.merge() } }, 'Merge with next'),
        ),
        h('label', { class: 'check', for: 'only-flagged' }, onlyFlagged, ' Only flagged'),
        h('p', { id: 'issues-summary', class: 'issues-summary', 'aria-live': 'polite' }),
      ),
      h('div', { class: 'table-wrap' }, table),
    );
    return section;
  }

  /** (Re)build the rows of the segment table from the draft. */
  private buildRows(): void {
    const script = this.draft;
    if (!script || !this.tbody) return;
    const ro = !this.actions().edit;
    const hasDub = Boolean(this.player?.has('dub'));
    const sdir = dirOf(script.source_locale);
    const tdir = dirOf(script.target_locale);
    this.rows = script.segments.map((s, i) => {
      const n = i + 1;
      const timeInput = (field: 'start' | 'end') => {
        const input = h('input', { type: 'text', id: `seg-${n}-${field}`, class: 'time', value: formatTime(s[field]), readonly: ro, autocomplete: 'off', spellcheck: 'false', inputmode: 'decimal', size: 9, 'aria-describedby': `seg-${n}-issues` });
        input.addEventListener('change', () => this.commitTime(i, field, input));
        input.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') this.commitTime(i, field, input);
        });
        return input;
      };
      const start = timeInput('start');
      const end = timeInput('end');
      const text = h('textarea', { id: `seg-${n}-text`, class: 'target', rows: 2, readonly: ro, lang: script.target_locale, dir: tdir, 'aria-describedby': `seg-${n}-reading seg-${n}-issues`, value: s.target_text });
      text.addEventListener('input', () => this.onText(i, text));
      text.addEventListener('blur', () => this.history.cut());
      const issues = h('ul', { id: `seg-${n}-issues`, class: 'issues' });
      const reading = h('p', { id: `seg-${n}-reading`, class: 'reading' });
      const span = `${formatTime(s.start)} to ${formatTime(s.end)}`;
      const playSource = h('button', { type: 'button', class: 'play', id: `seg-${n}-play-source`, disabled: !this.player?.has('source'), 'aria-label': `Play source of segment ${n} (${span})`, on: { click: () => this.play('source', i) } }, '\u25b6 Source');
      const playDub = h('button', { type: 'button', class: 'play', id: `seg-${n}-play-dub`, disabled: !hasDub, 'aria-label': `Play dub of segment ${n} (${span})`, 'aria-describedby': hasDub ? undefined : 'dub-note', on: { click: () => this.play('dub', i) } }, '\u25b6 Dub');
      const actions = segmentActions().map((a) => h('button', { type: 'button', class: 'play', id: `seg-${n}-${a.id}`, 'aria-label': a.label(n), on: { click: () => void this.runAction(a.id, i) } }, a.text));
      // Each cell's content is skipped by layout and paint while off screen (content-visibility: auto).
      const quality = h('div', { class: 'cv cv-quality', id: `seg-${n}-quality` });
      const speaker = ro ? undefined : this.speakerSelect(s, i, n);
      const tr = h(
        'tr',
        { id: `seg-${n}`, 'data-segment-id': s.id },
        h('th', { scope: 'row' }, String(n)),
        h('td', { class: 'times' }, h('div', { class: 'cv cv-times' },
          h('label', { for: start.id }, 'Start', h('span', { class: 'visually-hidden' }, ` of segment ${n}`)), start,
          h('label', { for: end.id }, 'End', h('span', { class: 'visually-hidden' }, ` of segment ${n}`)), end,
          h('div', { class: 'listen', role: 'group', 'aria-label': `Listen to segment ${n}` }, playSource, playDub, ...actions),
          ...segmentActions().map((a) => h('div', { id: `seg-${n}-${a.id}-out`, class: 'action-out' }, h('p', { id: `seg-${n}-${a.id}-status`, class: 'small action-status', 'aria-live': 'polite' }))),
        )),
        h('td', { class: 'speaker' }, speaker ?? s.speaker),
        h('td', { class: 'source', lang: script.source_locale, dir: sdir }, h('div', { class: 'cv cv-source' }, s.source_text)),
        h('td', { class: 'target-cell' }, h('div', { class: 'cv cv-target' }, h('label', { for: text.id, class: 'visually-hidden' }, `Target text of segment ${n}`), text, reading, issues)),
        h('td', { class: 'quality' }, quality),
      );
      return { tr, start, end, text, issues, reading, quality, playSource, playDub, actions, speaker };
    });
    this.tbody.replaceChildren(...this.rows.map((r) => r.tr));
    const head = this.main.querySelector('#segments-h');
    if (head) fill(head, `Segments (${script.segments.length})`);
  }

  /** The speakers: name (rename), voice (own, anonymized, a library voice or the version's default) and a preview of that choice. */
  private renderSpeakers(): void {
    const list = this.main.querySelector('#speakers');
    if (!list || !this.draft) return;
    const ro = !this.actions().edit;
    const draft = this.draft;
    const items = speakerStats(draft).map((st, k) => {
      const sp = draft.speakers.find((x) => x.id === st.id);
      const name = h('input', { type: 'text', id: `speaker-${k}-name`, class: 'speaker-edit speaker-name', value: sp?.name ?? '', placeholder: st.id, maxlength: 200, autocomplete: 'off', readonly: ro, disabled: ro });
      name.addEventListener('input', () => this.setSpeaker(st.id, (x) => {
        const v = name.value;
        if (v.trim()) x.name = v;
        else delete x.name;
      }));
      name.addEventListener('change', () => this.speakersChanged());
      const voice = h('select', { id: `speaker-${k}-voice`, class: 'speaker-edit speaker-voice', disabled: ro, 'aria-describedby': `speaker-${k}-voice-status` }, ...this.voiceOptions());
      const saved = voiceValue(sp?.voice);
      // a library voice the list does not have (not loaded yet, or gone): still shown as chosen
      if (![...voice.options].some((o) => o.value === saved)) voice.append(h('option', { value: saved }, `Library voice ${sp?.voice?.library_voice_id ?? ''}`));
      voice.value = saved;
      voice.addEventListener('change', () => {
        const choice = voiceOf(voice.value);
        this.setSpeaker(st.id, (x) => {
          if (choice) x.voice = choice;
          else delete x.voice;
        });
      });
      const preview = h('button', { type: 'button', id: `speaker-${k}-preview`, class: 'speaker-preview', 'aria-label': `Preview the chosen voice of speaker ${st.id}`, on: { click: () => void this.previewVoice(st.id, k, voice.value) } }, '\u25b6 Preview');
      return h(
        'li',
        { 'data-speaker': st.id, id: `speaker-${k}` },
        h('div', { class: 'speaker-head' }, h('strong', {}, sp?.name?.trim() || st.id), sp?.name?.trim() ? ` (${st.id})` : null, ` ${st.segments} segment${st.segments === 1 ? '' : 's'}, ${st.seconds.toFixed(1)} s`),
        h('div', { class: 'speaker-controls' },
          h('label', { for: name.id }, 'Name', h('span', { class: 'visually-hidden' }, ` of speaker ${st.id}`)), name,
          h('label', { for: voice.id }, 'Voice', h('span', { class: 'visually-hidden' }, ` of speaker ${st.id}`)), voice,
          preview,
        ),
        h('div', { id: `speaker-${k}-preview-out`, class: 'action-out' }, h('p', { id: `speaker-${k}-voice-status`, class: 'small action-status', 'aria-live': 'polite' })),
      );
    });
    fill(list, ...items);
    this.refreshEdits();
  }

  private voiceOptions(): HTMLOptionElement[] {
    const out = [
      h('option', { value: '' }, 'Version default'),
      h('option', { value: 'speaker' }, 'Their own voice (cloned)'),
      h('option', { value: 'anonymized' }, 'Anonymized'),
    ];
    for (const v of this.libraryVoices ?? []) out.push(h('option', { value: `library:${v.voice_id}` }, `Library: ${v.name} (${v.gender}${v.speaks_locale ? '' : `, does not speak ${this.draft?.target_locale ?? ''}`})`));
    return out;
  }

  /** Change one speaker's entry in the draft (added when the script had none for that id). */
  private setSpeaker(id: string, change: (s: { id: string; name?: string; voice?: SpeakerVoice }) => void): void {
    if (!this.draft || !this.editable()) return;
    let sp = this.draft.speakers.find((x) => x.id === id);
    if (!sp) {
      sp = { id };
      this.draft.speakers.push(sp);
    }
    change(sp);
    this.refreshEdits();
  }

  /** A rename shows in the lanes, the speaker cells and the list once the field is left. */
  private speakersChanged(): void {
    if (this.timeline && this.draft) this.timeline.setSegments(this.draft.segments, this.draft.speakers);
    for (const r of this.rows) if (r.speaker) this.fillSpeakerOptions(r.speaker);
    this.renderSpeakers();
  }

  private async previewVoice(id: string, k: number, value: string): Promise<void> {
    const status = this.main.querySelector(`#speaker-${k}-voice-status`);
    const button = this.main.querySelector<HTMLButtonElement>(`#speaker-${k}-preview`);
    button?.setAttribute('aria-busy', 'true');
    if (status) fill(status, `Rendering a preview of speaker ${id}\u2026`);
    await this.run(async (c) => {
      try {
        const line = await c.previewVoice(id, voiceOf(value) ?? null);
        showLineAudio(this.win.document, `speaker-${k}-preview-out`, `speaker-${k}-preview-audio`, `Voice preview of speaker ${id}`, line, true);
        const msg = `Preview of speaker ${id}: ${line.voiceSource || 'default'} voice (${line.engine}), ${line.duration.toFixed(1)} s.`;
        if (status) fill(status, msg);
        this.say(msg);
      } catch (e) {
        if (status) fill(status, `Preview failed: ${messageOf(e)}`);
        throw e;
      } finally {
        button?.removeAttribute('aria-busy');
      }
    });
  }

  /** A segment's speaker, as a choice among the script's speakers. */
  private speakerSelect(s: ScriptSegment, i: number, n: number): HTMLSelectElement {
    const sel = h('select', { id: `seg-${n}-speaker`, class: 'segment-speaker', 'aria-label': `Speaker of segment ${n}` });
    this.fillSpeakerOptions(sel);
    sel.value = s.speaker;
    sel.addEventListener('change', () => {
      const seg = this.draft?.segments[i];
      if (!seg || !this.editable() || seg.speaker === sel.value) return;
      this.history.record(this.snapshot);
      seg.speaker = sel.value;
      this.history.cut();
      if (this.timeline && this.draft) this.timeline.setSegments(this.draft.segments, this.draft.speakers);
      this.applySelection(false);
      this.renderSpeakers();
    });
    return sel;
  }

  private fillSpeakerOptions(sel: HTMLSelectElement): void {
    if (!this.draft) return;
    const keep = sel.value;
    const names = new Map(this.draft.speakers.filter((x) => x.name?.trim()).map((x) => [x.id, x.name!.trim()]));
    fill(sel, ...speakerStats(this.draft).map((st) => h('option', { value: st.id }, names.has(st.id) ? `${names.get(st.id)} (${st.id})` : st.id)));
    if (keep) sel.value = keep;
  }

  /** After a structural change (split, merge, undo, redo, save): rows and blocks again, focus kept where it was. */
  private rebuild(): void {
    const active = this.win.document.activeElement as HTMLElement | null;
    // a block keeps the focus as the selected block (its number may have changed); anything else by its id
    const onBlock = focusKind(active) === 'block';
    const focusId = onBlock ? undefined : active?.id;
    this.buildRows();
    this.renderSpeakers();
    if (this.timeline && this.draft) this.timeline.setSegments(this.draft.segments, this.draft.speakers);
    if (this.selected >= (this.draft?.segments.length ?? 0)) this.selected = (this.draft?.segments.length ?? 0) - 1;
    this.applySelection(false);
    this.refreshEdits();
    this.showReport();
    if (onBlock) this.timeline?.focusSelected();
    else if (focusId) {
      const el = this.win.document.getElementById(focusId);
      if (el) el.focus({ preventScroll: true });
      else if (this.selected >= 0) this.timeline?.focusSelected();
    }
  }

  /** Recompute validation, the diff and the reading figures, and update rows and buttons (no re-render: focus stays). */
  private refreshEdits(): void {
    const act = this.actions();
    if (!this.draft || !this.base) {
      this.issues = [];
      this.diff = { fields: [], added: [], removed: [], count: 0 };
      this.speakerDiff = [];
    } else {
      this.issues = validateSegments(this.draft.segments, { duration: this.ctx!.asset.duration, original: this.base.script.segments });
      this.diff = diffScript(this.base.script.segments, this.draft.segments);
      this.speakerDiff = diffSpeakers(this.base.script.speakers, this.draft.speakers);
    }
    const changed = new Set(this.diff.fields.map((c) => `${c.id}:${c.field}`));
    const added = new Set(this.diff.added.map((c) => c.id));
    const byIndex = new Map<number, ScriptIssue[]>();
    for (const x of this.issues) byIndex.set(x.index, [...(byIndex.get(x.index) ?? []), x]);
    const profile = this.profile();
    const limit = READING_LIMITS[profile].maxCharsPerSecond;
    this.rows.forEach((r, i) => {
      const seg = this.draft!.segments[i]!;
      const id = seg.id;
      const mine = byIndex.get(i) ?? [];
      const items: HTMLLIElement[] = [];
      for (const field of ['start', 'end', 'target_text'] as EditableField[]) {
        const el = field === 'start' ? r.start : field === 'end' ? r.end : r.text;
        const pe = this.parseErrors.get(`${id}:${field}`);
        const errs = mine.filter((x) => x.field === field);
        const invalid = Boolean(pe) || errs.some((x) => x.severity === 'error');
        setAttr(el, 'aria-invalid', String(invalid));
        el.classList.toggle('changed', added.has(id) || changed.has(`${id}:${field}`));
        if (pe) items.push(h('li', { class: 'error' }, `${fieldLabel(field)}: ${pe}`));
        for (const x of errs) items.push(h('li', { class: x.severity }, `${fieldLabel(field)}: ${x.message}`));
      }
      if (items.length || r.issues.childElementCount) fill(r.issues, ...items);
      r.tr.classList.toggle('changed', added.has(id) || this.diff.fields.some((c) => c.id === id));
      if (r.speaker) {
        r.speaker.classList.toggle('changed', added.has(id) || changed.has(`${id}:speaker`));
        if (r.speaker.value !== seg.speaker) r.speaker.value = seg.speaker;
        r.speaker.disabled = this.busy || !act.edit;
      }
      const st = readingStats(seg.target_text, seg.start, seg.end, profile);
      const text = st.chars === 0 ? 'No text' : `${st.chars} characters \u00b7 ${Number.isFinite(st.cps) ? st.cps.toFixed(1) : '\u221e'} characters/s${st.tooFast ? ` \u2014 faster than ${profile}'s ${limit}/s` : ` (${profile}: up to ${limit}/s)`}${st.blocks > 1 ? ` \u00b7 ${st.blocks} subtitles` : ''}`;
      setText(r.reading, text);
      r.reading.classList.toggle('over', st.tooFast);
      const span = `${formatTime(seg.start)} to ${formatTime(seg.end)}`;
      setAttr(r.playSource, 'aria-label', `Play source of segment ${i + 1} (${span})`);
      setAttr(r.playDub, 'aria-label', `Play dub of segment ${i + 1} (${span})`);
      this.refreshActions(r, i);
    });
    const errors = this.issues.filter((x) => x.severity === 'error').length + this.parseErrors.size;
    const summary = this.main.querySelector('#issues-summary');
    if (summary) setText(summary, errors ? `${errors} problem${errors === 1 ? '' : 's'} to fix before saving.` : '');
    const btn = (id: string) => this.main.querySelector<HTMLButtonElement>(`#${id}`);
    const pending = this.pendingCount();
    const save = btn('save');
    if (save) save.disabled = this.busy || !act.edit || (pending === 0 && this.parseErrors.size === 0);
    const discard = btn('discard');
    if (discard) discard.disabled = this.busy || (pending === 0 && this.parseErrors.size === 0);
    const undo = btn('undo');
    if (undo) undo.disabled = this.busy || !act.edit || !this.history.canUndo;
    const redo = btn('redo');
    if (redo) redo.disabled = this.busy || !act.edit || !this.history.canRedo;
    for (const id of ['split', 'merge']) {
      const b = btn(id);
      if (b) b.disabled = this.busy || !act.edit;
    }
    const dirty = this.main.querySelector('#dirty');
    if (dirty) setText(dirty, pending ? `${pending} unsaved change${pending === 1 ? '' : 's'}` : act.edit ? 'No unsaved changes' : '');
    const gen = btn('generate');
    if (gen) gen.disabled = this.busy || !act.generate;
    const rev = btn('revise');
    if (rev) rev.disabled = this.busy || !act.revise;
    for (const el of this.main.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>('.speaker-edit')) el.disabled = this.busy || !act.edit;
    for (const el of this.main.querySelectorAll<HTMLButtonElement>('.speaker-preview')) el.disabled = this.busy;
    for (const li of this.main.querySelectorAll<HTMLElement>('#speakers > li')) li.classList.toggle('changed', this.speakerDiff.includes(li.dataset.speaker ?? ''));
  }

  /** Refresh at most once per frame (while dragging). */
  private queueRefresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    requestAnimationFrame(() => {
      this.refreshQueued = false;
      this.refreshEdits();
    });
  }

  private refreshActions(r: Row, i: number): void {
    if (!r.actions.length || !this.client || !this.ctx || !this.draft) return;
    segmentActions().forEach((a, k) => {
      const b = r.actions[k];
      if (b) b.disabled = this.busy || !a.enabled({ segment: this.draft!.segments[i]!, index: i, version: this.ctx!.version, client: this.client!, dirty: this.dirty() });
    });
  }

  /** The report's figures in each row, the summary in the header, and the filter. */
  private showReport(): void {
    const summary = this.main.ownerDocument.getElementById('report-summary');
    const r = this.report;
    if (summary) setText(summary, r ? summaryText(r) : this.reportError);
    const only = this.main.querySelector<HTMLInputElement>('#only-flagged');
    if (only) {
      only.disabled = !r;
      if (!r) only.checked = false;
    }
    const index = reportIndex(r);
    this.rows.forEach((row, i) => {
      const seg = this.draft!.segments[i]!;
      const q = index.get(seg.id);
      row.tr.classList.toggle('flagged', Boolean(q && q.flags.length));
      if (!r || !q) {
        fill(row.quality, r ? h('span', { class: 'small' }, 'not in the report') : '\u2014');
        return;
      }
      fill(
        row.quality,
        h('ul', { class: 'figures', 'aria-label': `Quality of segment ${i + 1}${q.flags.length ? `: flagged for ${q.flags.join(', ')}` : ''}` },
          ...segmentFigures(q, r.thresholds).map((f) =>
            h('li', { class: `figure figure-${f.flag}${f.flagged ? ' flagged' : ''}`, title: f.title, 'data-flag': f.flag },
              h('span', { class: 'figure-label' }, f.label), ' ', h('span', { class: 'figure-value' }, f.value), f.flagged ? h('span', { class: 'flag-mark' }, h('span', { 'aria-hidden': 'true' }, ' \u2691'), h('span', { class: 'visually-hidden' }, ' flagged')) : null),
          ),
        ),
      );
    });
    this.applyFilter();
  }

  private flaggedIds(): Set<string> {
    return new Set((this.report?.segments ?? []).filter((s) => s.flags.length > 0).map((s) => s.id));
  }

  private applyFilter(): void {
    const only = Boolean(this.main.querySelector<HTMLInputElement>('#only-flagged')?.checked);
    const flagged = this.flaggedIds();
    this.rows.forEach((r, i) => {
      r.tr.hidden = only && !flagged.has(this.draft!.segments[i]!.id);
    });
    this.timeline?.setFlags(flagged, only);
  }

  // ------------------------------------------------------------------ selection and playhead

  private select(i: number, o: { seek?: number | 'start'; scroll?: 'row' | 'block' | 'both' } = {}): void {
    const s = this.draft?.segments[i];
    if (!s) return;
    this.selected = i;
    this.applySelection(false);
    if (o.seek !== undefined) this.player?.seek(o.seek === 'start' ? s.start : o.seek);
    if (o.scroll === 'row' || o.scroll === 'both') this.rows[i]?.tr.scrollIntoView({ block: 'nearest' });
    if (o.scroll === 'block' || o.scroll === 'both') this.timeline?.reveal(i);
  }

  private applySelection(scroll: boolean): void {
    this.rows.forEach((r, j) => {
      const on = j === this.selected;
      r.tr.classList.toggle('selected', on);
      if (on) r.tr.setAttribute('aria-current', 'true');
      else r.tr.removeAttribute('aria-current');
    });
    this.timeline?.setSelected(this.selected);
    if (scroll && this.selected >= 0) this.rows[this.selected]?.tr.scrollIntoView({ block: 'nearest' });
  }

  private setPlayhead(t: number, follow: boolean): void {
    this.playhead = t;
    this.timeline?.setPlayhead(t, follow && Boolean(this.player?.playing));
    const label = this.main.querySelector('#playhead-time');
    if (label) setText(label, `Playhead ${formatTime(t)}`);
    if (!this.draft) return;
    const i = segmentAt(this.draft.segments, t);
    this.rows.forEach((r, j) => r.tr.classList.toggle('playing', j === i));
  }

  /** Visible rows (the flag filter hides the others), for moving between segments. */
  private step(dir: -1 | 1): void {
    if (!this.draft?.segments.length) return;
    const n = this.draft.segments.length;
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

  private play(track: Track, i: number): void {
    const s = this.draft?.segments[i];
    if (!s || !this.player?.has(track)) return;
    this.select(i, { scroll: 'block' });
    this.player.playSpan(track, s.start, s.end);
  }

  // ------------------------------------------------------------------ keyboard

  private onKey(e: KeyboardEvent): void {
    if (e.defaultPrevented || e.isComposing) return;
    if (this.main.querySelector<HTMLDialogElement>('#shortcuts-dialog')?.open) return;
    const action = shortcutFor(e, focusKind(e.target));
    if (!action || !this.ctx) return;
    if (this.runShortcut(action, e)) e.preventDefault();
  }

  /** Run a shortcut; true when it was used (the key's default is then prevented). */
  private runShortcut(a: ShortcutAction, e: KeyboardEvent): boolean {
    switch (a) {
      case 'save':
        if (this.actions().edit) void this.save();
        return true;
      case 'undo':
      case 'redo':
        if (!this.editable()) return false;
        if (a === 'undo') this.undo();
        else this.redo();
        return true;
      case 'play-pause':
        this.player?.toggle();
        return true;
      case 'back':
        this.player?.back(5);
        return true;
      case 'pause':
        this.player?.pause();
        return true;
      case 'forward':
        this.player?.forward();
        return true;
      case 'previous-segment':
        this.step(-1);
        return true;
      case 'next-segment':
        this.step(1);
        return true;
      case 'seek-back':
      case 'seek-forward': {
        const d = (e.shiftKey ? 0.1 : 1) * (a === 'seek-back' ? -1 : 1);
        this.player?.seek(this.playhead + d);
        return true;
      }
      case 'split':
        this.split();
        return true;
      case 'merge':
        this.merge();
        return true;
      case 'edit-text': {
        const r = this.rows[this.selected];
        if (!r) return false;
        r.text.focus();
        return true;
      }
      case 'leave-field': {
        if (this.selected < 0) return false;
        (e.target as HTMLElement).blur();
        this.timeline?.focusSelected();
        return true;
      }
      case 'help':
        this.showShortcuts();
        return true;
    }
  }

  private showShortcuts(): void {
    const d = this.main.querySelector<HTMLDialogElement>('#shortcuts-dialog');
    if (d && !d.open) d.showModal();
  }

  // ------------------------------------------------------------------ edits

  private snapshot = (): ScriptSegment[] => cloneSegments(this.draft!.segments);

  private onText(i: number, text: HTMLTextAreaElement): void {
    if (!this.editable()) return;
    const seg = this.draft!.segments[i]!;
    if (seg.target_text === text.value) return;
    this.history.record(this.snapshot, `text:${seg.id}`);
    seg.target_text = text.value;
    this.timeline?.updateBlock(i);
    this.refreshEdits();
  }

  private commitTime(i: number, field: 'start' | 'end', input: HTMLInputElement): void {
    if (!this.draft || input.readOnly) return;
    const seg = this.draft.segments[i]!;
    const key = `${seg.id}:${field}`;
    const p = parseTime(input.value);
    if (p.ok) {
      if (seg[field] !== p.seconds) {
        this.history.record(this.snapshot);
        this.history.cut();
        seg[field] = p.seconds;
        this.timeline?.updateBlock(i);
      }
      input.value = formatTime(p.seconds);
      this.parseErrors.delete(key);
    } else this.parseErrors.set(key, p.error);
    this.refreshEdits();
  }

  /** Set one edge of segment i (already placed) and show it everywhere. */
  private setEdge(i: number, edge: Edge, v: number): void {
    const seg = this.draft!.segments[i]!;
    seg[edge] = v;
    const r = this.rows[i];
    if (r) {
      (edge === 'start' ? r.start : r.end).value = formatTime(v);
      this.parseErrors.delete(`${seg.id}:${edge}`);
    }
    this.timeline?.updateBlock(i);
  }

  private onDrag(i: number, edge: Edge, t: number, phase: 'start' | 'move' | 'end', snap: boolean): void {
    if (!this.editable()) return;
    const segs = this.draft!.segments;
    if (phase === 'start') {
      this.drag = { before: this.snapshot(), changed: false };
      this.select(i);
      return;
    }
    const d = this.drag;
    if (!d) return;
    const v = placeEdge(segs, i, edge, t, { duration: this.ctx!.asset.duration, ...(snap && this.timeline ? { silences: this.silences, snapRadius: SNAP_PX * this.timeline.secondsPerPixel } : {}) });
    if (v !== segs[i]![edge]) {
      if (!d.changed) {
        this.history.record(d.before);
        this.history.cut();
        d.changed = true;
      }
      this.setEdge(i, edge, v);
      this.queueRefresh();
    }
    if (phase === 'end') {
      this.drag = undefined;
      this.refreshEdits();
      if (d.changed) this.say(`Segment ${i + 1} ${edge} moved to ${formatTime(segs[i]![edge])}.`);
    }
  }

  private onEdgeKey(i: number, edge: Edge, key: EdgeKey): void {
    if (!this.editable()) return;
    const segs = this.draft!.segments;
    const cur = segs[i]![edge];
    const [lo, hi] = edgeLimits(segs, i, edge, this.ctx!.asset.duration);
    const target =
      key === 'dec' ? cur - 0.05
      : key === 'inc' ? cur + 0.05
      : key === 'dec-big' ? cur - 0.5
      : key === 'inc-big' ? cur + 0.5
      : key === 'min' ? lo
      : key === 'max' ? hi
      : nextBoundary(cur, edge, this.silences, key === 'prev-pause' ? -1 : 1) ?? cur;
    const v = placeEdge(segs, i, edge, target, { duration: this.ctx!.asset.duration });
    if (v === cur) return;
    this.history.record(this.snapshot, `nudge:${segs[i]!.id}:${edge}`);
    this.setEdge(i, edge, v);
    this.refreshEdits();
  }

  /** Split the selected segment (or the one under the playhead) at the playhead. */
  private split(): void {
    if (!this.editable()) return;
    const segs = this.draft!.segments;
    const t = this.playhead;
    const sel = segs[this.selected];
    const i = sel && t > sel.start && t < sel.end ? this.selected : segmentAt(segs, t);
    if (i < 0) return this.showError(`No segment is under the playhead (${formatTime(t)}): move the playhead into the segment to split.`);
    const taken = new Set([...segs.map((s) => s.id), ...(this.base?.script.segments.map((s) => s.id) ?? [])]);
    const r = splitSegment(segs, i, t, freshId(segs[i]!.id, taken));
    if (!r.ok) return this.showError(`Cannot split: ${r.reason}.`);
    this.history.record(this.snapshot);
    this.history.cut();
    this.draft!.segments = r.segments;
    this.selected = i + 1;
    this.rebuild();
    this.clearMessages();
    this.say(`Segment ${i + 1} split at ${formatTime(r.segments[i]!.end)} into segments ${i + 1} and ${i + 2}.`);
  }

  private merge(): void {
    if (!this.editable()) return;
    const i = this.selected;
    if (i < 0) return this.showError('Select a segment to merge with the next one (click its row or its block).');
    const r = mergeWithNext(this.draft!.segments, i);
    if (!r.ok) return this.showError(`Cannot merge: ${r.reason}.`);
    this.history.record(this.snapshot);
    this.history.cut();
    this.draft!.segments = r.segments;
    this.rebuild();
    this.clearMessages();
    this.say(`Segments ${i + 1} and ${i + 2} merged into segment ${i + 1}.`);
  }

  private undo(): void {
    if (!this.editable()) return;
    const prev = this.history.undo(this.snapshot());
    if (!prev) return this.say('Nothing to undo.');
    this.draft!.segments = prev;
    this.parseErrors.clear();
    this.rebuild();
    this.say('Undone.');
  }

  private redo(): void {
    if (!this.editable()) return;
    const next = this.history.redo(this.snapshot());
    if (!next) return this.say('Nothing to redo.');
    this.draft!.segments = next;
    this.parseErrors.clear();
    this.rebuild();
    this.say('Redone.');
  }

  // ------------------------------------------------------------------ actions

  private discard(): void {
    if (!this.base) return;
    this.draft = structuredClone(this.base.script);
    this.parseErrors.clear();
    this.history.clear();
    this.rebuild();
    this.say('Your unsaved changes were discarded.');
  }

  private async save(): Promise<void> {
    if (!this.draft || !this.base || this.busy) return;
    if (this.parseErrors.size || hasErrors(this.issues)) {
      this.showError('Fix the problems marked in the segments before saving.');
      this.rows.flatMap((r) => [r.start, r.end, r.text]).find((el) => el.getAttribute('aria-invalid') === 'true')?.focus();
      return;
    }
    if (!this.dirty()) return this.say('Nothing to save.');
    const count = this.pendingCount();
    await this.run(async (c) => {
      try {
        const saved = await c.saveScript(this.draft!, this.base!.etag);
        this.base = saved;
        this.draft = structuredClone(saved.script);
        this.history.clear();
        this.busy = false;
        this.rebuild();
        this.say(`Saved ${count} change${count === 1 ? '' : 's'}.`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 412) throw e;
        await this.rebaseAfterConflict(c);
      }
    });
  }

  /** 412: someone else saved. Reload their script, re-apply what does not collide, tell the user. */
  private async rebaseAfterConflict(c: StudioClient): Promise<void> {
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
    this.busy = false;
    this.rebuild();
    this.showError(
      `Someone else saved this script while you were editing, so it was reloaded. ` +
        (r.applied ? `${r.applied} of your changes were applied to their version and are not saved yet: review and save again. ` : 'None of your changes needed to be applied again. ') +
        (r.conflicts.length ? `Their edits won where you both changed the same thing (${r.conflicts.join(', ')}).` : ''),
    );
  }

  private async generate(mode: GenerateMode): Promise<void> {
    if (this.dirty() || this.parseErrors.size) return this.showError('Save or discard your changes before generating: generation uses the saved script.');
    await this.run(async (c) => {
      const v = await c.generate(mode);
      this.ctx = { ...this.ctx!, version: v };
      this.render();
      this.say(`Generation started (${mode === 'with_lips' ? 'with lips' : 'without lips'}).`);
      this.schedulePoll();
    });
  }

  private async revise(): Promise<void> {
    const status = this.ctx?.version.status;
    if (status === 'Completed' && !this.win.confirm('Revise returns the version to editing and permanently removes the generated video and audio. Continue?')) return;
    await this.run(async (c) => {
      await c.revise();
      await this.reload();
      this.say('The version is back in editing.');
    });
  }

  private async downloadSrt(locality: SrtLocality, profile: SrtProfileName): Promise<void> {
    await this.run(async (c) => {
      const { text, filename } = await c.srt(locality, profile);
      const url = URL.createObjectURL(new Blob([text], { type: 'application/x-subrip' }));
      const a = h('a', { href: url, download: filename, hidden: true });
      this.win.document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      this.say(`Downloaded ${filename}.`);
    }, false);
  }

  private async runAction(id: string, i: number): Promise<void> {
    const a = segmentActions().find((x) => x.id === id);
    const seg = this.draft?.segments[i];
    if (!a || !seg || !this.ctx) return;
    await this.run(async (c) => {
      await a.run({ segment: seg, index: i, version: this.ctx!.version, client: c, dirty: this.dirty(), reload: () => this.reload(), say: (t) => this.say(t), fail: (t) => this.showError(t) });
    });
  }

  private forgetKey(): void {
    this.win.sessionStorage.removeItem(KEY_STORAGE);
    this.stopPoll();
    this.client = undefined;
    this.ctx = undefined;
    this.base = null;
    this.draft = null;
    this.diff = { fields: [], added: [], removed: [], count: 0 };
    this.timeline = undefined;
    this.player = undefined;
    fill(byId('meta'));
    this.keyForm();
    this.say('The API key was removed from this tab.');
  }

  /** Run an action with the buttons disabled; API errors are shown with their detail. */
  private async run(fn: (c: StudioClient) => Promise<void>, lock = true): Promise<void> {
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
      if (e instanceof ApiError && (e.status === 400 || e.status === 403 || e.status === 404) && this.ctx) await this.refreshStatus();
    } finally {
      if (lock) {
        this.busy = false;
        this.refreshEdits();
      }
    }
  }

  // ------------------------------------------------------------------ polling

  private schedulePoll(): void {
    this.stopPoll();
    if (!this.ctx || !this.actions().poll) {
      this.pollSince = 0;
      return;
    }
    if (!this.pollSince) this.pollSince = Date.now();
    this.pollTimer = setTimeout(() => void this.pollOnce(), pollDelayMs(Date.now() - this.pollSince));
  }

  private stopPoll(): void {
    if (this.pollTimer !== undefined) clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }

  private async pollOnce(): Promise<void> {
    this.pollTimer = undefined;
    if (!this.client || !this.ctx) return;
    try {
      const v = await this.client.version();
      if (v.status !== this.ctx.version.status) {
        await this.reload();
        this.say(`The version is now ${v.status}.`);
        return;
      }
    } catch (e) {
      this.showError(messageOf(e));
    }
    this.schedulePoll();
  }

  private async refreshStatus(): Promise<void> {
    try {
      const v = await this.client!.version();
      if (v.status !== this.ctx!.version.status) {
        if (this.dirty()) {
          this.ctx = { ...this.ctx!, version: v };
          this.render();
          this.schedulePoll();
        } else await this.reload();
      }
    } catch {
      // the original error is already shown
    }
  }

  // ------------------------------------------------------------------ messages

  private say(text: string): void {
    fill(this.notice, text);
  }

  private showError(text: string): void {
    fill(this.error, h('p', {}, text));
  }

  private clearMessages(): void {
    fill(this.notice);
    fill(this.error);
  }
}

/** The select value of a voice choice: '' (none), 'speaker', 'anonymized', 'library:<id>'. */
function voiceValue(v: SpeakerVoice | undefined): string {
  if (!v) return '';
  if (v.source === 'library') return `library:${v.library_voice_id ?? ''}`;
  return v.source;
}

function voiceOf(value: string): SpeakerVoice | undefined {
  if (value === 'speaker') return { source: 'speaker' };
  if (value === 'anonymized') return { source: 'anonymized', anonymization: 1 };
  if (value.startsWith('library:')) return { source: 'library', library_voice_id: value.slice(8) };
  return undefined;
}

function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.status ? `${e.detail} (HTTP ${e.status})` : e.detail;
  return e instanceof Error ? e.message : String(e);
}

/** What has the focus, for the keyboard shortcuts. */
export function focusKind(target: EventTarget | null): FocusKind {
  const el = target as HTMLElement | null;
  if (!el || typeof el.tagName !== 'string') return 'page';
  if (el.classList.contains('block-body')) return 'block';
  const tag = el.tagName;
  if (el.isContentEditable || tag === 'TEXTAREA' || tag === 'SELECT') return 'text';
  if (tag === 'INPUT') return ['checkbox', 'radio', 'range', 'button', 'submit', 'reset', 'color', 'file'].includes((el as HTMLInputElement).type) ? 'control' : 'text';
  if (tag === 'BUTTON' || tag === 'A' || tag === 'VIDEO' || tag === 'AUDIO' || tag === 'SUMMARY' || tag === 'DIALOG') return 'control';
  const role = el.getAttribute('role');
  if (role === 'slider' || role === 'tab' || role === 'button') return 'control';
  return 'page';
}

function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
