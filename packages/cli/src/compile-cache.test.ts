/**
 * bin/dub.js turns on Node's compile cache before loading dub's modules: a start writes the
 * compiled code under $XDG_CACHE_HOME/dub/compile-cache (or $NODE_COMPILE_CACHE) and the next
 * start reads it; NODE_DISABLE_COMPILE_CACHE=1 (Node's switch) leaves nothing. Output unchanged.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/dub.js', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-compile-cache-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function help(env: Record<string, string>): string {
  const e: Record<string, string | undefined> = { ...process.env, ...env };
  if (!('NODE_COMPILE_CACHE' in env)) delete e.NODE_COMPILE_CACHE;
  if (!('NODE_DISABLE_COMPILE_CACHE' in env)) delete e.NODE_DISABLE_COMPILE_CACHE;
  return execFileSync(process.execPath, [BIN, '--help'], { env: e as NodeJS.ProcessEnv, encoding: 'utf8' });
}
const files = (d: string): string[] => (fs.existsSync(d) ? fs.readdirSync(d, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => f.name) : []);

describe.skipIf(typeof module.enableCompileCache !== 'function')('dub bin: compile cache', () => {
  it('keeps compiled modules under XDG_CACHE_HOME/dub/compile-cache; the output is the same with the cache read', () => {
    const xdg = path.join(dir, 'xdg');
    const first = help({ XDG_CACHE_HOME: xdg });
    const cache = path.join(xdg, 'dub', 'compile-cache');
    expect(files(cache).length).toBeGreaterThan(0);
    expect(help({ XDG_CACHE_HOME: xdg })).toBe(first);
    expect(first).toMatch(/^usage: dub/);
  }, 20_000);

  it('uses NODE_COMPILE_CACHE when set', () => {
    const xdg = path.join(dir, 'xdg2');
    const chosen = path.join(dir, 'chosen');
    help({ XDG_CACHE_HOME: xdg, NODE_COMPILE_CACHE: chosen });
    expect(files(chosen).length).toBeGreaterThan(0);
    expect(files(path.join(xdg, 'dub', 'compile-cache'))).toEqual([]);
  }, 20_000);

  it('keeps nothing with NODE_DISABLE_COMPILE_CACHE=1', () => {
    const off = path.join(dir, 'xdg3');
    help({ XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(files(path.join(off, 'dub', 'compile-cache'))).toEqual([]);
  }, 20_000);
});
