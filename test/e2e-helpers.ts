/**
 * Helpers for the end-to-end tests that run the shipped `dub` command: free ports, polling,
 * spawning `dub` with its log kept for failure messages, a callback receiver, the sample video.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DUB = path.join(ROOT, 'packages/cli/bin/dub.js');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Poll `fn` until it returns a value; an error thrown by `fn` ends the wait at once. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface DubProcess {
  child: ChildProcess;
  /** The last 6 KB of its stdout and stderr. */
  log(): string;
  /** SIGTERM and wait for the exit; resolves the exit code. */
  stop(): Promise<number | null>;
}

export function spawnDub(args: string[], env: Record<string, string>): DubProcess {
  let log = '';
  const child = spawn(process.execPath, [DUB, ...args], { env: { ...process.env, DUB_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (c: Buffer) => (log = (log + c.toString()).slice(-6000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    child,
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

export async function waitHealthy(base: string, p: DubProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(`${base}/healthz (log: ${p.log()})`, async () => {
    if (p.child.exitCode !== null) throw new Error(`dub exited with ${p.child.exitCode}: ${p.log()}`);
    return (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined;
  }, timeoutMs);
}

export interface CallbackReceiver {
  url: string;
  received: { body: string; signature: string }[];
  close(): void;
}

/** An HTTP server on 127.0.0.1 recording every callback (raw body and X-Signature), answering 200. */
export async function callbackReceiver(): Promise<CallbackReceiver> {
  const received: { body: string; signature: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['x-signature'] ?? '') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`, received, close: () => server.close() };
}

/** The README's sample video (espeak-ng speech, two voices, test pattern). */
export function makeSample(file: string): string {
  execFileSync('bash', [path.join(ROOT, 'scripts/make-sample.sh'), file], { stdio: 'ignore' });
  return file;
}

export function ffprobeJson(file: string): { streams: { codec_type: string }[]; format: { duration: string } } {
  return JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' }));
}
