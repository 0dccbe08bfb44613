#!/usr/bin/env node
// Copies the page's static files (HTML shell, CSS) next to the compiled modules in dist/.
// tsc emits only the .ts sources; `npm run build -w @dub/studio` (and turbo's build) run this after it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STATIC = ['index.html', 'studio.css'];
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
for (const f of STATIC) fs.copyFileSync(path.join(root, 'src', f), path.join(root, 'dist', f));
