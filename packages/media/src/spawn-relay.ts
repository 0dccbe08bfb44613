/**
 * Children started by a small helper process instead of by this one (issue #27, cold start).
 *
 * Starting a child forks the calling process first, and a fork copies its page tables: the
 * spawn() call blocks the thread for ~55 ms per GB resident (measured on the 2-core machine: 4 ms
 * at 0.1 GB, 33 ms at 0.5 GB, 85 ms at 1.5 GB), system time in the parent and again in the child
 * that discards the copy. A `dub run` with its models loaded (1-1.8 GB) starts ~40 children (ffmpeg,
 * ffprobe, espeak-ng, apertium): 2 s of its thread's time went to spawn(). The helper, a bare Node
 * process started once per thread on the first call (while this one is still small), forks at its
 * own ~40 MB instead; the children are the same commands with the same arguments, environment,
 * working folder and process group (detached), and their stdout and stderr come back over the IPC
 * channel. Only calls whose stdin is bytes or text (or none) and whose stdout is captured or
 * ignored go this way (probes, files written by ffmpeg, espeak-ng's and apertium's text); streamed
 * ones spawn here. `DUB_SPAWN_RELAY=0` turns it
 * off; where the helper cannot start or dies, calls spawn here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';

/** Whether small children are started through the helper: `DUB_SPAWN_RELAY`, `1`/`on` (default) or `0`/`off`. */
export function spawnRelayOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_SPAWN_RELAY ?? '').trim().toLowerCase();
  if (v === '' || v === '1' || v === 'on' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return false;
  throw new RangeError(`DUB_SPAWN_RELAY must be 1/on or 0/off, got "${env.DUB_SPAWN_RELAY}"`);
}

/** The helper: spawns what it is asked to, sends back pid, output, errors and the close. Exits when its parent goes. */
const HELPER = `
const { spawn } = require('node:child_process');
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  let c;
  try {
    c = spawn(m.cmd, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: [m.input === undefined ? 'ignore' : 'pipe', m.stdout ? 'pipe' : 'ignore', 'pipe'] });
    if (c.stdin) {
      c.stdin.on('error', () => {});
      c.stdin.end(m.input);
    }
  } catch (e) {
    process.send({ id: m.id, t: 'error', code: e.code, message: e.message });
    return;
  }
  if (c.pid !== undefined) process.send({ id: m.id, t: 'pid', pid: c.pid });
  c.on('error', (e) => process.send({ id: m.id, t: 'error', code: e.code, message: e.message }));
  if (c.stdout) c.stdout.on('data', (d) => process.send({ id: m.id, t: 'out', d }));
  c.stderr.on('data', (d) => process.send({ id: m.id, t: 'err', d }));
  c.on('close', (code, signal) => process.send({ id: m.id, t: 'close', code, signal }));
});
`;

type Message = { id: number; t: 'pid'; pid: number } | { id: number; t: 'error'; code?: string; message: string } | { id: number; t: 'out' | 'err'; d: Uint8Array } | { id: number; t: 'close'; code: number | null; signal: NodeJS.Signals | null };

/** What runProcess reads of a ChildProcess. */
export interface RelayedChild extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
  stdout: PassThrough;
  stderr: PassThrough;
  stdin: null;
  kill(signal?: NodeJS.Signals): boolean;
}

let helper: ChildProcess | null | undefined;
let nextId = 1;
/** The children the helper runs; `pendingKill`: a kill asked before the helper sent the pid, sent to the group when it comes. */
const live = new Map<number, { child: RelayedChild; pendingKill?: NodeJS.Signals }>();

/** Signal `pid`'s process group (the child is detached, so it leads one), else the child alone. */
function killGroupOf(pid: number, signal: NodeJS.Signals): boolean {
  try {
    return process.kill(-pid, signal);
  } catch {
    try {
      return process.kill(pid, signal);
    } catch {
      return false;
    }
  }
}

function startHelper(): ChildProcess | null {
  try {
    const h = spawn(process.execPath, ['-e', HELPER], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
    h.on('message', (m: Message) => deliver(m));
    const gone = (): void => {
      if (helper === h) helper = null;
      for (const [id, { child }] of live) {
        live.delete(id);
        const e = Object.assign(new Error('the spawn helper exited'), { code: 'EHELPER' });
        child.emit('error', e);
      }
    };
    h.on('exit', gone);
    h.on('error', gone);
    h.unref();
    channelOf(h)?.unref?.();
    return h;
  } catch {
    return null;
  }
}

/** The IPC channel's handle: ref'd while children run, so the process waits for them. */
function channelOf(h: ChildProcess | null | undefined): { ref?: () => void; unref?: () => void } | undefined {
  return h?.channel as unknown as { ref?: () => void; unref?: () => void } | undefined;
}

function deliver(m: Message): void {
  const entry = live.get(m.id);
  if (!entry) return;
  const { child } = entry;
  if (m.t === 'pid') {
    child.pid = m.pid;
    if (entry.pendingKill) killGroupOf(m.pid, entry.pendingKill);
  }
  else if (m.t === 'out' || m.t === 'err') (m.t === 'out' ? child.stdout : child.stderr).write(Buffer.from(m.d));
  else if (m.t === 'error') {
    live.delete(m.id);
    child.stdout.end();
    child.stderr.end();
    child.emit('error', Object.assign(new Error(m.message), { code: m.code }));
  } else if (m.t === 'close') {
    live.delete(m.id);
    child.exitCode = m.code;
    child.signalCode = m.signal;
    // 'close' as a ChildProcess sends it: after the output streams being read have ended
    const ended = [child.stdout, child.stderr].map((s) => (s.readableFlowing ? new Promise((r) => s.once('end', r).once('close', r)) : undefined));
    child.stdout.end();
    child.stderr.end();
    void Promise.all(ended).then(() => child.emit('close', m.code, m.signal));
  }
  if (live.size === 0) channelOf(helper)?.unref?.();
}

/**
 * `cmd args` started by the helper, or undefined where it is off or cannot run (the caller spawns
 * itself). Its stdout is piped when `stdout` is true, else ignored; `input` is written to its
 * stdin (closed after it), which is ignored without it.
 */
export function relaySpawn(cmd: string, args: readonly string[], o: { cwd?: string; env?: NodeJS.ProcessEnv; stdout: boolean; input?: Buffer | string }): RelayedChild | undefined {
  if (!spawnRelayOn()) return undefined;
  if (helper === undefined) helper = startHelper();
  const h = helper;
  if (!h || !h.connected) return undefined;
  const id = nextId++;
  const child = Object.assign(new EventEmitter(), {
    pid: undefined as number | undefined,
    exitCode: null as number | null,
    signalCode: null as NodeJS.Signals | null,
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    stdin: null,
    kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
      if (child.pid === undefined) {
        // asked before the helper sent the pid (an abort right after the start): kept, and sent
        // to the child's group as soon as the pid comes
        const entry = live.get(id);
        if (!entry) return false;
        entry.pendingKill = signal;
        return true;
      }
      try {
        return process.kill(child.pid, signal);
      } catch {
        return false;
      }
    },
  }) as RelayedChild;
  live.set(id, { child });
  channelOf(h)?.ref?.();
  try {
    h.send({ id, cmd, args: [...args], cwd: o.cwd, env: o.env ?? process.env, stdout: o.stdout, ...(o.input !== undefined ? { input: o.input } : {}) });
  } catch {
    live.delete(id);
    return undefined;
  }
  return child;
}
