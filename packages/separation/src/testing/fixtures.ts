/**
 * A speech + music mix with its clean references, made from the shared test recordings: speech
 * (jfk.wav, looped when longer than it) and music (music-coffee.wav) are converted by ffmpeg to
 * 44.1 kHz stereo float, the music scaled to a chosen speech-to-music ratio, and the mix is
 * their exact sum. Nothing is downloaded.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { readWav, runFfmpeg, writeWav, type PlanarAudio } from '@dub/media';
import { rms } from './metrics.js';

export interface MixFixtureOptions {
  /** Folder with jfk.wav and music-coffee.wav. */
  mediaDir: string;
  /** Folder the WAV files are written to (created). */
  dir: string;
  seconds: number;
  /** Speech RMS over music RMS, in dB (default 0: equal loudness). */
  speechToMusicDb?: number;
  sampleRate?: number;
  /** Seconds skipped at the start of the music (default 0). */
  musicStart?: number;
}

export interface MixFixture {
  sampleRate: number;
  frames: number;
  speechPath: string;
  musicPath: string;
  mixPath: string;
}

export interface LoadedMixFixture extends MixFixture {
  speech: PlanarAudio;
  music: PlanarAudio;
  mix: PlanarAudio;
}

async function convert(input: string, output: string, seconds: number, sampleRate: number, start: number): Promise<void> {
  await runFfmpeg(['-stream_loop', '-1', ...(start > 0 ? ['-ss', String(start)] : []), '-i', input, '-t', String(seconds), '-ac', '2', '-ar', String(sampleRate), '-c:a', 'pcm_f32le', '-f', 'wav', output]);
}

/** Write speech.wav, music.wav and mix.wav (float32, stereo) of `seconds` into `dir`. */
export async function makeSpeechMusicMix(opts: MixFixtureOptions): Promise<MixFixture> {
  const sampleRate = opts.sampleRate ?? 44100;
  await fs.mkdir(opts.dir, { recursive: true });
  const speechPath = path.join(opts.dir, 'speech.wav');
  const musicPath = path.join(opts.dir, 'music.wav');
  const mixPath = path.join(opts.dir, 'mix.wav');
  await convert(path.join(opts.mediaDir, 'jfk.wav'), speechPath, opts.seconds, sampleRate, 0);
  await convert(path.join(opts.mediaDir, 'music-coffee.wav'), musicPath, opts.seconds, sampleRate, opts.musicStart ?? 0);
  const speech = await readWav(speechPath);
  const music = await readWav(musicPath);
  const frames = Math.min(speech.channels[0]!.length, music.channels[0]!.length);
  const gain = rms(speech.channels) / rms(music.channels) / 10 ** ((opts.speechToMusicDb ?? 0) / 20);
  const s = speech.channels.map((c) => c.slice(0, frames));
  const m = music.channels.map((c) => c.slice(0, frames).map((v) => v * gain));
  const x = s.map((c, i) => c.map((v, j) => v + m[i]![j]!));
  await writeWav(speechPath, { sampleRate, channels: s }, { format: 'float32' });
  await writeWav(musicPath, { sampleRate, channels: m }, { format: 'float32' });
  await writeWav(mixPath, { sampleRate, channels: x }, { format: 'float32' });
  return { sampleRate, frames, speechPath, musicPath, mixPath };
}

/** The fixture with its three tracks read into memory. */
export async function loadMixFixture(f: MixFixture): Promise<LoadedMixFixture> {
  const [speech, music, mix] = await Promise.all([readWav(f.speechPath), readWav(f.musicPath), readWav(f.mixPath)]);
  return { ...f, speech, music, mix };
}
