/**
 * Loading job handlers from a module: a path (absolute or ./relative to the working directory)
 * or a package specifier. The module exports `jobHandlers: JobHandlers` (or a default export of
 * that shape) and optionally `warmup(rt)`, called once per thread at start so the worker can log
 * the execution provider each model got before the first job.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { JOB_TYPES, ValidationError, type BlobStore, type DubConfig, type JobHandlers, type Logger } from '@dub/core';
import { type SessionCache } from '@dub/onnx';

/** The default handlers module: the pipeline's handlers. */
export const DEFAULT_HANDLERS_MODULE = '@dub/pipeline';

export interface WarmupRuntime {
  store: BlobStore;
  config: DubConfig;
  sessions: SessionCache;
  logger: Logger;
}

export interface HandlersModule {
  handlers: JobHandlers;
  warmup?: (rt: WarmupRuntime) => Promise<void>;
}

export function moduleSpecifier(spec: string): string {
  if (path.isAbsolute(spec) || spec.startsWith('./') || spec.startsWith('../')) return pathToFileURL(path.resolve(spec)).href;
  return spec;
}

export async function loadHandlersModule(spec: string): Promise<HandlersModule> {
  const mod = (await import(moduleSpecifier(spec))) as Record<string, unknown>;
  const h = (mod.jobHandlers ?? (mod.default as Record<string, unknown> | undefined)?.jobHandlers ?? mod.default) as Partial<JobHandlers> | undefined;
  const missing = JOB_TYPES.filter((t) => typeof h?.[t] !== 'function');
  if (!h || missing.length) {
    throw new ValidationError(`handlers module "${spec}" must export jobHandlers with a function per job type; missing: ${missing.join(', ')}`, { field: 'handlers' });
  }
  const warmup = typeof mod.warmup === 'function' ? (mod.warmup as HandlersModule['warmup']) : undefined;
  return { handlers: h as JobHandlers, ...(warmup ? { warmup } : {}) };
}
