/**
 * The studio page: renders one version (header, players, speakers, segment table), keeps the
 * edited copy of the script next to the one the server last gave, and runs the actions (save with
 * If-Match, generate, revise, SRT download, status polling) through StudioClient. What a status
 * allows is the API's decision; the page only enables the buttons that match the status.
 */
import type { GenerateMode, SrtLocality, SrtProfileName, VersionScript } from '@dub/core';
import { ApiError, linkCredential, StudioClient, type StudioCredential } from './api-client.js';
import { byId, fill, h } from './dom.js';
import { diffSegments, fieldLabel, hasErrors, rebaseEdits, segmentAt, speakerStats, validateSegments, type EditableField, type ScriptIssue, type SegmentChange } from './script-edit.js';
import { pollDelayMs, studioActions, type StudioActions } from './status.js';
import { formatTime, parseTime } from './time.js';
import type { StudioBoot, StudioContext, TaggedScript } from './types.js';

/** sessionStorage key of the API key (plain studio_url pages only; never in a URL). */
export const KEY_STORAGE = 'dub-studio-api-key';

const SRT_PROFILES: readonly SrtProfileName[] = ['regular', 'mobile', 'global_regular', 'global_mobile'];

interface Row {
  tr: HTMLTableRowElement;
  start: HTMLInputElement;
  end: HTMLInputElement;
  text: HTMLTextAreaElement;
  issues: HTMLUListElement;
}

export class StudioApp {
  private client: StudioClient | undefined;
  private ctx: StudioContext | undefined;
  /** The script as the server last gave it (null: the version has none yet). */
  private base: TaggedScript | null = null;
  /** The edited copy. */
  private draft: VersionScript | null = null;
  /** Time fields whose text does not parse: `${id}:${field}` -> message. */
  private readonly parseErrors = new Map<string, string>();
  private rows: Row[] = [];
  private issues: ScriptIssue[] = [];
  private changes: SegmentChange[] = [];
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private pollSince = 0;
  private busy = false;
  private sourceVideo: HTMLVideoElement | undefined;
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
    this.win.addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (this.actions().edit) void this.save();
      }
    });
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
    this.render();
    this.schedulePoll();
  }

  private actions(): StudioActions {
    if (!this.ctx) return studioActions('NotReady', false);
    return studioActions(this.ctx.version.status, this.ctx.has_script && this.base !== null);
  }

  private dirty(): boolean {
    return this.changes.length > 0;
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
    this.win.document.title = `${v.name} - ${a.name} - Studio`;
    fill(byId('title'), `${a.name}: ${v.name}`);
    fill(
      byId('meta'),
      h('span', {}, `${a.locale} \u2192 ${v.locale}`),
      h('span', { class: `status status-${v.status}`, id: 'status', 'data-status': v.status }, v.status),
      h('span', {}, h('code', {}, v.version_id)),
      ctx.access === 'link' && ctx.link_expires_at ? h('span', {}, `Link valid until ${new Date(ctx.link_expires_at).toLocaleString()}`) : null,
      ctx.access === 'key' ? h('button', { type: 'button', class: 'link-button', on: { click: () => this.forgetKey() } }, 'Forget API key') : null,
    );

    const reason = act.readOnlyReason + (v.status === 'Failed' && v.error ? ` Error ${v.error.error_code}: ${v.error.detail}` : '');
    fill(
      this.main,
      h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Version actions' }, ...this.toolbar(act)),
      reason ? h('p', { id: 'readonly-note', class: 'readonly-note', role: 'note' }, reason) : null,
      h('div', { class: 'layout' }, h('aside', { class: 'media', 'aria-label': 'Media and speakers' }, ...this.media()), this.segmentsSection(act, Boolean(reason))),
    );
    this.refreshEdits();
  }

  private toolbar(act: StudioActions): Node[] {
    const mode = h('select', { id: 'generate-mode', disabled: !act.generate }, h('option', { value: 'no_lips' }, 'without lips'), h('option', { value: 'with_lips' }, 'with lips'));
    const locality = h('select', { id: 'srt-locality' }, h('option', { value: 'target' }, 'target'), h('option', { value: 'source' }, 'source'));
    const profile = h('select', { id: 'srt-profile' }, ...SRT_PROFILES.map((p) => h('option', { value: p }, p)));
    return [
      h('div', { class: 'group' },
        h('button', { type: 'button', id: 'save', disabled: true, on: { click: () => void this.save() } }, 'Save'),
        h('button', { type: 'button', id: 'discard', disabled: true, on: { click: () => this.discard() } }, 'Discard changes'),
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
        h('label', { for: 'srt-profile', class: 'visually-hidden' }, 'SRT profile'),
        profile,
        h('button', { type: 'button', id: 'download-srt', on: { click: () => void this.downloadSrt(locality.value as SrtLocality, profile.value as SrtProfileName) } }, 'Download SRT'),
      ),
    ];
  }

  private media(): Node[] {
    const { asset: a, version: v } = this.ctx!;
    const out: Node[] = [h('h2', { id: 'source-h' }, 'Source video')];
    if (a.source_video_url) {
      const video = h('video', { id: 'source-video', controls: true, preload: 'metadata', src: a.source_video_url, poster: a.thumbnail_url ?? undefined, 'aria-labelledby': 'source-h' });
      video.addEventListener('timeupdate', () => this.highlight(video.currentTime));
      this.sourceVideo = video;
      out.push(video);
    } else {
      this.sourceVideo = undefined;
      out.push(h('p', {}, 'The source video is not available yet.'));
    }
    if (a.duration !== null) out.push(h('p', { class: 'small' }, `Duration ${formatTime(a.duration)}`));
    out.push(h('h2', { id: 'result-h' }, 'Dubbed result'));
    if (v.status === 'Completed' && v.result_url) {
      out.push(
        h('video', { id: 'result-video', controls: true, preload: 'metadata', src: v.result_url, 'aria-labelledby': 'result-h' }),
        h('p', { class: 'small' },
          h('a', { href: v.result_url, download: '' }, 'Download video'),
          ' \u00b7 ',
          v.result_audio_url ? h('a', { href: v.result_audio_url, download: '' }, 'Download audio') : null,
          v.result_generated_at ? ` \u00b7 generated ${new Date(v.result_generated_at).toLocaleString()}` : null,
        ),
      );
    } else out.push(h('p', { class: 'small' }, v.status === 'Generating' ? 'Being generated\u2026' : 'Not generated yet.'));
    out.push(h('h2', { id: 'speakers-h' }, 'Speakers'));
    if (this.draft) {
      out.push(
        h('ul', { id: 'speakers', class: 'speakers', 'aria-labelledby': 'speakers-h' }, ...speakerStats(this.draft).map((s) => h('li', {}, h('strong', {}, s.id), ` ${s.segments} segment${s.segments === 1 ? '' : 's'}, ${s.seconds.toFixed(1)} s`))),
        h('p', { class: 'small' }, 'Speaker labels come from speaker detection; the script has no field to rename them.'),
      );
    } else out.push(h('p', { class: 'small' }, 'Known once the version is prepared.'));
    return out;
  }

  private segmentsSection(act: StudioActions, hasNote: boolean): HTMLElement {
    const section = h('section', { id: 'segments', class: 'segments', 'aria-labelledby': 'segments-h', tabindex: '-1' });
    const script = this.draft;
    this.rows = [];
    if (!script) {
      section.append(h('h2', { id: 'segments-h' }, 'Segments'), h('p', {}, 'The script is not ready yet.'));
      return section;
    }
    const ro = !act.edit;
    section.append(h('h2', { id: 'segments-h' }, `Segments (${script.segments.length})`), h('p', { id: 'issues-summary', class: 'issues-summary', 'aria-live': 'polite' }));
    const tbody = h('tbody');
    const table = h(
      'table',
      { class: 'segment-table', 'aria-describedby': hasNote ? 'readonly-note' : undefined },
      h('caption', { class: 'visually-hidden' }, `Segments: ${script.source_locale} source and ${script.target_locale} target text${ro ? ' (read-only)' : ''}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Speaker'), h('th', { scope: 'col' }, `Source (${script.source_locale})`), h('th', { scope: 'col' }, `Target (${script.target_locale})`))),
      tbody,
    );
    script.segments.forEach((s, i) => {
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
      const text = h('textarea', { id: `seg-${n}-text`, class: 'target', rows: 2, readonly: ro, lang: script.target_locale, 'aria-describedby': `seg-${n}-issues`, value: s.target_text });
      text.addEventListener('input', () => {
        this.draft!.segments[i]!.target_text = text.value;
        this.refreshEdits();
      });
      const issues = h('ul', { id: `seg-${n}-issues`, class: 'issues' });
      const play = h('button', { type: 'button', class: 'play', disabled: !this.sourceVideo, 'aria-label': `Play source from ${formatTime(s.start)} (segment ${n})`, on: { click: () => this.playFrom(i) } }, '\u25b6 Play source');
      const tr = h(
        'tr',
        { id: `seg-${n}`, 'data-segment-id': s.id },
        h('th', { scope: 'row' }, String(n)),
        h('td', { class: 'times' }, h('label', { for: start.id }, 'Start'), start, h('label', { for: end.id }, 'End'), end, play),
        h('td', { class: 'speaker' }, s.speaker),
        h('td', { class: 'source', lang: script.source_locale }, s.source_text),
        h('td', { class: 'target-cell' }, h('label', { for: text.id, class: 'visually-hidden' }, `Target text of segment ${n}`), text, issues),
      );
      tbody.append(tr);
      this.rows.push({ tr, start, end, text, issues });
    });
    section.append(table);
    return section;
  }

  /** Recompute validation and the diff, and update rows and buttons (no re-render: focus stays). */
  private refreshEdits(): void {
    const act = this.actions();
    if (!this.draft || !this.base) {
      this.issues = [];
      this.changes = [];
    } else {
      this.issues = validateSegments(this.draft.segments, { duration: this.ctx!.asset.duration, original: this.base.script.segments });
      this.changes = diffSegments(this.base.script.segments, this.draft.segments);
    }
    const changed = new Set(this.changes.map((c) => `${c.id}:${c.field}`));
    this.rows.forEach((r, i) => {
      const id = this.draft!.segments[i]!.id;
      const mine = this.issues.filter((x) => x.index === i);
      const items: HTMLLIElement[] = [];
      for (const field of ['start', 'end', 'target_text'] as EditableField[]) {
        const el = field === 'start' ? r.start : field === 'end' ? r.end : r.text;
        const pe = this.parseErrors.get(`${id}:${field}`);
        const errs = mine.filter((x) => x.field === field);
        const invalid = Boolean(pe) || errs.some((x) => x.severity === 'error');
        el.setAttribute('aria-invalid', String(invalid));
        el.classList.toggle('changed', changed.has(`${id}:${field}`));
        if (pe) items.push(h('li', { class: 'error' }, `${fieldLabel(field)}: ${pe}`));
        for (const x of errs) items.push(h('li', { class: x.severity }, `${fieldLabel(field)}: ${x.message}`));
      }
      fill(r.issues, ...items);
      r.tr.classList.toggle('changed', this.changes.some((c) => c.id === id));
    });
    const errors = this.issues.filter((x) => x.severity === 'error').length + this.parseErrors.size;
    const summary = this.main.querySelector('#issues-summary');
    if (summary) fill(summary, errors ? `${errors} problem${errors === 1 ? '' : 's'} to fix before saving.` : '');
    const save = this.main.querySelector<HTMLButtonElement>('#save');
    const discard = this.main.querySelector<HTMLButtonElement>('#discard');
    const pending = this.changes.length;
    if (save) save.disabled = this.busy || !act.edit || (pending === 0 && this.parseErrors.size === 0);
    if (discard) discard.disabled = this.busy || (pending === 0 && this.parseErrors.size === 0);
    const dirty = this.main.querySelector('#dirty');
    if (dirty) fill(dirty, pending ? `${pending} unsaved change${pending === 1 ? '' : 's'}` : act.edit ? 'No unsaved changes' : '');
    const gen = this.main.querySelector<HTMLButtonElement>('#generate');
    if (gen) gen.disabled = this.busy || !act.generate;
    const rev = this.main.querySelector<HTMLButtonElement>('#revise');
    if (rev) rev.disabled = this.busy || !act.revise;
  }

  private commitTime(i: number, field: 'start' | 'end', input: HTMLInputElement): void {
    if (!this.draft || input.readOnly) return;
    const seg = this.draft.segments[i]!;
    const key = `${seg.id}:${field}`;
    const p = parseTime(input.value);
    if (p.ok) {
      seg[field] = p.seconds;
      input.value = formatTime(p.seconds);
      this.parseErrors.delete(key);
    } else this.parseErrors.set(key, p.error);
    this.refreshEdits();
  }

  private highlight(t: number): void {
    if (!this.draft) return;
    const i = segmentAt(this.draft.segments, t);
    this.rows.forEach((r, j) => {
      r.tr.classList.toggle('playing', j === i);
      if (j === i) r.tr.setAttribute('aria-current', 'true');
      else r.tr.removeAttribute('aria-current');
    });
  }

  // ------------------------------------------------------------------ actions

  private playFrom(i: number): void {
    const v = this.sourceVideo;
    const seg = this.draft?.segments[i];
    if (!v || !seg) return;
    v.currentTime = seg.start;
    v.play().catch((e: Error) => this.showError(`The source video cannot play: ${e.message}`));
  }

  private discard(): void {
    if (!this.base) return;
    this.draft = structuredClone(this.base.script);
    this.parseErrors.clear();
    this.render();
    this.say('Your unsaved changes were discarded.');
  }

  private async save(): Promise<void> {
    if (!this.draft || !this.base || this.busy) return;
    if (this.parseErrors.size || hasErrors(this.issues)) {
      this.showError('Fix the problems marked in the segments before saving.');
      this.rows.flatMap((r) => [r.start, r.end, r.text]).find((el) => el.getAttribute('aria-invalid') === 'true')?.focus();
      return;
    }
    if (!this.changes.length) return this.say('Nothing to save.');
    const count = this.changes.length;
    await this.run(async (c) => {
      try {
        const saved = await c.saveScript(this.draft!, this.base!.etag);
        this.base = saved;
        this.draft = structuredClone(saved.script);
        this.render();
        this.say(`Saved ${count} change${count === 1 ? '' : 's'}.`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 412) throw e;
        await this.rebaseAfterConflict(c);
      }
    });
  }

  /** 412: someone else saved. Reload their script, re-apply what does not collide, tell the user. */
  private async rebaseAfterConflict(c: StudioClient): Promise<void> {
    const mine = this.changes;
    const remote = await c.script();
    const r = rebaseEdits(mine, remote.script);
    this.base = remote;
    this.draft = r.script;
    this.parseErrors.clear();
    this.render();
    const lost = r.conflicts.map((x) => `segment ${x.index + 1} ${fieldLabel(x.field)}`);
    this.showError(
      `Someone else saved this script while you were editing, so it was reloaded. ` +
        (r.applied.length ? `${r.applied.length} of your changes were applied to their version and are not saved yet: review and save again. ` : 'None of your changes needed to be applied again. ') +
        (lost.length ? `Their edits won where you both changed the same field (${lost.join(', ')}).` : ''),
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

  private forgetKey(): void {
    this.win.sessionStorage.removeItem(KEY_STORAGE);
    this.stopPoll();
    this.client = undefined;
    this.ctx = undefined;
    this.base = null;
    this.draft = null;
    this.changes = [];
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

function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.status ? `${e.detail} (HTTP ${e.status})` : e.detail;
  return e instanceof Error ? e.message : String(e);
}
