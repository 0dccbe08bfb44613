/**
 * One typed wrapper around child processes (ffmpeg, ffprobe, espeak-ng, apertium, ...):
 * argument arrays only (never a shell), the child in its own process group so an AbortSignal or
 * a timeout kills it and everything it started, failures as ProcessError with the stderr tail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { finished } from 'node:stream/promises';
import type { Readable, Writable } from 'node:stream';
import { AbortedError, EngineUnavailableError, ProcessError, TimeoutError } from '@dub/core';
import { LineSplitter, TailBuffer } from './lines.js';
import { relaySpawn } from './spawn-relay.js';

export interface RunProcessOptions {
  /** Bytes, text or a stream written to the child's stdin (stdin is closed when it ends). */
  input?: Buffer | string | Readable;
  /**
   * What happens to stdout: 'capture' (default) collects it into `result.stdout`; 'ignore'
   * discards it; a Writable receives it as it comes (and is ended when stdout ends).
   */
  stdout?: 'capture' | 'ignore' | Writable;
  /** Called with each stdout line (in addition to the `stdout` handling). */
  onStdoutLine?: (line: string) => void;
  /** Called with each stderr line. */
  onStderrLine?: (line: string) => void;
  /** Captured stdout larger than this fails the call (default 256 MiB). */
  maxStdoutBytes?: number;
  /** How many trailing stderr bytes an error carries (default 4096). */
  stderrTailBytes?: number;
  /** Exit codes that count as success (default [0]). */
  okExitCodes?: readonly number[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kills the process group and rejects with AbortedError. */
  signal?: AbortSignal;
  /** Kills the process group after this many milliseconds and rejects with TimeoutError. */
  timeoutMs?: number;
  /** Signal sent to the process group on abort or timeout (default SIGKILL). */
  killSignal?: NodeJS.Signals;
}

export interface ProcessResult {
  exitCode: number;
  /** Captured stdout (empty unless `stdout` is 'capture'). */
  stdout: Buffer;
  /** The last `stderrTailBytes` of stderr. */
  stderrTail: string;
  durationMs: number;
}

const DEFAULT_MAX_STDOUT = 256 * 1024 * 1024;

/** Run `cmd` with `args` and resolve when it exits with an accepted code. */
export function runProcess(cmd: string, args: readonly string[], opts: RunProcessOptions = {}): Promise<ProcessResult> {
  const started = Date.now();
  const stdoutMode = opts.stdout ?? 'capture';
  const okCodes = opts.okExitCodes ?? [0];
  const maxStdout = opts.maxStdoutBytes ?? DEFAULT_MAX_STDOUT;
  const tail = new TailBuffer(opts.stderrTailBytes ?? 4096);
  const killSignal = opts.killSignal ?? 'SIGKILL';

  if (opts.signal?.aborted) return Promise.reject(abortError(cmd, opts.signal));

  return new Promise<ProcessResult>((resolve, reject) => {
    // stdin bytes or none, stdout not streamed: started by the small helper process, whose fork is cheap (spawn-relay.ts).
    const bytesIn = opts.input === undefined || typeof opts.input === 'string' || Buffer.isBuffer(opts.input);
    const relayed = bytesIn && typeof stdoutMode !== 'object' ? relaySpawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdout: stdoutMode === 'capture' || opts.onStdoutLine !== undefined, ...(opts.input !== undefined ? { input: opts.input as Buffer | string } : {}) }) : undefined;
    const child: Pick<ChildProcess, 'pid' | 'exitCode' | 'signalCode' | 'stdout' | 'stderr' | 'stdin' | 'on' | 'kill'> =
      (relayed as unknown as ChildProcess | undefined) ??
      spawn(cmd, [...args], {
        cwd: opts.cwd,
        env: opts.env,
        detached: true,
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
    const stdout = child.stdout!;
    const stderr = child.stderr!;

    let settled = false;
    let stopReason: 'abort' | 'timeout' | 'overflow' | undefined;
    const stdoutChunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutDone: Promise<unknown> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;

    const killGroup = (): void => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.pid === undefined) {
        // a child the spawn helper has not reported yet keeps the kill until its pid comes
        try {
          child.kill(killSignal);
        } catch {
          /* not started */
        }
        return;
      }
      try {
        process.kill(-child.pid, killSignal);
      } catch {
        try {
          child.kill(killSignal);
        } catch {
          /* already gone */
        }
      }
    };
    const stop = (reason: 'abort' | 'timeout' | 'overflow'): void => {
      if (stopReason === undefined) stopReason = reason;
      killGroup();
    };
    const onAbort = (): void => stop('abort');
    const cleanup = (): void => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(err);
    };

    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.timeoutMs !== undefined && opts.timeoutMs > 0) timer = setTimeout(() => stop('timeout'), opts.timeoutMs);

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'EACCES') {
        fail(new EngineUnavailableError(`cannot start ${cmd} (${err.code}): install it or configure its path`, { cause: err, details: { command: cmd } }));
      } else {
        fail(new ProcessError(`${cmd} failed: ${err.message}`, { cause: err, exitCode: null, stderrTail: tail.toString(), retryable: true }));
      }
    });

    // stdout
    const outLines = opts.onStdoutLine ? new LineSplitter(opts.onStdoutLine) : undefined;
    if (typeof stdoutMode === 'object') {
      stdout.pipe(stdoutMode);
      stdoutDone = finished(stdoutMode).catch((e: unknown) => {
        stop('abort');
        fail(new ProcessError(`${cmd}: writing its stdout failed`, { cause: e, exitCode: null, stderrTail: tail.toString() }));
      });
    }
    stdout.on('data', (chunk: Buffer) => {
      outLines?.push(chunk);
      if (stdoutMode === 'capture') {
        stdoutBytes += chunk.length;
        if (stdoutBytes > maxStdout) stop('overflow');
        else stdoutChunks.push(chunk);
      }
    });
    stdout.on('end', () => outLines?.end());

    // stderr
    const errLines = opts.onStderrLine ? new LineSplitter(opts.onStderrLine) : undefined;
    stderr.on('data', (chunk: Buffer) => {
      tail.push(chunk);
      errLines?.push(chunk);
    });
    stderr.on('end', () => errLines?.end());

    // stdin
    if (opts.input !== undefined && child.stdin) {
      const stdin = child.stdin;
      stdin.on('error', () => {
        /* EPIPE when the child exits before reading everything: its exit code tells the story */
      });
      if (typeof opts.input === 'string' || Buffer.isBuffer(opts.input)) stdin.end(opts.input);
      else {
        const src = opts.input;
        src.on('error', (e) => {
          stop('abort');
          fail(new ProcessError(`${cmd}: reading its stdin source failed`, { cause: e, exitCode: null, stderrTail: tail.toString() }));
        });
        src.pipe(stdin);
      }
    }

    child.on('close', (code, signal) => {
      void stdoutDone.then(() => {
        if (settled) return;
        const stderrTail = tail.toString();
        const durationMs = Date.now() - started;
        if (stopReason === 'abort') return fail(abortError(cmd, opts.signal));
        if (stopReason === 'timeout') return fail(new TimeoutError(`${cmd} timed out after ${opts.timeoutMs} ms`, { details: { command: cmd, stderrTail } }));
        if (stopReason === 'overflow') {
          return fail(new ProcessError(`${cmd} wrote more than ${maxStdout} bytes to stdout`, { exitCode: code, signal, stderrTail }));
        }
        if (code === null || !okCodes.includes(code)) {
          const last = lastLine(stderrTail);
          const how = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
          return fail(new ProcessError(`${cmd} ${how}${last ? `: ${last}` : ''}`, { exitCode: code, signal, stderrTail, details: { command: cmd } }));
        }
        settled = true;
        cleanup();
        resolve({ exitCode: code, stdout: stdoutMode === 'capture' ? Buffer.concat(stdoutChunks) : Buffer.alloc(0), stderrTail, durationMs });
      });
    });
  });
}

function abortError(cmd: string, signal: AbortSignal | undefined): AbortedError {
  const reason: unknown = signal?.reason;
  const why = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : 'aborted';
  return new AbortedError(`${cmd}: ${why}`, { cause: reason });
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n|\r/).map((l) => l.trim()).filter((l) => l !== '');
  const line = lines[lines.length - 1] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}
