/**
 * The Segments panel: the segment table (times, speaker, source and target text, reading figures,
 * issues, listen and per-segment actions, quality), its head (split, merge, "Only flagged", the
 * problems summary), and the selected and playing rows.
 */
import { fill, h } from './dom.js';
import type { EditController } from './edit-controller.js';
import { segmentActions } from './hooks.js';
import type { Row, StudioHost } from './host.js';
import { setAttr, setText } from './messages.js';
import { dirOf, readingStats, READING_LIMITS } from './reading.js';
import type { ReportPanel } from './report-panel.js';
import { fieldLabel, type EditableField, type ScriptIssue } from './script-edit.js';
import type { SpeakersPanel } from './speakers-panel.js';
import type { StudioActions } from './status.js';
import { formatTime } from './time.js';

export class SegmentsPanel {
  rows: Row[] = [];
  private tbody: HTMLTableSectionElement | undefined;

  constructor(
    private readonly host: StudioHost,
    private readonly parts: { edits: EditController; speakers: SpeakersPanel; report: ReportPanel },
  ) {}

  /** The section, with an empty table body (`buildRows` fills it). */
  section(act: StudioActions, hasNote: boolean): HTMLElement {
    const section = h('section', { id: 'segments', class: 'segments', 'aria-labelledby': 'segments-h', tabindex: '-1' });
    const script = this.host.store.draft;
    this.rows = [];
    this.tbody = undefined;
    if (!script) {
      section.append(h('h2', { id: 'segments-h' }, 'Segments'), h('p', {}, 'The script is not ready yet.'));
      return section;
    }
    const ro = !act.edit;
    const onlyFlagged = h('input', { type: 'checkbox', id: 'only-flagged', disabled: true, on: { change: () => this.parts.report.applyFilter() } });
    this.tbody = h('tbody');
    this.tbody.addEventListener('click', (e) => {
      const t = e.target as HTMLElement;
      if (t.closest('button, input, textarea, select, a, label')) return;
      const tr = t.closest('tr');
      const i = this.rows.findIndex((r) => r.tr === tr);
      if (i >= 0) this.host.select(i, { scroll: 'block' });
    });
    this.tbody.addEventListener('focusin', (e) => {
      const tr = (e.target as HTMLElement).closest('tr');
      const i = this.rows.findIndex((r) => r.tr === tr);
      if (i >= 0 && i !== this.host.selected) this.host.select(i, { scroll: 'block' });
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
          h('button', { type: 'button', id: 'split', disabled: ro, 'aria-keyshortcuts': 'S', on: { click: () => this.parts.edits.split() } }, 'Split at playhead'),
          h('button', { type: 'button', id: 'merge', disabled: ro, 'aria-keyshortcuts': 'M', on: { click: () => this.parts.edits.merge() } }, 'Merge with next'),
        ),
        h('label', { class: 'check', for: 'only-flagged' }, onlyFlagged, ' Only flagged'),
        h('p', { id: 'issues-summary', class: 'issues-summary', 'aria-live': 'polite' }),
      ),
      h('div', { class: 'table-wrap' }, table),
    );
    return section;
  }

  /** (Re)build the rows of the segment table from the draft. */
  buildRows(): void {
    const { store, player, main } = this.host;
    const script = store.draft;
    if (!script || !this.tbody) return;
    const { edits, speakers } = this.parts;
    const ro = !this.host.actions().edit;
    const hasDub = Boolean(player?.has('dub'));
    const sdir = dirOf(script.source_locale);
    const tdir = dirOf(script.target_locale);
    this.rows = script.segments.map((s, i) => {
      const n = i + 1;
      const timeInput = (field: 'start' | 'end') => {
        const input = h('input', { type: 'text', id: `seg-${n}-${field}`, class: 'time', value: formatTime(s[field]), readonly: ro, autocomplete: 'off', spellcheck: 'false', inputmode: 'decimal', size: 9, 'aria-describedby': `seg-${n}-issues` });
        input.addEventListener('change', () => edits.commitTime(i, field, input));
        input.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') edits.commitTime(i, field, input);
        });
        return input;
      };
      const start = timeInput('start');
      const end = timeInput('end');
      const text = h('textarea', { id: `seg-${n}-text`, class: 'target', rows: 2, readonly: ro, lang: script.target_locale, dir: tdir, 'aria-describedby': `seg-${n}-reading seg-${n}-issues`, value: s.target_text });
      text.addEventListener('input', () => edits.onText(i, text));
      text.addEventListener('blur', () => store.history.cut());
      const issues = h('ul', { id: `seg-${n}-issues`, class: 'issues' });
      const reading = h('p', { id: `seg-${n}-reading`, class: 'reading' });
      const span = `${formatTime(s.start)} to ${formatTime(s.end)}`;
      const playSource = h('button', { type: 'button', class: 'play', id: `seg-${n}-play-source`, disabled: !player?.has('source'), 'aria-label': `Play source of segment ${n} (${span})`, on: { click: () => this.host.play('source', i) } }, '\u25b6 Source');
      const playDub = h('button', { type: 'button', class: 'play', id: `seg-${n}-play-dub`, disabled: !hasDub, 'aria-label': `Play dub of segment ${n} (${span})`, 'aria-describedby': hasDub ? undefined : 'dub-note', on: { click: () => this.host.play('dub', i) } }, '\u25b6 Dub');
      const actions = segmentActions().map((a) => h('button', { type: 'button', class: 'play', id: `seg-${n}-${a.id}`, 'aria-label': a.label(n), on: { click: () => void this.runAction(a.id, i) } }, a.text));
      // Each cell's content is skipped by layout and paint while off screen (content-visibility: auto).
      const quality = h('div', { class: 'cv cv-quality', id: `seg-${n}-quality` });
      const speaker = ro ? undefined : speakers.speakerSelect(s, i, n);
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
    const head = main.querySelector('#segments-h');
    if (head) fill(head, `Segments (${script.segments.length})`);
  }

  /** Update the rows after an edit (invalid and changed marks, issues, reading figures) and the problems summary. */
  refresh(act: StudioActions): void {
    const { store, main } = this.host;
    const changed = new Set(store.diff.fields.map((c) => `${c.id}:${c.field}`));
    const added = new Set(store.diff.added.map((c) => c.id));
    const byIndex = new Map<number, ScriptIssue[]>();
    for (const x of store.issues) byIndex.set(x.index, [...(byIndex.get(x.index) ?? []), x]);
    const profile = this.host.profile();
    const limit = READING_LIMITS[profile].maxCharsPerSecond;
    this.rows.forEach((r, i) => {
      const seg = store.draft!.segments[i]!;
      const id = seg.id;
      const mine = byIndex.get(i) ?? [];
      const items: HTMLLIElement[] = [];
      for (const field of ['start', 'end', 'target_text'] as EditableField[]) {
        const el = field === 'start' ? r.start : field === 'end' ? r.end : r.text;
        const pe = store.parseErrors.get(`${id}:${field}`);
        const errs = mine.filter((x) => x.field === field);
        const invalid = Boolean(pe) || errs.some((x) => x.severity === 'error');
        setAttr(el, 'aria-invalid', String(invalid));
        el.classList.toggle('changed', added.has(id) || changed.has(`${id}:${field}`));
        if (pe) items.push(h('li', { class: 'error' }, `${fieldLabel(field)}: ${pe}`));
        for (const x of errs) items.push(h('li', { class: x.severity }, `${fieldLabel(field)}: ${x.message}`));
      }
      if (items.length || r.issues.childElementCount) fill(r.issues, ...items);
      r.tr.classList.toggle('changed', added.has(id) || store.diff.fields.some((c) => c.id === id));
      if (r.speaker) {
        r.speaker.classList.toggle('changed', added.has(id) || changed.has(`${id}:speaker`));
        if (r.speaker.value !== seg.speaker) r.speaker.value = seg.speaker;
        r.speaker.disabled = this.host.busy || !act.edit;
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
    const errors = store.errorCount();
    const summary = main.querySelector('#issues-summary');
    if (summary) setText(summary, errors ? `${errors} problem${errors === 1 ? '' : 's'} to fix before saving.` : '');
  }

  private refreshActions(r: Row, i: number): void {
    const { client, ctx, store } = this.host;
    if (!r.actions.length || !client || !ctx || !store.draft) return;
    segmentActions().forEach((a, k) => {
      const b = r.actions[k];
      if (b) b.disabled = this.host.busy || !a.enabled({ segment: store.draft!.segments[i]!, index: i, version: ctx.version, client, dirty: store.dirty() });
    });
  }

  private async runAction(id: string, i: number): Promise<void> {
    const a = segmentActions().find((x) => x.id === id);
    const seg = this.host.store.draft?.segments[i];
    if (!a || !seg || !this.host.ctx) return;
    await this.host.run(async (c) => {
      await a.run({ segment: seg, index: i, version: this.host.ctx!.version, client: c, dirty: this.host.store.dirty(), reload: () => this.host.reload(), say: (t) => this.host.say(t), fail: (t) => this.host.showError(t) });
    });
  }

  /** Mark the selected row. */
  showSelection(selected: number): void {
    this.rows.forEach((r, j) => {
      const on = j === selected;
      r.tr.classList.toggle('selected', on);
      if (on) r.tr.setAttribute('aria-current', 'true');
      else r.tr.removeAttribute('aria-current');
    });
  }

  /** Mark the row under the playhead. */
  showPlaying(i: number): void {
    this.rows.forEach((r, j) => r.tr.classList.toggle('playing', j === i));
  }
}
