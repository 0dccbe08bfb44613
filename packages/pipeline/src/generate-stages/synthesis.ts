/**
 * The synthesis stage of a generation: generate-synthesis.ts's synthesizeLines (the engines, the
 * source's duration, the voice plan, every line at speed 1, placed, then fitted to its time),
 * which the one-line re-dub (redub.ts) runs too. It reports under three names of its own.
 */
import type { GenerateStage, VoicedSegment } from './state.js';
import { synthesizeLines } from '../generate-synthesis.js';
import { sessionsLoadedBy } from './release-tts.js';

export const synthesisStage: GenerateStage = {
  name: 'synthesis',
  weight: 7.3,
  progress: { source: 0.3, voices: 1, synthesis: 6 },
  inputs: [],
  async run(s) {
    // the sessions it loads: release-tts releases them where models are not kept
    const { value: synth, loaded } = await sessionsLoadedBy(s.rt.sessions, () => synthesizeLines(s.job, s.rt, s.opts, { runner: s.runner, cache: s.cache, local: s.local, media: s.media }));
    // the teardown releases the engine whatever happens next
    s.held.synth = synth;
    const voiced = synth.segments.filter((seg): seg is VoicedSegment => seg.result !== undefined);
    return { synth, voiced, synthSessions: loaded };
  },
};
