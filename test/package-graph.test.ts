/**
 * The workspace's dependency graph: only the packages that run models depend on onnxruntime-node
 * (through @dub/onnx); the subtitle and studio packages, which tools import alone, do not pull it in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './e2e-helpers.js';

const packages = new Map<string, { dir: string; deps: string[] }>();
for (const d of fs.readdirSync(path.join(ROOT, 'packages'))) {
  const file = path.join(ROOT, 'packages', d, 'package.json');
  if (!fs.existsSync(file)) continue;
  const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { name: string; dependencies?: Record<string, string> };
  packages.set(j.name, { dir: d, deps: Object.keys(j.dependencies ?? {}) });
}

/** Every package `name` depends on, directly or through workspace packages. */
function closure(name: string, seen = new Set<string>()): Set<string> {
  for (const dep of packages.get(name)?.deps ?? []) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    if (packages.has(dep)) closure(dep, seen);
  }
  return seen;
}

it('onnxruntime-node comes in through @dub/onnx only; @dub/core, @dub/srt and @dub/studio do not pull it in', () => {
  const direct = [...packages].filter(([, p]) => p.deps.includes('onnxruntime-node')).map(([n]) => n);
  expect(direct).toEqual(['@dub/onnx']);
  for (const name of ['@dub/core', '@dub/srt', '@dub/studio']) expect(closure(name).has('onnxruntime-node'), name).toBe(false);
  for (const name of ['@dub/asr', '@dub/separation', '@dub/voice', '@dub/lips', '@dub/pipeline', '@dub/worker', '@dub/api']) expect(closure(name).has('onnxruntime-node'), name).toBe(true);
  expect(closure('@dub/api').has('@dub/worker')).toBe(false);
});

it('conformance helpers come from ./testing entry points, never from the runtime ones', async () => {
  for (const pkg of ['@dub/asr', '@dub/separation', '@dub/translate', '@dub/voice', '@dub/lips']) {
    const runtime = (await import(pkg)) as Record<string, unknown>;
    expect(Object.keys(runtime).filter((k) => /CONFORMANCE|conformance/.test(k)), pkg).toEqual([]);
    const testing = (await import(`${pkg}/testing`)) as Record<string, unknown>;
    expect(Object.keys(testing).length, `${pkg}/testing`).toBeGreaterThan(0);
  }
  expect(Object.keys(await import('@dub/voice/testing'))).toContain('TTS_CONFORMANCE_CHECKS');
  expect(Object.keys(await import('@dub/lips/testing'))).toContain('LIPS_CONFORMANCE_CHECKS');
});
