/** audio: the mix of the trim window as a 44.1 kHz stereo WAV (`mix.wav`), from the original media. */
import path from 'node:path';
import { prepareStage } from './state.js';

/** The format of the mix and of the given clean tracks. */
export const MIX_FORMAT = { sampleRate: 44100, channels: 2 };

export const audio = prepareStage({
  name: 'audio',
  weight: 0.5,
  inputs: ['media', 'range'],
  async run({ media, range }, { runner, stages, files, env }) {
    // v2: sample 0 is the source's presentation origin (an audio stream that starts late is preceded by silence)
    const mix = await runner.run('audio', { v: 2, media: media.identity, range }, async (out, ctx) => {
      const file = path.join(out.dir, 'mix.wav');
      await stages.extractAudio(await files.path(media.key), file, range, MIX_FORMAT, env, ctx);
      out.addFile('mix.wav', file);
      return null;
    });
    return { audio: mix };
  },
});
