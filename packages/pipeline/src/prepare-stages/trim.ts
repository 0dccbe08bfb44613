/**
 * trim: the source video of the trim window, stored as the asset's source video blob. Only the
 * versions read it, so it is made beside the audio stages (a cut window's AAC encode beside the ASR; an uncut MP4 with AAC is copied):
 * the stage starts it and hands on the pending work (`trimmed`); `thumbnail` follows it and
 * `transcript` awaits both. A failed trim fails the job with its error once they are done.
 */
import path from 'node:path';
import { blobKeys } from '@dub/core';
import { copyBlob } from '../local-files.js';
import { prepareStage } from './state.js';

export const trim = prepareStage({
  name: 'trim',
  weight: 2,
  inputs: ['media', 'info', 'range'],
  async run({ media, info, range }, { job, rt, runner, stages, files, env, beside }) {
    const trimmed = beside.add(
      (async () => {
        // v2: the streams keep their places on the source's presentation timeline (no shift for AAC priming)
        const result = await runner.run('trim', { v: 2, media: media.identity, range }, async (out, ctx) => {
          const file = path.join(out.dir, 'source.mp4');
          await stages.trim(await files.path(media.key), file, range, { ...info, file: await files.path(media.key) }, env, ctx);
          out.addFile('source.mp4', file);
          return { start: range.start, end: range.end };
        });
        const sourceVideoKey = blobKeys.sourceVideo(job.asset_id);
        if (!result.cached || !(await rt.store.has(sourceVideoKey))) await copyBlob(rt.store, result.files['source.mp4']!, sourceVideoKey);
        return { result, sourceVideoKey };
      })(),
    );
    return { trimmed };
  },
});
