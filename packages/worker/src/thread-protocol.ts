/**
 * Messages between the worker's main thread (which talks to NATS or the embedded queue) and the
 * job threads (which run handlers and inference). Everything here is structured-clone data.
 */
import type { DubConfig, EmittedEvent, Job, Progress } from '@dub/core';
import type { JobError } from './failure.js';
import type { BlobStoreSpec } from './store-spec.js';

export interface ThreadData {
  index: number;
  handlersModule: string;
  store: BlobStoreSpec;
  config: DubConfig;
  logLevel: string;
}

export type ToThread =
  | { t: 'run'; runId: number; job: Job; attempt: number }
  | { t: 'abort'; runId: number; reason: string }
  | { t: 'reply'; id: number; error?: JobError }
  | { t: 'dispose' };

export type FromThread =
  | { t: 'ready'; providers: Record<string, string> }
  | { t: 'init_failed'; error: JobError }
  | { t: 'emit'; runId: number; id: number; event: EmittedEvent }
  | { t: 'enqueue'; runId: number; id: number; job: Job }
  | { t: 'progress'; runId: number; progress: Progress }
  | { t: 'acquire'; runId: number; id: number; name: string }
  | { t: 'release'; runId: number; id: number }
  | { t: 'done'; runId: number; error?: JobError; providers: Record<string, string> }
  | { t: 'disposed' };
