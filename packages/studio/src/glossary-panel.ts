/**
 * The studio's Glossary panel (a project extension, issue 23 item 5): the asset's glossary and
 * the version's language's, edited as rows (term, translation or "keep as is", exact case) and
 * saved with PUT /v1/versions/{id}/glossary. A studio link edits its language's list only; the
 * asset's (every language's) needs the API key. The panel also lists the script's lines whose
 * translation does not carry a glossary term (the script's per-line `glossary` records).
 * A saved glossary applies to translations made from then on, which the panel says.
 */
import type { Glossary, GlossaryEntry, ScriptSegment, VersionGlossaryBody } from '@dub/core';
import { h, fill } from './dom.js';

/** GET /v1/versions/{id}/glossary (the wire body, in @dub/core). */
export type VersionGlossaryView = VersionGlossaryBody;

export interface GlossaryRow {
  term: string;
  translation: string;
  keep: boolean;
  caseSensitive: boolean;
}

export interface GlossaryPanelClient {
  glossary(): Promise<VersionGlossaryView>;
  saveGlossary(body: { asset?: Glossary | null; language?: Glossary | null }): Promise<VersionGlossaryView>;
}

/** Rows of a glossary (one per entry). */
export function rowsOf(g: Glossary): GlossaryRow[] {
  return g.map((e) => ({ term: e.term, translation: e.translation ?? '', keep: e.keep === true, caseSensitive: e.case_sensitive === true }));
}

/**
 * The glossary of edited rows (blank rows left out), or the first problem (the API checks the
 * same rules and answers 400 naming the entry).
 */
export function glossaryOfRows(rows: readonly GlossaryRow[]): { glossary: Glossary; error?: undefined } | { glossary?: undefined; error: string } {
  const out: Glossary = [];
  for (const [i, r] of rows.entries()) {
    const term = r.term.trim();
    const translation = r.translation.trim();
    if (term === '' && translation === '') continue;
    if (term === '') return { error: `Row ${i + 1}: the term is empty.` };
    if (!r.keep && translation === '') return { error: `Row ${i + 1}: give "${term}" a translation, or tick "keep as is".` };
    const e: GlossaryEntry = { term };
    if (r.keep) e.keep = true;
    else e.translation = translation;
    if (r.caseSensitive) e.case_sensitive = true;
    out.push(e);
  }
  return { glossary: out };
}

/** The script's lines with a glossary term their translation does not carry. */
export function missedTerms(segments: readonly ScriptSegment[]): { index: number; id: string; term: string; expected: string }[] {
  const out: { index: number; id: string; term: string; expected: string }[] = [];
  segments.forEach((s, index) => {
    for (const t of s.glossary ?? []) if (!t.applied) out.push({ index, id: s.id, term: t.term, expected: t.expected });
  });
  return out;
}

export class GlossaryPanel {
  readonly el: HTMLElement;
  private view: VersionGlossaryView | undefined;
  private language: GlossaryRow[] = [];
  private asset: GlossaryRow[] = [];
  private segments: readonly ScriptSegment[] = [];
  private status = '';
  private open = false;

  constructor(
    private readonly client: GlossaryPanelClient,
    private readonly onError: (message: string) => void,
  ) {
    this.el = h('details', { id: 'glossary-panel', class: 'glossary-panel', on: { toggle: () => (this.open = (this.el as HTMLDetailsElement).open) } });
    this.render();
  }

  async load(): Promise<void> {
    try {
      this.set(await this.client.glossary());
    } catch (e) {
      this.status = `The glossary could not be read: ${(e as Error).message}`;
      this.render();
    }
  }

  /** The script's lines (their per-line glossary records). */
  setSegments(segments: readonly ScriptSegment[]): void {
    this.segments = segments;
    this.render();
  }

  private set(v: VersionGlossaryView): void {
    this.view = v;
    this.language = rowsOf(v.language);
    this.asset = rowsOf(v.asset);
    this.render();
  }

  private async save(): Promise<void> {
    const lang = glossaryOfRows(this.language);
    const asset = this.view?.can_edit_asset ? glossaryOfRows(this.asset) : glossaryOfRows([]);
    const error = lang.error ?? asset.error;
    if (error) {
      this.status = error;
      this.render();
      return this.onError(`Glossary: ${error}`);
    }
    try {
      const body: { asset?: Glossary | null; language?: Glossary | null } = { language: lang.glossary!.length ? lang.glossary! : null };
      if (this.view?.can_edit_asset) body.asset = asset.glossary!.length ? asset.glossary! : null;
      this.set(await this.client.saveGlossary(body));
      this.status = 'Glossary saved. It applies to translations made from now on (a language added, a version prepared again); this script is not translated again.';
    } catch (e) {
      this.status = `Not saved: ${(e as Error).message}`;
      this.onError(`The glossary could not be saved: ${(e as Error).message}`);
    }
    this.render();
  }

  private table(which: 'language' | 'asset', editable: boolean): HTMLElement {
    const rows = which === 'language' ? this.language : this.asset;
    const id = (i: number, f: string) => `glossary-${which}-${i}-${f}`;
    const body = rows.map((r, i) =>
      h(
        'tr',
        { 'data-row': i },
        h('td', {}, h('input', { id: id(i, 'term'), 'aria-label': `Term ${i + 1}`, value: r.term, maxlength: 100, disabled: !editable, on: { input: (e) => (r.term = (e.target as HTMLInputElement).value) } })),
        h(
          'td',
          {},
          h('input', {
            id: id(i, 'translation'),
            'aria-label': `Translation of term ${i + 1}`,
            value: r.translation,
            maxlength: 200,
            disabled: !editable || r.keep,
            on: { input: (e) => (r.translation = (e.target as HTMLInputElement).value) },
          }),
        ),
        h(
          'td',
          {},
          h('input', {
            type: 'checkbox',
            id: id(i, 'keep'),
            'aria-label': `Keep term ${i + 1} as is`,
            checked: r.keep,
            disabled: !editable,
            on: {
              change: (e) => {
                r.keep = (e.target as HTMLInputElement).checked;
                this.render();
              },
            },
          }),
        ),
        h('td', {}, h('input', { type: 'checkbox', id: id(i, 'case'), 'aria-label': `Exact case for term ${i + 1}`, checked: r.caseSensitive, disabled: !editable, on: { change: (e) => (r.caseSensitive = (e.target as HTMLInputElement).checked) } })),
        h(
          'td',
          {},
          editable
            ? h('button', { type: 'button', class: 'link-button', 'aria-label': `Remove term ${i + 1}`, on: { click: () => (rows.splice(i, 1), this.render()) } }, 'Remove')
            : null,
        ),
      ),
    );
    return h(
      'table',
      { class: 'glossary-table', id: `glossary-${which}` },
      h('thead', {}, h('tr', {}, h('th', {}, 'Term'), h('th', {}, 'Translation'), h('th', {}, 'Keep as is'), h('th', {}, 'Exact case'), h('th', {}, ''))),
      h('tbody', {}, ...body),
    );
  }

  private render(): void {
    const v = this.view;
    const count = v ? v.language.length + v.asset.length : 0;
    const missed = missedTerms(this.segments);
    const summary = h('summary', {}, `Glossary${v ? ` (${count} term${count === 1 ? '' : 's'})` : ''}`, missed.length ? h('span', { class: 'glossary-missed-count' }, ` \u2014 ${missed.length} not carried`) : null);
    if (!v) {
      fill(this.el, summary, h('p', { class: 'small', id: 'glossary-status' }, this.status || 'Loading\u2026'));
      return;
    }
    const add = (rows: GlossaryRow[], which: string) =>
      h('button', { type: 'button', id: `glossary-add-${which}`, on: { click: () => (rows.push({ term: '', translation: '', keep: false, caseSensitive: false }), this.render()) } }, 'Add term');
    fill(
      this.el,
      summary,
      h('p', { class: 'small' }, 'Terms translated one fixed way, or kept as they are (names, brands). Applied when a translation is made.'),
      h('h3', {}, `This language (${v.locale})`),
      this.table('language', true),
      add(this.language, 'language'),
      h('h3', {}, 'Asset (every language)'),
      this.table('asset', v.can_edit_asset),
      v.can_edit_asset ? add(this.asset, 'asset') : h('p', { class: 'small' }, "A studio link changes this language's terms only; the asset's need the API key."),
      h('div', {}, h('button', { type: 'button', id: 'glossary-save', on: { click: () => void this.save() } }, 'Save glossary')),
      h('p', { class: 'small', id: 'glossary-status', role: 'status' }, this.status),
      missed.length
        ? h(
            'ul',
            { id: 'glossary-missed', class: 'small' },
            ...missed.map((m) => h('li', {}, `Line ${m.index + 1}: "${m.term}" should read "${m.expected}"`)),
          )
        : null,
    );
    (this.el as HTMLDetailsElement).open = this.open;
  }
}
