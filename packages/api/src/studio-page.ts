/**
 * The minimal studio page of one version until the studio package replaces it: name, status,
 * the script's segments and links to the SRT downloads. Signed links keep their token on every link.
 */
import type { VersionScript } from '@dub/core';
import type { AssetRow, VersionRow } from './catalog.js';
import { esc } from './html.js';

function ts(s: number): string {
  const m = Math.floor(s / 60);
  return `${String(m).padStart(2, '0')}:${(s - m * 60).toFixed(2).padStart(5, '0')}`;
}

export function studioPage(p: { asset: AssetRow; version: VersionRow; script: VersionScript | undefined; baseUrl: string; token: string }): string {
  const { asset: a, version: v, script } = p;
  const q = (extra: string) => `?${[extra, p.token].filter(Boolean).join('&')}`;
  const srt = `${p.baseUrl}/v1/versions/${v.version_id}/srt`;
  const rows = (script?.segments ?? [])
    .map((s) => `<tr><td>${esc(ts(s.start))}</td><td>${esc(ts(s.end))}</td><td>${esc(s.speaker)}</td><td>${esc(s.source_text)}</td><td>${esc(s.target_text)}</td></tr>`)
    .join('');
  const table = script
    ? `<table><tr><th>start</th><th>end</th><th>speaker</th><th>${esc(script.source_locale)}</th><th>${esc(script.target_locale)}</th></tr>${rows}</table>`
    : `<p>The script is not ready yet (status ${esc(v.status)}).</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(v.name)} - ${esc(a.name)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top;text-align:left}</style></head>
<body><h1>${esc(a.name)}: ${esc(v.name)}</h1>
<dl><dt>Version</dt><dd><code>${esc(v.version_id)}</code></dd><dt>Language</dt><dd>${esc(a.locale)} &rarr; ${esc(v.locale)}</dd><dt>Status</dt><dd id="status">${esc(v.status)}</dd>${v.error ? `<dt>Error</dt><dd>${esc(v.error.error_code)}: ${esc(v.error.detail)}</dd>` : ''}</dl>
<p>Subtitles: <a href="${esc(srt + q('locality=target'))}">target SRT</a> &middot; <a href="${esc(srt + q('locality=source'))}">source SRT</a></p>
<h2>Segments (${script?.segments.length ?? 0})</h2>${table}</body></html>`;
}
