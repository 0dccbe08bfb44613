/**
 * The quality of a generation (generate-quality-stage.ts: the plan and the cached stage;
 * generate-quality.ts: the measurements), as two steps of the list: the plan, once the lines are
 * placed and the speech timeline made (no progress of its own), which also starts the lines'
 * measurements (Whisper's back-transcription above all: they read the speech timeline and the
 * lines only, so they run beside the background, the mix, the encode, the lips and the mux; on
 * half the cores where the job releases its models: planQuality's `linesThreads`), and the quality stage after the mux, which joins
 * them and the dubbed track's loudness (beside the mux: video.ts) with the outputs' measurements,
 * then stops whatever of those a cached quality stage did not need.
 */
import { planQuality, qualityStage as runQualityStage, startQualityLines } from '../generate-quality-stage.js';
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

export const qualityPlanStage: GenerateStage = unweightedStage({
  name: 'quality-plan',
  inputs: ['synth', 'speechKey'],
  async run(s) {
    const { transcript, speakers, segments } = s.synth!;
    const qualityPlan = await planQuality(s.rt, { job: s.job, transcript, speakers, segments, speechKey: s.speechKey!, local: s.local, engines: s.opts.quality, work: s.work });
    const linesMeasured = startQualityLines(s.rt, qualityPlan, s.runner.context('quality').logger, s.earlyLines.signal);
    linesMeasured.catch(() => undefined);
    // the teardown stops them when a stage fails before the quality stage takes them
    s.held.linesMeasured = linesMeasured;
    return { qualityPlan, linesMeasured };
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
