/**
 * The page's frame around the version: the header (title, locales, status, version id, link expiry
 * or "Forget API key", the report summary, licence and SRT notes), the API-key form of plain studio
 * links, and the page shown when the version cannot be opened.
 */
import { byId, fill, h } from './dom.js';
import { licenceWarningText } from './licences.js';
import { srtNotesText } from './srt-notes.js';
import type { StudioContext, TaggedScript } from './types.js';

/** The document title and the header (#title, #meta) of a version. */
export function renderHeader(doc: Document, ctx: StudioContext, base: TaggedScript | null, forgetKey: () => void): void {
  const v = ctx.version;
  const a = ctx.asset;
  doc.title = `${v.name} - ${a.name} - Studio`;
  const licenceWarning = licenceWarningText(v.engines);
  // what reading a source or reference SRT normalised: the script's records (before a generation too)
  const srtNotes = srtNotesText(base?.script.engines ?? v.engines);
  fill(byId('title'), `${a.name}: ${v.name}`);
  fill(
    byId('meta'),
    h('span', {}, `${a.locale} \u2192 ${v.locale}`),
    h('span', { class: `status status-${v.status}`, id: 'status', 'data-status': v.status }, v.status),
    h('span', {}, h('code', {}, v.version_id)),
    ctx.access === 'link' && ctx.link_expires_at ? h('span', {}, `Link valid until ${new Date(ctx.link_expires_at).toLocaleString()}`) : null,
    ctx.access === 'key' ? h('button', { type: 'button', class: 'link-button', on: { click: forgetKey } }, 'Forget API key') : null,
    h('span', { id: 'report-summary', class: 'report-summary' }),
    // weights not cleared for commercial use made this dub: say which (the API's Version engines)
    licenceWarning ? h('span', { id: 'licence-warning', class: 'licence-warning', role: 'note' }, licenceWarning) : null,
    srtNotes ? h('span', { id: 'srt-notes', class: 'srt-notes', role: 'note' }, srtNotes) : null,
  );
}

/** The form that asks for the API key (plain studio_url pages); `submit` gets the key entered. */
export function keyForm(main: HTMLElement, submit: (key: string) => void): void {
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
          submit(key);
        },
      },
    },
    h('h2', { id: 'key-h' }, 'Sign in with your API key'),
    h('p', { id: 'api-key-help' }, 'This is the studio link without a signature, so it needs the API key of the organization that owns the version. The key stays in this browser tab only (sessionStorage) and is sent as an Authorization header; it never goes into a URL.'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('button', { type: 'submit' }, 'Open the studio'),
  );
  fill(main, form);
  fill(byId('title'), 'Studio');
  input.focus();
}

/** The page when the version cannot be opened. */
export function fatalPage(main: HTMLElement, detail: string): void {
  fill(main, h('section', { class: 'fatal', 'aria-labelledby': 'fatal-h' }, h('h2', { id: 'fatal-h' }, 'The studio cannot open this version'), h('p', {}, detail)));
}
