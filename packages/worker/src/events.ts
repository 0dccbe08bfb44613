/**
 * Completing an emitted event (v, job_id, asset_id, at) and validating it against the schema,
 * so a handler bug is caught where it happens rather than in the API.
 */
import { parseWorkerEvent, type EmittedEvent, type Job, type WorkerEvent } from '@dub/core';

export function completeEvent(job: Pick<Job, 'job_id' | 'asset_id'>, e: EmittedEvent): WorkerEvent {
  return parseWorkerEvent({ ...e, v: 1, job_id: job.job_id, asset_id: job.asset_id, at: new Date().toISOString() });
}
