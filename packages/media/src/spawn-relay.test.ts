import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineUnavailableError, ProcessError, TimeoutError } from '@dub/core';
import { runProcess } from './process.js';
import { relaySpawn, spawnRelayOn } from './spawn-relay.js';

const saved = process.env.DUB_SPAWN_RELAY;
afterEach(() => {
  if (saved === undefined) delete process.env.DUB_SPAWN_RELAY;
  else process.env.DUB_SPAWN_RELAY = saved;
});
const both = async <T>(fn: () => Promise<T>): Promise<{ relayed: T; direct: T }> => {
  process.env.DUB_SPAWN_RELAY = '1';
  const relayed = await fn();
  process.env.DUB_SPAWN_RELAY = '0';
  const direct = await fn();
  return { relayed, direct };
};
const parentOf = (env: string) => async () => {
  process.env.DUB_SPAWN_RELAY = env;
  return Number((await runProcess('sh', ['-c', 'echo $PPID'])).stdout.toString());
};

describe('children started by the spawn helper', () => {
  it('are started by the helper, not by this process', async () => {
    expect(await parentOf('0')()).toBe(process.pid);
    expect(await parentOf('1')()).not.toBe(process.pid);
    process.env.DUB_SPAWN_RELAY = '1';
    const child = relaySpawn('true', [], { stdout: false });
    expect(child).toBeDefined();
    await new Promise((r) => child!.on('close', r));
    expect(child!.exitCode).toBe(0);
  });
  it('give the same stdout, stderr lines, exit codes, cwd and environment as a direct spawn', async () => {
    const script = 'printf "a\\nb\\n"; head -c 300000 /dev/zero | tr "\\0" x; echo "$FOO $(pwd)" >&2; echo oops >&2; exit 3';
    const { relayed, direct } = await both(async () => {
      const lines: string[] = [];
      const r = await runProcess('sh', ['-c', script], { okExitCodes: [3], cwd: os.tmpdir(), env: { ...process.env, FOO: 'bar' }, onStderrLine: (l) => lines.push(l) });
      return { code: r.exitCode, out: r.stdout.toString(), tail: r.stderrTail, lines };
    });
    expect(relayed).toEqual(direct);
    expect(relayed.out.length).toBe(4 + 300000);
    const fed = await both(async () => (await runProcess('sh', ['-c', 'tr a-z A-Z; echo $PPID >&2'], { input: 'héllo\n' })).stdout.toString());
    expect(fed).toEqual({ relayed: 'HéLLO\n', direct: 'HéLLO\n' });
    expect(relayed.lines).toEqual([`bar ${os.tmpdir()}`, 'oops']);
  });
  it('fail as a direct spawn does: a missing command, a failing exit, a timeout killing the group', async () => {
    const { relayed, direct } = await both(async () => {
      const missing = await runProcess('dub-no-such-command', []).catch((e: Error) => e);
      const failing = await runProcess('sh', ['-c', 'echo broken >&2; exit 2']).catch((e: Error) => e);
      const t0 = Date.now();
      const slow = await runProcess('sh', ['-c', 'sleep 5 & sleep 5; wait'], { timeoutMs: 200 }).catch((e: Error) => e);
      return { missing, failing, slow, fast: Date.now() - t0 < 3000 };
    });
    for (const r of [relayed, direct]) {
      expect(r.missing).toBeInstanceOf(EngineUnavailableError);
      expect(r.failing).toBeInstanceOf(ProcessError);
      expect((r.failing as Error).message).toMatch(/exited with code 2: broken/);
      expect(r.slow).toBeInstanceOf(TimeoutError);
      expect(r.fast).toBe(true);
    }
  });
  it('an abort right after the start, before the helper sent the pid, still kills the group', async () => {
    const { relayed, direct } = await both(async () => {
      const ac = new AbortController();
      const t0 = Date.now();
      const run = runProcess('sh', ['-c', 'sleep 5 & sleep 5; wait'], { signal: ac.signal }).catch((e: Error) => e);
      ac.abort();
      const r = await run;
      return { failed: r instanceof Error, fast: Date.now() - t0 < 3000 };
    });
    expect(relayed).toEqual({ failed: true, fast: true });
    expect(direct).toEqual({ failed: true, fast: true });
  });
  it('DUB_SPAWN_RELAY turns it off, and refuses what it does not know', () => {
    expect(spawnRelayOn({})).toBe(true);
    expect(spawnRelayOn({ DUB_SPAWN_RELAY: 'off' })).toBe(false);
    expect(() => spawnRelayOn({ DUB_SPAWN_RELAY: 'sometimes' })).toThrow(/1\/on or 0\/off/);
    process.env.DUB_SPAWN_RELAY = '0';
    expect(relaySpawn('true', [], { stdout: false })).toBeUndefined();
  });
});
