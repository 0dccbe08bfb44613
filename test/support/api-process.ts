/** Run the API in a child process (test/support/api-server.mjs), to see it survive what a client sends. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'api-server.mjs');

export interface ApiProcess {
  child: ChildProcess;
  base: string;
  port: number;
  /** Everything it wrote on stderr (JSON log lines) and stdout. */
  log(): string;
  /** Still running (not exited). */
  alive(): boolean;
  stop(): Promise<void>;
}

export async function startApiProcess(dataDir: string, env: Record<string, string>): Promise<ApiProcess> {
  const child = spawn(process.execPath, [SERVER, dataDir], { env: { ...process.env, DUB_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the API process did not start: ${log}`)), 110_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      log += c.toString();
      const m = /\{"url":"([^"]+)"\}/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the API process exited with ${code}: ${log}`));
    });
  });
  return {
    child,
    base: url,
    port: Number(new URL(url).port),
    log: () => log,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
