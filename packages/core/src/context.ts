/**
 * The context every stage receives: logger, cancellation and progress as values, never globals.
 */
import { silentLogger, type Logger } from './logger.js';
import { throwIfAborted } from './errors.js';

export interface Progress {
  /** Stage name, e.g. "separation". */
  stage: string;
  /** 0..1 within the stage. */
  fraction: number;
  message?: string;
}

export interface StageContext {
  logger: Logger;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export type PartialContext = Partial<StageContext>;

export function resolveContext(ctx: PartialContext = {}): StageContext {
  return { logger: ctx.logger ?? silentLogger, ...(ctx.signal ? { signal: ctx.signal } : {}), ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}) };
}

/** A child context whose progress is mapped into [from, to] of the parent and labelled `stage`. */
export function subContext(ctx: StageContext, stage: string, from = 0, to = 1): StageContext {
  const parent = ctx.onProgress;
  return {
    logger: ctx.logger.child({ stage }),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(parent ? { onProgress: (p: Progress) => parent({ ...p, stage: p.stage || stage, fraction: from + (to - from) * clamp01(p.fraction) }) } : {}),
  };
}

export function reportProgress(ctx: StageContext, stage: string, fraction: number, message?: string): void {
  throwIfAborted(ctx.signal);
  ctx.onProgress?.({ stage, fraction: clamp01(fraction), ...(message ? { message } : {}) });
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}
