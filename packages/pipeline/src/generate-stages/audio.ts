/**
 * The audio stage of a generation: the dubbed track (m4a, AAC) in chunks cached by their samples,
 * so a re-dub encodes only the chunks whose mix changed (a mix updated in place differs from the
 * previous generation's only within the update's spans: the chunks away from them keep their
 * identities unread). The lines' quality measurements (Whisper's back-transcription above all)
 * run beside it, started with the quality plan (quality.ts).
 */
import path from 'node:path';
import { encodeAudioChunked } from '@dub/media';
import { keyedFiles } from '../artifacts.js';
import { STAGE_VERSION } from '../generate-synthesis.js';
import type { AudioStageValue, GenerateStage } from './state.js';

export const audioStage: GenerateStage = {
  name: 'audio',
  weight: 0.5,
  inputs: ['mixed'],
  async run(s) {
    const { rt, local, media, previous } = s;
    const mixKey = s.mixed!.files['mix.wav']!;
    const chunking = s.opts.audio.chunking;
    const update = s.mixed!.value.update;
    const prevChunks = previous?.mixState?.chunks && update?.used && update.from_generation === previous.generation ? { ...previous.mixState.chunks, changed: update.spans.map(([start, end]) => ({ start, end })) } : undefined;
    const chunkStore = keyedFiles(rt.store, s.job.assetId, 'audio-chunk', 'chunk.adts', local);
    const audio = await s.runner.run<AudioStageValue>('audio', { v: STAGE_VERSION, mix: mixKey, ...chunking }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.m4a');
      const r = await encodeAudioChunked(await local(mixKey), file, { ...media, ...chunking, store: chunkStore, tmpDir: out.dir, ...(prevChunks ? { previous: prevChunks } : {}) }, ctx);
      out.addFile('result.m4a', file);
      return { chunks: r.chunks, encode: r.encode, ...(r.fallback ? { fallback: r.fallback } : {}), identities: { settings: r.settings, frames: r.frames, hashes: r.hashes }, hashesReused: r.hashesReused };
    });
    return { audio, audioKey: audio.files['result.m4a']! };
  },
};
