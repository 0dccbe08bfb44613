/**
 * probe: probe and classify the source (unsupported_media, missing_audio_track), then the trim
 * window (checkTrim: invalid_input, time_out_of_range) and the job's limit of its duration
 * (video_duration_limit_reached).
 */
import { AssetError } from '@dub/core';
import { checkTrim, type MediaInfo } from '@dub/media';
import { prepareStage } from './state.js';

export const probe = prepareStage({
  name: 'probe',
  weight: 0.2,
  inputs: ['media'],
  async run({ media }, { job, runner, stages, files, env, options }) {
    const probed = await runner.run('probe', { media: media.identity }, async (_out, ctx) => {
      const info = await stages.probe(await files.path(media.key), env, ctx);
      return { ...info, file: '' } satisfies MediaInfo;
    });
    const info = probed.value;
    const range = checkTrim(info.duration, job.start_time, job.end_time);
    const duration = range.end - range.start;
    const max = options.maxVideoSeconds;
    if (max !== undefined && duration > max) {
      throw new AssetError('video_duration_limit_reached', `the video is ${duration.toFixed(1)} s long (after trimming); the limit is ${max} s`, {
        details: { duration, max },
      });
    }
    return { info, range, duration };
  },
});
