/**
 * The video stage of a generation: the source's video (or the lips video) muxed with the dubbed
 * track, the .m4a's AAC stream taken as it is (the track is encoded once). The dubbed track's
 * loudness, the quality stage's longest measurement, starts here and runs while the video is
 * muxed (kept from the previous generation's measurement near an updated mix: previousLoudness).
 */
import path from 'node:path';
import { mux, streamStarts } from '@dub/media';
import { measureTrackLoudness } from '../generate-quality.js';
import { previousLoudness } from '../generate-quality-stage.js';
import { STAGE_VERSION } from '../generate-synthesis.js';
import type { GenerateStage } from './state.js';

export const videoStage: GenerateStage = {
  name: 'video',
  weight: 1,
  inputs: ['synth', 'mixed', 'audioKey'],
  async run(s) {
    const { local, media, previous, withLips } = s;
    const { sourceKey, sourceIdentity, duration } = s.synth!;
    const { locale } = s.job;
    const lang = s.job.target!.iso639_3;
    const audioKey = s.audioKey!;
    // with_lips: the mouth follows the dubbed speech (the lips stage's video); else the source's
    const videoKey = s.videoKey ?? sourceKey;
    const prevLoudness = previousLoudness(previous?.mixState, s.mixed!.value.update, previous?.generation, s.opts.audio.chunkFrames);
    const stopTrackLoudness = new AbortController();
    const qualityCtx = s.runner.context('quality');
    const trackLoudness = measureTrackLoudness(await local(audioKey), prevLoudness?.previousLoudness, media, { ...qualityCtx, signal: qualityCtx.signal ? AbortSignal.any([qualityCtx.signal, stopTrackLoudness.signal]) : stopTrackLoudness.signal });
    trackLoudness.catch(() => undefined);
    // mux 2: the video's timestamps kept, the dubbed track starting where the source's audio starts
    const video = await s.runner.run('video', { v: STAGE_VERSION, mux: 2, audio: audioKey, source: sourceIdentity, lang, duration, ...(withLips ? { lips: videoKey } : {}) }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.mp4');
      // the source video's audio starts this late on the timeline (its picture may start before it)
      const sourceAudio = (await streamStarts(await local(sourceKey), { ...media, only: 'audio' }, ctx)).audio ?? 0;
      const audioStart = sourceAudio > 0.0005 ? sourceAudio : 0;
      await mux({ ...media, video: await local(videoKey), audioTracks: [{ file: await local(audioKey), language: lang, title: `Dubbed (${locale})` }], output: file, durationSeconds: duration, copyAudio: true, audioStart }, ctx);
      out.addFile('result.mp4', file);
      return null;
    });
    return { videoKey, resultMp4: video.files['result.mp4']!, trackLoudness, stopTrackLoudness, ...(prevLoudness ? { prevLoudness } : {}) };
  },
};
