/** transcript (of a version): the asset's transcript, a retryable NotFoundError until prepare-asset wrote it. */
import { blobKeys, NotFoundError, TranscriptSchema, validate, type JobRuntime, type Transcript } from '@dub/core';
import { versionStage } from './version-state.js';

/** A JSON blob read and checked against its schema. */
export async function readJson<T>(rt: JobRuntime, key: string, schema: Parameters<typeof validate>[0], what: string): Promise<T> {
  return validate<T>(schema, JSON.parse((await rt.store.getBuffer(key)).toString('utf8')), what);
}

export const versionTranscript = versionStage({
  name: 'transcript',
  weight: 0.1,
  inputs: [],
  async run(_, { job, rt, runner }) {
    const t0 = performance.now();
    const transcriptKey = blobKeys.transcript(job.asset_id);
    if (!(await rt.store.has(transcriptKey))) {
      throw new NotFoundError(`the transcript of asset ${job.asset_id} is not ready yet`, { retryable: true, details: { asset_id: job.asset_id } });
    }
    const transcript = await readJson<Transcript>(rt, transcriptKey, TranscriptSchema, 'transcript');
    await runner.done('transcript', false, (performance.now() - t0) / 1000);
    return { transcript, transcriptKey };
  },
});
