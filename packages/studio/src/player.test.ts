import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Player } from './player.js';

/** A video element as the player uses it: time, paused, rate, play/pause and media events. */
class FakeVideo extends EventTarget {
  currentTime = 0;
  paused = true;
  ended = false;
  playbackRate = 1;
  duration = 30;
  play(): Promise<void> {
    this.paused = false;
    this.dispatchEvent(new Event('play'));
    return Promise.resolve();
  }
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.dispatchEvent(new Event('pause'));
  }
  /** Playback advanced to `t` and the browser queued its timeupdate task. */
  advance(t: number): void {
    this.currentTime = t;
    this.dispatchEvent(new Event('timeupdate'));
  }
}

describe('Player spans', () => {
  const frames: FrameRequestCallback[] = [];
  const g = globalThis as unknown as Record<string, unknown>;
  beforeEach(() => {
    frames.length = 0;
    // animation frames are requested but never run: a starved or hidden tab
    g.requestAnimationFrame = (cb: FrameRequestCallback) => frames.push(cb);
    g.cancelAnimationFrame = () => undefined;
  });
  afterEach(() => {
    delete g.requestAnimationFrame;
    delete g.cancelAnimationFrame;
  });

  const make = () => {
    const source = new FakeVideo();
    const times: number[] = [];
    const player = new Player({ source: source as unknown as HTMLVideoElement, dub: undefined, onTime: (t) => times.push(t), onTrack: () => undefined, onError: (m) => { throw new Error(m); } });
    return { source, player, times };
  };

  it('stops a span at its end on timeupdate alone, when no animation frame runs', () => {
    const { source, player, times } = make();
    player.playSpan('source', 2, 4.5);
    expect(source.paused).toBe(false);
    expect(source.currentTime).toBe(2);
    source.advance(3.9);
    expect(source.paused).toBe(false);
    source.advance(4.62);
    expect(source.paused).toBe(true);
    expect(source.currentTime).toBe(4.5);
    expect(times.at(-1)).toBe(4.5);
    // later time updates do not restart or move it
    source.advance(4.5);
    expect(source.paused).toBe(true);
  });

  it('stops on the animation frame when frames do run, and plain play is not cut', () => {
    const { source, player } = make();
    player.playSpan('source', 1, 2);
    source.currentTime = 2.01;
    for (const f of frames.splice(0)) f(0);
    expect(source.paused).toBe(true);
    expect(source.currentTime).toBe(2);
    player.toggle();
    expect(source.paused).toBe(false);
    source.advance(9);
    expect(source.paused).toBe(false);
  });
});
