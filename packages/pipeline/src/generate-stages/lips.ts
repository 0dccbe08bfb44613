/**
 * The lips stage of a with_lips generation (generate-lips.ts: face tracking once per source, then
 * the mouth re-rendered in reusable chunks to follow the dubbed speech timeline, not the mix): the
 * video the mux takes instead of the source's, its chunk blobs and its engine record.
 */
import { modelEngineRecord, recordTermsOf } from '@dub/core';
import { LIPS_ENGINES } from '@dub/lips';
import { runLipsStage } from '../generate-lips.js';
import type { GenerateStage } from './state.js';

export const lipsStage: GenerateStage = {
  name: 'lips',
  weight: 12,
  progress: { faces: 3, lips: 9 },
  inputs: ['synth', 'voiced', 'speechKey'],
  when: (s) => s.withLips,
  async run(s) {
    const { sourceKey, sourceIdentity, transcript } = s.synth!;
    const { locale } = s.job;
    const words = s.voiced!.flatMap((v) => v.result.value.words.map((w) => ({ text: w.text, start: v.placement.start + w.start, end: v.placement.start + w.end })));
    const lips = await runLipsStage(s.rt, s.runner, { job: s.job, sourceKey, sourceIdentity, speechKey: s.speechKey!, ...(transcript.tracks ? { sourceSpeechKey: transcript.tracks.speech } : {}), words, media: s.media, local: s.local, ...(s.opts.lips.options ? { options: s.opts.lips.options } : {}) });
    const selected = s.opts.lips.selected;
    // the registry's reason for the engine it chose (under the model policy it names what auto passed over)
    const reason = lips.engine === lips.chosen ? lips.reason : selected === 'explicit' ? `DUB_LIPS_ENGINE=${lips.engine}` : lips.engine === 'wav2lip' ? 'auto: the Wav2Lip model is installed' : 'auto: no Wav2Lip model here (classical mouth warp)';
    const lipsRecord = lips.modelFile
      ? await modelEngineRecord(lips.engine, lips.modelFile, { label: lips.label, selected, reason, provider: lips.provider, terms: recordTermsOf(LIPS_ENGINES.termsOf(lips.engine, locale, { models: {} })) })
      : { id: lips.engine, label: lips.label, ...(lips.passedOver ? { passed_over: lips.passedOver } : {}), selected, reason };
    return { videoKey: lips.videoKey, lipsChunks: lips.chunkKeys ?? null, lipsRecord };
  },
};
