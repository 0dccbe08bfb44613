/**
 * Test helpers: a generated test clip (ffmpeg lavfi sources) and an event log that can wait for
 * an event.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { WorkerEvent } from '@dub/core';

const exec = promisify(execFile);

/** A small H.264/AAC clip: test pattern video and a sine tone. */
export async function makeClip(file: string, seconds: number, ffmpeg = 'ffmpeg'): Promise<void> {
  await exec(ffmpeg, [
    '-nostdin', '-v', 'error',
    '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=15:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=22050:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-y', file,
  ]);
}

export class EventLog {
  readonly events: WorkerEvent[] = [];
  private waiters: { pred: (e: WorkerEvent) => boolean; resolve: (e: WorkerEvent) => void }[] = [];

  readonly handler = async (e: WorkerEvent): Promise<void> => {
    this.events.push(e);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(e)) return true;
      w.resolve(e);
      return false;
    });
  };

  /** The first event (already seen or coming) matching `pred`. */
  waitFor(pred: (e: WorkerEvent) => boolean, timeoutMs = 30_000, what = 'event'): Promise<WorkerEvent> {
    const seen = this.events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; got ${this.events.map((e) => `${e.asset_id}:${e.type}${'stage' in e ? `:${e.stage}` : ''}`).join(', ')}`)), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  of(assetId: string): WorkerEvent[] {
    return this.events.filter((e) => e.asset_id === assetId);
  }
}
