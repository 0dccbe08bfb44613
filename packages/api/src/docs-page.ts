/** A self-contained HTML page rendered from the OpenAPI document (no CDN, no script). */
import { esc } from './html.js';

interface OpenApiDoc {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, { summary?: string; security?: unknown[]; parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: unknown }[]; requestBody?: { content?: Record<string, { schema?: unknown }> }; responses?: Record<string, unknown> }>>;
  components?: { schemas?: Record<string, unknown> };
}

function schemaFields(schema: unknown, doc: OpenApiDoc): string {
  let s = schema as { $ref?: string; properties?: Record<string, { description?: string; type?: string; enum?: unknown[]; anyOf?: { const?: unknown; type?: string }[] }>; required?: string[] } | undefined;
  if (s?.$ref) s = doc.components?.schemas?.[s.$ref.split('/').pop()!] as typeof s;
  if (!s?.properties) return '';
  const rows = Object.entries(s.properties).map(([name, p]) => {
    const type = p.type ?? (p.anyOf ? p.anyOf.map((x) => (x.const !== undefined ? JSON.stringify(x.const) : x.type)).join(' | ') : 'object');
    return `<tr><td><code>${esc(name)}</code></td><td>${esc(type)}</td><td>${s!.required?.includes(name) ? 'yes' : 'no'}</td><td>${esc(p.description ?? '')}</td></tr>`;
  });
  return `<table><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>${rows.join('')}</table>`;
}

export function docsPage(doc: OpenApiDoc): string {
  const sections: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? []).map((p) => `<li><code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ', required' : ''}) ${esc(p.description ?? '')}</li>`).join('');
      const body = op.requestBody?.content ? Object.entries(op.requestBody.content).map(([ct, c]) => `<p>Body <code>${esc(ct)}</code></p>${schemaFields(c.schema, doc)}`).join('') : '';
      const codes = Object.keys(op.responses ?? {}).join(', ');
      sections.push(
        `<section><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3><p>${esc(op.summary ?? '')}</p>` +
          `<p class="auth">${op.security?.length ? 'Requires Authorization: Bearer &lt;API_KEY&gt;' : 'No authentication'}</p>` +
          (params ? `<ul>${params}</ul>` : '') +
          body +
          (codes ? `<p>Responses: ${esc(codes)}</p>` : '') +
          `</section>`,
      );
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2rem}
.m{display:inline-block;min-width:4rem;font-weight:600}.get{color:#0a6}.post{color:#06c}.patch{color:#a60}.put{color:#a0a}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}.auth{color:#666;font-size:.9em}</style></head>
<body><h1>${esc(doc.info.title)} ${esc(doc.info.version)}</h1><p>${esc(doc.info.description ?? '')}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a></p>${sections.join('\n')}</body></html>`;
}
