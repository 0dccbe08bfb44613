/**
 * `dub` started as users start it (the bin's shebang, not `node bin/dub.js`) runs node with
 * glibc's MALLOC_MMAP_THRESHOLD_=1048576 unless the variable is already set, and the processes it
 * starts do not inherit it (see packages/cli/bin/dub.js; measured in bench/separation-fast.mjs and
 * bench/e2e.mjs). Read from /proc: Linux only.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DUB, freePort, waitFor } from './e2e-helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-malloc-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Start `dub serve` through the bin's shebang and read the node process's initial environment from /proc (what glibc read at start). */
async function environOfServe(extra: Record<string, string>): Promise<Record<string, string>> {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DUB_DATA_DIR: path.join(dir, String(port)), DUB_LOG_LEVEL: 'warn', ...extra };
  delete env.MALLOC_MMAP_THRESHOLD_;
  Object.assign(env, extra);
  const child = spawn(DUB, ['serve', '--port', String(port)], { env, stdio: ['ignore', 'ignore', 'ignore'] });
  try {
    await waitFor('dub serve /healthz', async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok ? true : undefined), 110_000);
    const raw = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8');
    const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    expect(path.basename(cmdline[0]!)).toMatch(/^node/); // sh exec'd node: the pid is node's
    return Object.fromEntries(raw.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

describe.skipIf(process.platform !== 'linux')('dub bin: allocator setting', () => {
  it('starts node with MALLOC_MMAP_THRESHOLD_=1048576 when the variable is unset', async () => {
    const env = await environOfServe({});
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('1048576');
    expect(env.DUB_MALLOC_FROM_BIN).toBe('1');
  }, 150_000);

  it("keeps an operator's value", async () => {
    const env = await environOfServe({ MALLOC_MMAP_THRESHOLD_: '33554432' });
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('33554432');
    expect(env.DUB_MALLOC_FROM_BIN).toBeUndefined();
  }, 150_000);

  it('does not pass its own setting on to the processes it starts', async () => {
    // The bin's first line and its cleanup block, run in a probe that starts a shell and prints what the shell got.
    const bin = fs.readFileSync(DUB, 'utf8').split('\n');
    const probe = path.join(dir, 'probe.mjs');
    const cleanup = bin.slice(bin.findIndex((l) => l.startsWith('if (process.env.DUB_MALLOC_FROM_BIN')), bin.findIndex((l) => l.startsWith('import')));
    fs.writeFileSync(probe, [bin[0], ...cleanup, "import { execFileSync } from 'node:child_process';", "process.stdout.write(execFileSync('sh', ['-c', 'echo \"${MALLOC_MMAP_THRESHOLD_-unset}\"']).toString());"].join('\n'), { mode: 0o755 });
    const env = { ...process.env };
    delete env.MALLOC_MMAP_THRESHOLD_;
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn(probe, [], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      let s = '';
      c.stdout!.on('data', (d: Buffer) => (s += d.toString()));
      c.on('error', reject);
      c.on('exit', () => resolve(s.trim()));
    });
    expect(out).toBe('unset');
  }, 30_000);
});
