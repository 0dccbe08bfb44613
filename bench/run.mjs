#!/usr/bin/env node
// Run the benchmarks: `npm run bench` runs every bench/*.mjs in turn; `npm run bench -- wav srt`
// runs only those. Each bench measures our code and a peer in the same run and prints a table.
// Build first: `npm run build`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const all = fs.readdirSync(dir).filter((f) => f.endsWith('.mjs') && f !== 'run.mjs').map((f) => f.slice(0, -4)).sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown bench: ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  console.log(`\n## bench/${name}.mjs\n`);
  const r = spawnSync(process.execPath, [path.join(dir, `${name}.mjs`)], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.log(`\nbench ${name} exited with ${r.status}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
