/** The timeline stage of a generation: the fitted lines at their placed times, one speech track (exact sample offsets). */
import path from 'node:path';
import { STAGE_VERSION } from '../generate-synthesis.js';
import { renderSpeechTimeline, timelineSampleRate } from '../generate-timeline.js';
import type { GenerateStage } from './state.js';

export const timelineStage: GenerateStage = {
  name: 'timeline',
  weight: 0.5,
  inputs: ['synth', 'voiced'],
  async run(s) {
    const { duration, getEngine } = s.synth!;
    const voiced = s.voiced!;
    const sampleRate = timelineSampleRate(voiced.map((v) => v.result.value.sampleRate), voiced.length ? 0 : (await getEngine()).capabilities.sampleRate);
    const timeline = await s.runner.run('timeline', { v: STAGE_VERSION, duration, sampleRate, segments: voiced.map((v) => [v.result.key, v.placement.start]) }, async (out, ctx) => {
      const entries = [];
      for (const v of voiced) {
        entries.push({ file: await s.local(v.result.files['speech.wav']!), start: v.placement.start, frames: v.result.value.frames, sampleRate: v.result.value.sampleRate });
      }
      const file = path.join(out.dir, 'speech.wav');
      await renderSpeechTimeline(file, entries, sampleRate, duration, ctx, s.media);
      out.addFile('speech.wav', file);
      return null;
    });
    return { speechKey: timeline.files['speech.wav']! };
  },
};
