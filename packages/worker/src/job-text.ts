/**
 * Jobs that fit the bus. A job's inline subtitle text (`source_srt`, `versions[].srt`,
 * `version.srt`) counts against the message limit of the transport (NATS: the server's
 * `max_payload`, 1 MiB by default). A publisher whose job would not fit moves that text into the
 * blob store (`moveJobTextToBlobs`) and sends its key instead (`source_srt_key`, `srt_key`); the
 * worker reads it back before the handler runs (`readJobTextFromBlobs`), so handlers only ever see
 * inline text. Keys are content-addressed under the asset (`assets/<asset_id>/job-text/<sha256>.srt`):
 * publishing the same job twice writes the same blob, and removing the asset removes them.
 */
import { createHash } from 'node:crypto';
import { AssetError, DubError, NotFoundError, ValidationError, VersionError, type BlobStore, type Job, type VersionSpec } from '@dub/core';

/** NATS's default max_payload, used when the server has not said its own. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Room kept under the limit for the message's headers (Nats-Msg-Id) and protocol line. */
export const JOB_PAYLOAD_MARGIN_BYTES = 16 * 1024;

/** The blob key of a job's subtitle text: content-addressed under its asset. */
export function jobTextKey(assetId: string, text: string): string {
  return `assets/${assetId}/job-text/${createHash('sha256').update(text, 'utf8').digest('hex')}.srt`;
}

/** A job larger than the transport takes, even with its subtitle text moved out. Not retryable. */
export class JobTooLargeError extends DubError {
  constructor(message: string, details: Record<string, unknown>) {
    super('payload_too_large', message, { retryable: false, status: 413, details });
    this.name = 'JobTooLargeError';
  }
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Whether the job carries subtitle text inline. */
function hasInlineText(job: Job): boolean {
  if (job.type === 'prepare-asset') return job.source_srt !== undefined || job.versions.some((v) => v.srt !== undefined);
  if (job.type === 'prepare-version') return job.version.srt !== undefined;
  return false;
}

/**
 * The job's JSON for a transport that takes at most `maxPayload` bytes: as it is when it fits
 * (with `marginBytes` to spare), else with every inline subtitle text moved into `store`. Throws
 * `JobTooLargeError` (naming the sizes) when it cannot be made to fit: no store to move the text
 * to, or what is left is still too large.
 */
export async function fitJob(job: Job, maxPayload: number, store: BlobStore | undefined, marginBytes = JOB_PAYLOAD_MARGIN_BYTES): Promise<{ job: Job; data: string; moved: string[] }> {
  const budget = Math.max(0, maxPayload - marginBytes);
  const data = JSON.stringify(job);
  if (bytes(data) <= budget) return { job, data, moved: [] };
  const limit = `the bus's message limit of ${maxPayload} bytes (less ${marginBytes} for headers)`;
  const details = { job_id: job.job_id, bytes: bytes(data), max_payload: maxPayload, margin: marginBytes };
  if (!hasInlineText(job)) throw new JobTooLargeError(`job ${job.job_id} is ${bytes(data)} bytes, over ${limit}, and has no inline subtitle text to move to the blob store`, details);
  if (!store) throw new JobTooLargeError(`job ${job.job_id} is ${bytes(data)} bytes, over ${limit}; its inline SRT could be sent as a blob key, but this queue has no blob store (give NatsJobQueue a store)`, details);
  const moved: string[] = [];
  const put = async (text: string): Promise<string> => {
    const key = jobTextKey(job.asset_id, text);
    if (!(await store.has(key))) await store.put(key, text);
    moved.push(key);
    return key;
  };
  const spec = async (v: VersionSpec): Promise<VersionSpec> => {
    if (v.srt === undefined) return v;
    const { srt, ...rest } = v;
    return { ...rest, srt_key: await put(srt) };
  };
  let out: Job;
  if (job.type === 'prepare-asset') {
    const { source_srt, ...rest } = job;
    out = { ...rest, ...(source_srt !== undefined ? { source_srt_key: await put(source_srt) } : {}), versions: await Promise.all(job.versions.map(spec)) };
  } else if (job.type === 'prepare-version') out = { ...job, version: await spec(job.version) };
  else out = job;
  const outData = JSON.stringify(out);
  if (bytes(outData) > budget) throw new JobTooLargeError(`job ${job.job_id} is ${bytes(outData)} bytes with its subtitle text moved to the blob store (${bytes(data)} with it inline), still over ${limit}`, { ...details, bytes_without_text: bytes(outData) });
  return { job: out, data: outData, moved };
}

async function readText(store: BlobStore, key: string, field: string, job: Job): Promise<string> {
  try {
    return (await store.getBuffer(key)).toString('utf8');
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e; // a store that cannot answer now: retryable as it is
    const msg = `${field}: blob "${key}" not found (the publisher stores the job's subtitle text there before it sends the job)`;
    throw job.type === 'prepare-asset' ? new AssetError('invalid_input', msg, { cause: e }) : new VersionError('general_error', msg, { cause: e });
  }
}

/**
 * The job with the subtitle text its keys name read back inline (what handlers expect). A job
 * with no key is returned as it is. A job with both the text and its key is invalid.
 */
export async function readJobTextFromBlobs(job: Job, store: BlobStore): Promise<Job> {
  const spec = async (v: VersionSpec, field: string): Promise<VersionSpec> => {
    if (v.srt_key === undefined) return v;
    if (v.srt !== undefined) throw new ValidationError(`${field}: a job carries srt or srt_key, not both`, { field });
    const { srt_key, ...rest } = v;
    return { ...rest, srt: await readText(store, srt_key, `${field}.srt_key`, job) };
  };
  if (job.type === 'prepare-asset') {
    if (job.source_srt_key === undefined && !job.versions.some((v) => v.srt_key !== undefined)) return job;
    if (job.source_srt_key !== undefined && job.source_srt !== undefined) throw new ValidationError('source_srt: a job carries source_srt or source_srt_key, not both', { field: 'source_srt' });
    const { source_srt_key, ...rest } = job;
    return {
      ...rest,
      ...(source_srt_key !== undefined ? { source_srt: await readText(store, source_srt_key, 'source_srt_key', job) } : {}),
      versions: await Promise.all(job.versions.map((v, i) => spec(v, `versions[${i}]`))),
    };
  }
  if (job.type === 'prepare-version') return job.version.srt_key === undefined ? job : { ...job, version: await spec(job.version, 'version') };
  return job;
}
