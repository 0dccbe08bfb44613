#!/usr/bin/env node
// `npm test`: build every package (turbo), run every test (vitest), and print
// "N passed, N failed[, N skipped]" as the last line. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const results = path.join(root, '.test-results.json');
const bin = (n) => path.join(root, 'node_modules', '.bin', n);

const build = spawnSync(bin('turbo'), ['run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.log('build failed');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
fs.rmSync(results, { force: true });
const args = ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${results}`, ...process.argv.slice(2)];
const run = spawnSync(bin('vitest'), args, { cwd: root, stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
let passed = 0, failed = 0, skipped = 0;
try {
  const r = JSON.parse(fs.readFileSync(results, 'utf8'));
  passed = r.numPassedTests;
  // Failed tests, plus each test file that failed without a failing test (it did not load or a hook threw).
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !f.assertionResults.some((t) => t.status === 'failed')).length;
  failed = r.numFailedTests + brokenFiles;
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // Every skipped test by name: a skip says why in its title (e.g. a recording or a server that is absent).
  for (const f of r.testResults ?? []) {
    for (const t of f.assertionResults ?? []) {
      if (t.status === 'skipped' || t.status === 'pending' || t.status === 'todo') console.log(`skipped: ${path.relative(root, f.name)} > ${t.fullName}`);
    }
  }
} catch {
  failed = Math.max(1, failed);
}
const code = run.status === 0 && failed === 0 ? 0 : 1;
if (code !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(code);
