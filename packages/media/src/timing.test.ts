/**
 * streamStarts answers a PCM WAV without ffprobe (issue #27: three processes per call, ~0.2 CPU s
 * each here), with what ffprobe answers for it; every other file (compressed audio in a WAV, video)
 * still goes to ffprobe.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPcmWav, probedStreamStarts, streamStarts } from './timing.js';
import { writeWav } from './wav.js';
import { ffmpeg, makeTone, makeVideo, tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir('dub-timing-');
}, 60_000);
afterAll(async () => {
  await tmp.cleanup();
});

const tone = (n: number) => Float32Array.from({ length: n }, (_, i) => 0.3 * Math.sin(i / 7));

describe('streamStarts of WAV files', () => {
  it('answers PCM WAVs (float32 and pcm16 written here, s16/s24 extensible and with a LIST chunk from ffmpeg) as ffprobe does', async () => {
    const files: string[] = [];
    for (const format of ['float32', 'pcm16'] as const) {
      const f = tmp.file(`own-${format}.wav`);
      await writeWav(f, { sampleRate: 24000, channels: [tone(24000)] }, { format });
      files.push(f);
    }
    const src = tmp.file('src.wav');
    await makeTone(src, { duration: 1, sampleRate: 44100, channels: 2 });
    // ffmpeg writes a LIST (INFO) chunk before fmt with metadata, and the extensible header for 24 bits / 6 channels
    for (const [name, args] of [
      ['s16-list.wav', ['-metadata', 'title=dub', '-c:a', 'pcm_s16le']],
      ['s24-ext.wav', ['-ac', '6', '-c:a', 'pcm_s24le']],
      ['f32-ext.wav', ['-ac', '6', '-c:a', 'pcm_f32le']],
    ] as const) {
      await ffmpeg(['-y', '-i', src, ...args, tmp.file(name)]);
      files.push(tmp.file(name));
    }
    for (const f of files) {
      expect(await isPcmWav(f), f).toBe(true);
      for (const opts of [{}, { only: 'audio' as const }, { only: 'video' as const }, { audioStream: 1 }]) {
        expect(await streamStarts(f, opts), `${f} ${JSON.stringify(opts)}`).toEqual(await probedStreamStarts(f, opts));
      }
    }
  }, 120_000);

  it('leaves compressed audio in a WAV, other containers, short and missing files to ffprobe', async () => {
    const adpcm = tmp.file('adpcm.wav');
    await makeTone(adpcm, { duration: 1, codec: 'adpcm_ms' });
    const video = tmp.file('v.mp4');
    await makeVideo(video, { duration: 1 });
    const short = tmp.file('short.wav');
    await writeFile(short, Buffer.from('RIFF\x04\x00\x00\x00WAVE', 'latin1'));
    for (const f of [adpcm, video, short, tmp.file('missing.wav')]) expect(await isPcmWav(f), f).toBe(false);
    expect(await streamStarts(adpcm)).toEqual(await probedStreamStarts(adpcm));
    expect(await streamStarts(video)).toEqual(await probedStreamStarts(video));
  }, 120_000);
});
