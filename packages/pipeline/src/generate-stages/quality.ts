/**
 * The quality of a generation (generate-quality-stage.ts: the plan and the cached stage;
 * generate-quality.ts: the measurements), as two steps of the list: the plan, once the lines are
 * placed and the speech timeline made (no progress of its own), and the quality stage after the
 * mux, which joins the lines' measurements (started beside the encode: audio.ts) and the dubbed
 * track's loudness (beside the mux: video.ts) with the outputs' measurements, then stops whatever
 * of those a cached quality stage did not need.
 */
import { planQuality, qualityStage as runQualityStage } from '../generate-quality-stage.js';
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

export const qualityPlanStage: GenerateStage = unweightedStage({
  name: 'quality-plan',
  inputs: ['synth', 'speechKey'],
  async run(s) {
    const { transcript, speakers, segments } = s.synth!;
    return { qualityPlan: await planQuality(s.rt, { job: s.job, transcript, speakers, segments, speechKey: s.speechKey!, local: s.local, engines: s.opts.quality, work: s.work }) };
  },
});

export const qualityStage: GenerateStage = {
  name: 'quality',
  weight: 2,
  inputs: ['synth', 'speechKey', 'qualityPlan', 'linesMeasured', 'resultMp4', 'audioKey', 'trackLoudness', 'stopTrackLoudness'],
  async run(s) {
    const { segments, sourceKey } = s.synth!;
    const quality = await runQualityStage(
      s.rt,
      s.runner,
      { segments, speechKey: s.speechKey!, sourceKey, videoKey: s.resultMp4!, audioKey: s.audioKey!, local: s.local, media: s.media, ...(s.prevLoudness ?? {}), trackLoudness: s.trackLoudness! },
      s.qualityPlan!,
      s.linesMeasured,
    );
    // a quality stage from the cache did not need them
    s.stopTrackLoudness!.abort();
    await s.trackLoudness!.catch(() => undefined);
    s.earlyLines.abort();
    await s.linesMeasured!.catch(() => undefined);
    return { quality };
  },
};
