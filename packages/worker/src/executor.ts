/**
 * Where a job's handler runs: in worker threads (the daemon, and embedded mode given a handlers
 * module) or inline on the caller's thread (embedded mode given a handlers object). Both give the
 * handler the same JobRuntime.
 */
import type { EmittedEvent, Job, Progress } from '@dub/core';

/** What a running job reports back to the runner. */
export interface JobHooks {
  emit(event: EmittedEvent): Promise<void>;
  enqueue(job: Job): Promise<void>;
  progress(p: Progress): void;
}

export interface JobExecutor {
  /** Run the job's handler; rejects with the handler's error. `signal` aborts it (shutdown). */
  run(job: Job, attempt: number, hooks: JobHooks, signal: AbortSignal): Promise<void>;
  /** Execution provider each ONNX model got so far (model file -> provider). */
  providers(): Record<string, string>;
  /** Release ONNX sessions and threads. */
  close(): Promise<void>;
}
