/**
 * thumbnail: a 640 px wide frame of the trimmed video, stored as the asset's thumbnail blob,
 * made after the trim and beside the audio stages (pending `video`, awaited by `transcript`). A
 * failure only logs a warning: the asset has no thumbnail (an abort still ends the job).
 */
import path from 'node:path';
import { blobKeys } from '@dub/core';
import { copyBlob } from '../local-files.js';
import { prepareStage } from './state.js';

export const thumbnail = prepareStage({
  name: 'thumbnail',
  weight: 0.3,
  inputs: ['trimmed'],
  async run({ trimmed }, { job, rt, runner, stages, files, env, beside }) {
    const video = beside.add(
      trimmed.then(async ({ result, sourceVideoKey }) => {
        let thumbnailKey: string | undefined;
        try {
          const thumb = await runner.run('thumbnail', { source: result.key }, async (out, ctx) => {
            const file = path.join(out.dir, 'thumbnail.jpg');
            await stages.thumbnail(await files.path(result.files['source.mp4']!), file, env, ctx);
            out.addFile('thumbnail.jpg', file);
            return null;
          });
          thumbnailKey = blobKeys.thumbnail(job.asset_id);
          if (!thumb.cached || !(await rt.store.has(thumbnailKey))) await copyBlob(rt.store, thumb.files['thumbnail.jpg']!, thumbnailKey);
        } catch (e) {
          if ((e as { code?: string }).code === 'aborted') throw e;
          rt.ctx.logger.warn({ err: (e as Error).message }, 'no thumbnail; continuing without one');
          thumbnailKey = undefined;
        }
        return { sourceVideoKey, thumbnailKey };
      }),
    );
    return { video };
  },
});
