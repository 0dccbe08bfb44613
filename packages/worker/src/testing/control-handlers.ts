/**
 * Handlers for the worker's own tests, steered by the job's asset_id (`<behaviour>-<anything>`):
 * - `ok-*`: emits one stage_done event and the job's success event.
 * - `busy<ms>-*`: a synchronous busy loop of <ms> milliseconds (a stand-in for a native inference
 *   call that blocks its thread), then success.
 * - `fail-<code>-*`: throws a permanent AssetError/VersionError with <code>.
 * - `boom-*`: throws a permanent error that is neither (a programming error).
 * - `retry<n>-*`: throws a retryable error on deliveries 1..n, then succeeds.
 * - `slow<ms>-*`: waits <ms> ms honouring the AbortSignal (graceful shutdown tests).
 * - `limit<ms>-*`: holds the 'gpu' limit for <ms> ms and stores when it held it in blob
 *   `limits/<job_id>.json` ({ start, end } in ms since the epoch).
 * - `follow-*`: enqueues a prepare-version follow-up job `<job_id>-v`.
 * Whatever the behaviour, a job that carries subtitle text (source_srt, versions[].srt,
 * version.srt) as the handler receives it has the text's length and sha256 stored in blob
 * `received/<job_id>.json` (jobs-that-fit-the-bus tests: text sent as a blob key arrives inline).
 */
import { createHash } from 'node:crypto';
import { AbortedError, AssetError, DubError, VersionError, type AssetErrorCode, type EmittedEvent, type Job, type JobHandlers, type JobRuntime, type VersionErrorCode } from '@dub/core';

function success(job: Job): EmittedEvent {
  switch (job.type) {
    case 'prepare-asset':
      return { type: 'asset_prepared', duration: 1, source_video_key: `assets/${job.asset_id}/source.mp4`, transcript_key: `assets/${job.asset_id}/transcript.json` };
    case 'prepare-version':
      return { type: 'version_prepared', version_id: job.version.version_id, script_key: `versions/${job.version.version_id}/script.json` };
    case 'generate-version':
      return {
        type: 'version_generated',
        version_id: job.version_id,
        generation: job.generation,
        result_video_key: `versions/${job.version_id}/gen-${job.generation}/result.mp4`,
        result_audio_key: `versions/${job.version_id}/gen-${job.generation}/result.m4a`,
        duration: 1,
      };
  }
}

function digest(text: string | undefined): { bytes: number; sha256: string } | null {
  return text === undefined ? null : { bytes: Buffer.byteLength(text, 'utf8'), sha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/** What a handler received of the job's subtitle text (and whether a blob key was left for it), or undefined without any. */
function receivedText(job: Job): Record<string, unknown> | undefined {
  const raw = job as unknown as Record<string, unknown>;
  const specs = job.type === 'prepare-asset' ? job.versions : job.type === 'prepare-version' ? [job.version] : [];
  const keysLeft = 'source_srt_key' in raw || specs.some((v) => 'srt_key' in v);
  const source = job.type === 'prepare-asset' ? job.source_srt : undefined;
  if (source === undefined && !specs.some((v) => v.srt !== undefined) && !keysLeft) return undefined;
  return { source_srt: digest(source), versions: specs.map((v) => ({ version_id: v.version_id, srt: digest(v.srt) })), keys_left: keysLeft };
}

async function handle(job: Job, rt: JobRuntime): Promise<void> {
  const texts = receivedText(job);
  if (texts) await rt.store.put(`received/${job.job_id}.json`, JSON.stringify(texts));
  const [behaviour = '', ...rest] = job.asset_id.split('-');
  const num = Number(behaviour.replace(/^[a-z]+/, '') || 0);
  const kind = behaviour.replace(/\d+$/, '');
  const t0 = performance.now();
  switch (kind) {
    case 'busy': {
      const end = Date.now() + num;
      let x = 0;
      while (Date.now() < end) x += Math.sqrt(x + 1);
      if (x < 0) throw new Error('unreachable');
      break;
    }
    case 'fail': {
      const code = rest[0] ?? 'invalid_input';
      if (job.type === 'prepare-asset') throw new AssetError(code as AssetErrorCode, `asset failed with ${code}`);
      throw new VersionError(code as VersionErrorCode, `version failed with ${code}`);
    }
    case 'boom':
      throw new DubError('internal_error', 'a programming error', { retryable: false });
    case 'retry':
      if (rt.attempt <= num) throw new DubError('upstream_error', `transient failure on delivery ${rt.attempt}`, { retryable: true });
      break;
    case 'slow':
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, num);
        rt.ctx.signal?.addEventListener('abort', () => {
          clearTimeout(t);
          reject(new AbortedError('aborted'));
        });
      });
      break;
    case 'limit': {
      const held = async () => {
        const start = Date.now();
        await new Promise((r) => setTimeout(r, num));
        return { start, end: Date.now() };
      };
      const span = rt.withLimit ? await rt.withLimit('gpu', held) : await held();
      await rt.store.put(`limits/${job.job_id}.json`, JSON.stringify(span));
      break;
    }
    case 'follow':
      if (job.type === 'prepare-asset') {
        await rt.enqueue({ v: 1, type: 'prepare-version', job_id: `${job.job_id}-v`, asset_id: job.asset_id, source_locale: job.locale, version: job.versions[0] ?? { version_id: 'v1', dubbing_id: 'd1', locale: 'es-ES' } });
      }
      break;
  }
  await rt.emit({ type: 'stage_done', job_type: job.type, stage: kind || 'noop', cached: false, seconds: (performance.now() - t0) / 1000 });
  await rt.emit(success(job));
}

export const jobHandlers: JobHandlers = {
  'prepare-asset': handle,
  'prepare-version': handle,
  'generate-version': handle,
};
