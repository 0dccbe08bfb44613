/**
 * Filling the HTML shell (dist/index.html): the API replaces its placeholders per request with
 * the title, the base URL of the page's assets, a message shown without JavaScript, and the boot
 * data as a JSON data block (never executed, so the page's CSP keeps `script-src 'self'`).
 */
import type { StudioBoot } from './types.js';

export interface ShellValues {
  title: string;
  /** URL prefix of the page's CSS and modules, ending with `/`. */
  assetBase: string;
  boot: StudioBoot;
  /** Text shown in the page before (or without) its script runs. */
  message: string;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside a `<script type="application/json">` element (no `</script>`, no `<!--`). */
export function bootJson(boot: StudioBoot): string {
  return JSON.stringify(boot).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const PLACEHOLDERS = ['%DUB_TITLE%', '%DUB_ASSETS%', '%DUB_MESSAGE%', '%DUB_BOOT%'] as const;

/** The shell with its placeholders filled; throws when the template lacks one (a broken build). */
export function renderStudioShell(template: string, v: ShellValues): string {
  for (const p of PLACEHOLDERS) if (!template.includes(p)) throw new Error(`studio shell template lacks ${p}`);
  const values: Record<(typeof PLACEHOLDERS)[number], string> = {
    '%DUB_TITLE%': escapeHtml(v.title),
    '%DUB_ASSETS%': escapeHtml(v.assetBase),
    '%DUB_MESSAGE%': escapeHtml(v.message),
    '%DUB_BOOT%': bootJson(v.boot),
  };
  return template.replace(/%DUB_(TITLE|ASSETS|MESSAGE|BOOT)%/g, (m) => values[m as keyof typeof values]);
}

/** Read the boot data back from a document (the page's first step). */
export function readBoot(doc: Pick<Document, 'getElementById'>): StudioBoot {
  const el = doc.getElementById('dub-studio-boot');
  if (!el?.textContent) throw new Error('the page has no boot data');
  return JSON.parse(el.textContent) as StudioBoot;
}
