/**
 * The engines drive frame i by the speech at i / fps, counted from the picture's first frame. The
 * dubbed speech and its words are on the dubbing timeline, whose origin is the source's earliest
 * stream: where the picture starts later (a video 0.3 s after its sound), the speech and the words
 * are taken from the picture's start, so the mouth moves with the speech heard with that frame.
 * (A variable frame rate is still driven at the average rate.)
 */
import path from 'node:path';
import type { PartialContext } from '@dub/core';
import { runFfmpeg, streamStarts, type MediaToolOptions } from '@dub/media';
import type { DubbedSpeech } from '../types.js';

/** Below this the picture starts at the origin (half a millisecond: timestamp rounding). */
const EPSILON = 0.0005;

export async function speechFromPictureStart(video: string, speech: DubbedSpeech, work: string, media: MediaToolOptions, ctx: PartialContext): Promise<{ speech: DubbedSpeech; offset: number }> {
  const offset = (await streamStarts(video, { ...media, only: 'video' }, ctx)).video ?? 0;
  if (!(offset > EPSILON)) return { speech, offset: 0 };
  const cut = async (file: string, name: string): Promise<string> => {
    const out = path.join(work, name);
    await runFfmpeg(['-i', file, '-map', '0:a:0', '-af', `atrim=start=${offset.toFixed(6)},asetpts=PTS-STARTPTS`, '-c:a', 'pcm_f32le', '-f', 'wav', out], { ...media, stage: 'lips_speech', progress: false }, ctx);
    return out;
  };
  const shifted: DubbedSpeech = { ...speech, file: await cut(speech.file, 'speech-from-picture.wav') };
  if (speech.sourceSpeech) shifted.sourceSpeech = await cut(speech.sourceSpeech, 'source-speech-from-picture.wav');
  if (speech.words) shifted.words = speech.words.filter((w) => w.end > offset).map((w) => ({ ...w, start: Math.max(0, w.start - offset), end: w.end - offset }));
  return { speech: shifted, offset };
}
