/**
 * fetch-speech, fetch-background: the clean tracks given with the asset (a blob or a URL, without
 * the media's size limit); `null` where the job gives none. Given tracks replace the separation
 * model (trimmed to the same window by `separation`).
 */
import type { PipelineStage } from '../pipeline-stage.js';
import { resolveMedia } from '../media-input.js';
import { prepareStage, type PrepareState } from './state.js';

function givenTrack(kind: 'speech' | 'background'): PipelineStage<PrepareState> {
  return prepareStage({
    name: `fetch-${kind}`,
    weight: 0.5,
    inputs: [],
    async run(_, prep) {
      const ref = prep.job[kind];
      const given = ref ? await resolveMedia(ref, `${kind}_url`, prep.rt.store, prep.runner, prep.options.givenMedia) : null;
      return kind === 'speech' ? { givenSpeech: given } : { givenBackground: given };
    },
  });
}

export const fetchSpeech = givenTrack('speech');
export const fetchBackground = givenTrack('background');

/** Whether the asset came with clean tracks. */
export function hasGiven(state: Pick<PrepareState, 'givenSpeech' | 'givenBackground'>): boolean {
  return (state.givenSpeech ?? null) !== null || (state.givenBackground ?? null) !== null;
}
