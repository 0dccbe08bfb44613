/** The event of a finished generation: version_generated, with its results, the engines and the report's key and counts. No progress share. */
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

export const eventStage: GenerateStage = unweightedStage({
  name: 'event',
  inputs: ['synth', 'speechKey', 'resultVideoKey', 'resultAudioKey', 'engines', 'report', 'reportKey'],
  async run(s) {
    await s.rt.emit({
      type: 'version_generated',
      version_id: s.job.versionId,
      generation: s.job.generation,
      result_video_key: s.resultVideoKey!,
      result_audio_key: s.resultAudioKey!,
      speech_key: s.speechKey!,
      ...(s.backgroundKey ? { background_key: s.backgroundKey } : {}),
      duration: s.synth!.duration,
      engines: s.engines!,
      quality: { report_key: s.reportKey!, ...s.report!.summary },
    });
    return {};
  },
});
