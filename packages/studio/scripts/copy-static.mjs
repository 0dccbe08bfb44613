#!/usr/bin/env node
// Copies the page's static files (HTML shell, CSS) next to the compiled modules in dist/.
// tsc emits only the .ts sources; `npm run build -w @dub/studio` (and turbo's build) run this after it.
// The shell gets a <link rel="modulepreload"> for every module main.js imports (directly or not),
// so a first visit fetches them all at once instead of one import level after another.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
fs.mkdirSync(dist, { recursive: true });
fs.copyFileSync(path.join(root, 'src', 'studio.css'), path.join(dist, 'studio.css'));

/** The relative modules `file` imports (static imports and re-exports of compiled ES modules). */
function importsOf(file) {
  const src = fs.readFileSync(path.join(dist, file), 'utf8');
  return [...src.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'\.\/([\w.-]+\.js)'|^\s*import\s+'\.\/([\w.-]+\.js)'/gm)].map((m) => m[1] ?? m[2]);
}
const seen = new Set();
const queue = ['main.js'];
while (queue.length) {
  const f = queue.shift();
  if (seen.has(f)) continue;
  if (!fs.existsSync(path.join(dist, f))) throw new Error(`dist/${f} is missing (run tsc first)`);
  seen.add(f);
  queue.push(...importsOf(f));
}
seen.delete('main.js');
const preload = [...seen].sort().map((f) => `<link rel="modulepreload" href="%DUB_ASSETS%${f}">`).join('\n');
const shell = fs.readFileSync(path.join(root, 'src', 'index.html'), 'utf8');
const entry = '<script type="module" src="%DUB_ASSETS%main.js"></script>';
if (!shell.includes(entry)) throw new Error(`src/index.html lacks ${entry}`);
fs.writeFileSync(path.join(dist, 'index.html'), shell.replace(entry, `${entry}\n${preload}`));
