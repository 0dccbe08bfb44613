/**
 * The publish stage of a generation: the dubbed video and track under the generation number, and
 * the placed target word timings in the stored script (the studio and the target SRT read them).
 */
import type { JobRuntime, VersionScript } from '@dub/core';
import type { PlacedSegment } from '../generate-synthesis.js';
import type { GenerateStage } from './state.js';

export const publishStage: GenerateStage = {
  name: 'publish',
  weight: 0.2,
  inputs: ['synth', 'resultMp4', 'audioKey'],
  async run(s) {
    const { rt } = s;
    const { resultVideo: resultVideoKey, resultAudio: resultAudioKey, script: scriptKey } = s.job.keys;
    const t1 = performance.now();
    await rt.store.put(resultVideoKey, await rt.store.getStream(s.resultMp4!));
    await rt.store.put(resultAudioKey, await rt.store.getStream(s.audioKey!));
    await storeWordTimings(rt, scriptKey, s.synth!.script, s.synth!.segments);
    await s.runner.done('publish', false, (performance.now() - t1) / 1000);
    return { resultVideoKey, resultAudioKey };
  },
};

/** Put the placed target word timings into the stored script (the studio and target SRT read them). */
async function storeWordTimings(rt: JobRuntime, scriptKey: string, script: VersionScript, segments: readonly PlacedSegment[]): Promise<void> {
  const byId = new Map(segments.map((s) => [s.slot.segment.id, s]));
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  const updated: VersionScript = {
    ...script,
    segments: script.segments.map((seg) => {
      const s = byId.get(seg.id);
      if (!s) return seg;
      const at = s.placement.start;
      return { ...seg, target_words: (s.result?.value.words ?? []).map((w) => ({ text: w.text, start: r3(at + w.start), end: r3(at + w.end) })) };
    }),
  };
  await rt.store.put(scriptKey, Buffer.from(JSON.stringify(updated)));
}
