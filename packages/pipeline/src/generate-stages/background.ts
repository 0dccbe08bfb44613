/**
 * The background of a replace mix: the track the transcript names (prepare-asset's separation
 * output or the given clean track); when it names none, separated here from the source video's
 * audio, as a cached stage of its own. A voice-over mixes the original instead and has no
 * background, yet the stage keeps its progress share there (as generations always had).
 */
import path from 'node:path';
import type { StageContext } from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { STAGE_VERSION } from '../generate-synthesis.js';
import type { GenerateStage } from './state.js';

export const backgroundStage: GenerateStage = {
  name: 'background',
  weight: 4,
  inputs: ['synth'],
  async run(s) {
    if (s.voiceOver) return {};
    const { transcript, sourceIdentity } = s.synth!;
    const found = transcript.tracks?.background;
    if (found && (await s.rt.store.has(found))) {
      await s.runner.done('background', true, 0);
      return { backgroundKey: found };
    }
    const { rt, job, local } = s;
    const r = await s.runner.run('background', { v: STAGE_VERSION, source: sourceIdentity }, async (out, ctx: StageContext) => {
      const { extractAudio } = await import('@dub/media');
      const { separate } = await import('@dub/separation');
      const mix = path.join(out.dir, 'mix.wav');
      await extractAudio(await local(job.keys.sourceVideo), mix, { config: rt.config, sampleRate: 44100, channels: 2 }, ctx);
      const speech = path.join(out.dir, 'speech.wav');
      const background = path.join(out.dir, 'background.wav');
      const run = () => separate(mix, { config: rt.config, sessions: sessionCacheOf(rt.sessions), tmpDir: out.dir, speechPath: speech, backgroundPath: background }, ctx);
      if (rt.withLimit) await rt.withLimit('gpu', run);
      else await run();
      out.addFile('background.wav', background);
      return null;
    });
    return { backgroundKey: r.files['background.wav']! };
  },
};
