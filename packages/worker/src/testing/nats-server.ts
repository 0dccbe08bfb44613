/**
 * A private nats-server (Debian `nats-server` binary) for tests: JetStream on, loopback only,
 * a free port and a temporary store directory; it can be killed and restarted on the same port
 * and store (restart tests). `natsForTests()` uses 127.0.0.1:4222 when reachable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export function reachable(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

export interface TestNatsServer {
  url: string;
  port: number;
  /** Stop gracefully (SIGTERM) and wait for the exit. */
  stop(): Promise<void>;
  /** Kill (SIGKILL: a crash or a cut link; clients are told nothing) and wait for the exit. */
  kill(): Promise<void>;
  /** Start again on the same port and store. */
  restart(): Promise<void>;
  /** Stop and delete the store. */
  dispose(): Promise<void>;
}

/** `maxPayload`: the server's message limit in bytes (its max_payload; NATS's default is 1 MiB). */
export async function startNatsServer(opts: { bin?: string; maxPayload?: number } = {}): Promise<TestNatsServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-nats-'));
  const bin = opts.bin ?? process.env.NATS_SERVER_BIN ?? 'nats-server';
  const extra: string[] = [];
  if (opts.maxPayload !== undefined) {
    const conf = path.join(dir, 'server.conf');
    fs.writeFileSync(conf, `max_payload: ${opts.maxPayload}\n`);
    extra.push('-c', conf);
  }
  let child: ChildProcess | undefined;
  const start = async () => {
    const c = spawn(bin, [...extra, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', path.join(dir, 'js')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    let log = '';
    c.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    const ready = new Promise<void>((resolve, reject) => {
      c.once('error', reject);
      c.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${log}`)));
      c.stderr?.on('data', () => {
        if (log.includes('Server is ready')) resolve();
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`nats-server did not start: ${log}`)), 15_000)));
    try {
      await Promise.race([ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop: () => stop(),
    kill: () => stop('SIGKILL'),
    restart: start,
    dispose: async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** 127.0.0.1:4222 when a server listens there, otherwise a private server. */
export async function natsForTests(): Promise<{ url: string; dispose(): Promise<void> }> {
  if (await reachable(4222)) return { url: 'nats://127.0.0.1:4222', dispose: async () => {} };
  return startNatsServer();
}
