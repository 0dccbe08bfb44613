#!/usr/bin/env node
// Writes test/durations.json (each test file's seconds in a full run) from the .test-results.json
// that `npm test` leaves, for the test order of vitest.config.ts: the longest files start first,
// so that the run does not end on one long file while the other worker idles.
//   npm test && node scripts/test-durations.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const from = process.argv[2] ?? path.join(root, '.test-results.json');
const r = JSON.parse(fs.readFileSync(from, 'utf8'));
const out = {};
const files = (r.testResults ?? [])
  .map((f) => [path.relative(path.dirname(path.resolve(from)), f.name).split(path.sep).join('/'), Math.round((f.endTime - f.startTime) / 100) / 10])
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
for (const [name, s] of files) out[name] = s;
fs.writeFileSync(path.join(root, 'test', 'durations.json'), JSON.stringify(out, null, 1) + '\n');
console.log(`test/durations.json: ${files.length} files, ${files.reduce((s, f) => s + f[1], 0).toFixed(0)} file-seconds`);
