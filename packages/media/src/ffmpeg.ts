/**
 * ffmpeg and ffprobe through `runProcess`: progress parsed from `-progress pipe:1`
 * (out_time_us over the known duration) and reported through StageContext.onProgress.
 */
import { resolveContext, type PartialContext } from '@dub/core';
import { runProcess, type ProcessResult, type RunProcessOptions } from './process.js';
import { resolveMediaTools, type MediaToolOptions } from './tools.js';

export interface RunFfmpegOptions extends MediaToolOptions, Pick<RunProcessOptions, 'input' | 'stdout' | 'timeoutMs' | 'maxStdoutBytes' | 'cwd' | 'env' | 'onStderrLine'> {
  /** Duration (seconds) of what ffmpeg will produce; progress fractions are relative to it. */
  durationSec?: number;
  /** Stage name in progress events (default "ffmpeg"). */
  stage?: string;
  /**
   * Add `-progress pipe:1` and parse it (default: when the context has onProgress and
   * `durationSec` is known). Turn off when ffmpeg itself writes to stdout.
   */
  progress?: boolean;
  /** ffmpeg -loglevel (default "error": the stderr tail then holds the reason of a failure). */
  logLevel?: string;
}

/** Run ffmpeg with `args` (everything after the global options; outputs are overwritten). */
export async function runFfmpeg(args: readonly string[], opts: RunFfmpegOptions = {}, context: PartialContext = {}): Promise<ProcessResult> {
  const ctx = resolveContext(context);
  const { ffmpegPath } = resolveMediaTools(opts);
  const stage = opts.stage ?? 'ffmpeg';
  const duration = opts.durationSec;
  const onProgress = ctx.onProgress;
  const wantProgress = opts.progress ?? (onProgress !== undefined && duration !== undefined && duration > 0);
  const globalArgs = ['-hide_banner', '-nostdin', '-y', '-loglevel', opts.logLevel ?? 'error'];
  if (wantProgress) globalArgs.push('-progress', 'pipe:1', '-nostats');

  let last = -1;
  const onStdoutLine = wantProgress && onProgress
    ? (line: string): void => {
        const eq = line.indexOf('=');
        if (eq < 0) return;
        const key = line.slice(0, eq);
        const value = line.slice(eq + 1).trim();
        let fraction: number | undefined;
        if (key === 'out_time_us' && duration !== undefined && duration > 0) {
          const us = Number(value);
          if (Number.isFinite(us) && us >= 0) fraction = Math.min(1, us / 1e6 / duration);
        } else if (key === 'progress' && value === 'end') fraction = 1;
        if (fraction !== undefined && fraction > last) {
          last = fraction;
          onProgress({ stage, fraction });
        }
      }
    : undefined;

  const all = [...globalArgs, ...args];
  ctx.logger.debug({ cmd: ffmpegPath, args: all }, 'ffmpeg');
  return runProcess(ffmpegPath, all, {
    ...pick(opts),
    stdout: opts.stdout ?? (wantProgress ? 'ignore' : 'capture'),
    ...(onStdoutLine ? { onStdoutLine } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

export interface RunFfprobeOptions extends MediaToolOptions, Pick<RunProcessOptions, 'timeoutMs'> {}

/** Run ffprobe with `args` and return its stdout as text. */
export async function runFfprobe(args: readonly string[], opts: RunFfprobeOptions = {}, context: PartialContext = {}): Promise<string> {
  const ctx = resolveContext(context);
  const { ffprobePath } = resolveMediaTools(opts);
  const res = await runProcess(ffprobePath, ['-hide_banner', '-loglevel', 'error', ...args], {
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  return res.stdout.toString('utf8');
}

function pick(opts: RunFfmpegOptions): RunProcessOptions {
  const out: RunProcessOptions = {};
  if (opts.input !== undefined) out.input = opts.input;
  if (opts.timeoutMs !== undefined) out.timeoutMs = opts.timeoutMs;
  if (opts.maxStdoutBytes !== undefined) out.maxStdoutBytes = opts.maxStdoutBytes;
  if (opts.cwd !== undefined) out.cwd = opts.cwd;
  if (opts.env !== undefined) out.env = opts.env;
  if (opts.onStderrLine !== undefined) out.onStderrLine = opts.onStderrLine;
  return out;
}
