/** fetch-media: the source media, a blob or a URL (fetched through core safeFetch: SSRF-checked, size- and time-limited). */
import { resolveMedia } from '../media-input.js';
import { prepareStage } from './state.js';

export const fetchMedia = prepareStage({
  name: 'fetch-media',
  weight: 1,
  inputs: [],
  async run(_, prep) {
    return { media: await resolveMedia(prep.job.media, 'media_url', prep.rt.store, prep.runner, prep.options.media) };
  },
});
