/**
 * An in-memory job runtime for prepare tests: a FsBlobStore in a temp dir, events and enqueued
 * jobs collected in arrays, progress recorded. No worker, no NATS.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FsBlobStore, loadConfig, silentLogger, type EmittedEvent, type Job, type JobRuntime, type Progress } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { MEDIA_DIR } from './support/media.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The real recordings (DUB_TEST_MEDIA, default ../shared/media); see ./support/media.ts. */
export const MEDIA = MEDIA_DIR;

export interface TestRuntime extends JobRuntime {
  events: EmittedEvent[];
  jobs: Job[];
  progress: Progress[];
  dir: string;
}

export function makeRuntime(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-prepare-test-')), sessions = new SessionCache()): TestRuntime {
  const events: EmittedEvent[] = [];
  const jobs: Job[] = [];
  const progress: Progress[] = [];
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return {
    dir,
    events,
    jobs,
    progress,
    store: new FsBlobStore(path.join(dir, 'blobs')),
    ctx: { logger: silentLogger, onProgress: (p) => progress.push(p) },
    config: loadConfig({ DUB_DATA_DIR: dir, DUB_TMP_DIR: tmp, DUB_ONNX_THREADS: '2' }),
    sessions,
    emit: async (e) => void events.push(e),
    enqueue: async (j) => void jobs.push(j),
    attempt: 1,
  };
}

/** A fresh runtime over the same blob store (a redelivery or a second worker). */
export function sameStore(rt: TestRuntime): TestRuntime {
  return makeRuntime(rt.dir, rt.sessions);
}

/** A small video (color track) with the audio of `wav`, written into `dir`. */
export function videoFromWav(wav: string, out: string, opts: { video?: boolean; audio?: boolean } = {}): string {
  const args = ['-v', 'error', '-y'];
  if (opts.video !== false) args.push('-f', 'lavfi', '-i', 'color=c=navy:s=160x120:r=10');
  if (opts.audio !== false) args.push('-i', wav);
  if (opts.video !== false) args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (opts.audio !== false) args.push('-c:a', 'aac', '-b:a', '96k');
  if (opts.audio === false) args.push('-t', '3');
  else args.push('-shortest');
  args.push(out);
  execFileSync('ffmpeg', args);
  return out;
}

/** English speech spoken by espeak-ng into a WAV file, for tests that need some speech rather than a particular recording (they then run without the real recordings too). */
export function spokenWav(text: string, out: string): string {
  execFileSync('espeak-ng', ['-v', 'en-us', '-w', out, text]);
  return out;
}

export function eventsOf<T extends EmittedEvent['type']>(rt: TestRuntime, type: T): Extract<EmittedEvent, { type: T }>[] {
  return rt.events.filter((e): e is Extract<EmittedEvent, { type: T }> => e.type === type);
}

const SPANISH = /(^|[^\p{L}])(el|la|los|las|de|del|mi|mis|tu|su|en|y|que|qué|lo|para|por|un|una|es|no|puede|pide|país|hacer|americanos|amigos|tan)([^\p{L}]|$)/giu;
/** Number of common Spanish function words in `text`. */
export function spanishWords(text: string): number {
  return [...text.matchAll(SPANISH)].length;
}
