/**
 * The two players of the studio, one shown at a time: the source video and the dubbed result of
 * the last generation. Both share the timeline (the dub lasts as long as the source), so the
 * playhead is the shown player's time; switching carries the time over. A span (a segment's
 * start to end) plays and stops at its end. J/K/L and Space act on the shown player.
 */

export type Track = 'source' | 'dub';

export interface PlayerOptions {
  source: HTMLVideoElement | undefined;
  dub: HTMLVideoElement | undefined;
  /** The playhead moved (while playing: every animation frame). */
  onTime: (t: number) => void;
  /** The shown player changed. */
  onTrack: (track: Track) => void;
  onError: (message: string) => void;
}

const RATES = [1, 1.5, 2];

export class Player {
  private track: Track = 'source';
  private spanEnd: number | undefined;
  private frame = 0;

  constructor(private readonly o: PlayerOptions) {
    for (const [track, v] of [['source', o.source], ['dub', o.dub]] as const) {
      if (!v) continue;
      const report = () => {
        if (this.track === track) this.o.onTime(v.currentTime);
      };
      // timeupdate is a media task (every 15-250 ms while playing), so a span stops at its end
      // even when animation frames are starved (a hidden or busy tab)
      v.addEventListener('timeupdate', () => {
        if (this.track === track && !this.stopAtSpanEnd(v)) report();
      });
      v.addEventListener('seeked', report);
      v.addEventListener('play', () => {
        if (this.track === track) this.loop();
      });
      v.addEventListener('pause', () => {
        if (this.track !== track) return;
        this.spanEnd = undefined;
        v.playbackRate = 1;
        report();
      });
    }
  }

  get shown(): Track {
    return this.track;
  }

  get video(): HTMLVideoElement | undefined {
    return this.track === 'dub' ? this.o.dub : this.o.source;
  }

  has(track: Track): boolean {
    return Boolean(track === 'dub' ? this.o.dub : this.o.source);
  }

  get time(): number {
    return this.video?.currentTime ?? 0;
  }

  get playing(): boolean {
    const v = this.video;
    return Boolean(v && !v.paused && !v.ended);
  }

  /** Show the other player at the same time; the one hidden pauses. */
  show(track: Track): void {
    if (track === this.track || !this.has(track)) return;
    const from = this.video;
    const t = from?.currentTime ?? 0;
    from?.pause();
    this.track = track;
    const v = this.video!;
    if (Math.abs(v.currentTime - t) > 0.01) v.currentTime = t;
    this.o.onTrack(track);
    this.o.onTime(t);
  }

  seek(t: number): void {
    const v = this.video;
    if (!v) return;
    this.spanEnd = undefined;
    v.currentTime = Math.max(0, Number.isFinite(v.duration) ? Math.min(t, v.duration) : t);
    this.o.onTime(v.currentTime);
  }

  /** Play [start, end) on `track` and stop at `end`. */
  playSpan(track: Track, start: number, end: number): void {
    this.show(track);
    const v = this.video;
    if (!v) return;
    v.currentTime = start;
    v.playbackRate = 1;
    this.spanEnd = end;
    this.start(v);
  }

  toggle(): void {
    const v = this.video;
    if (!v) return;
    if (this.playing) v.pause();
    else {
      this.spanEnd = undefined;
      this.start(v);
    }
  }

  pause(): void {
    this.video?.pause();
  }

  /** L: play; while playing, the next rate (1.5x, 2x). */
  forward(): void {
    const v = this.video;
    if (!v) return;
    if (!this.playing) {
      v.playbackRate = 1;
      this.spanEnd = undefined;
      this.start(v);
      return;
    }
    const i = RATES.indexOf(v.playbackRate);
    v.playbackRate = RATES[Math.min(RATES.length - 1, i + 1)]!;
  }

  /** J: back `seconds` (browsers cannot play media backwards). */
  back(seconds = 5): void {
    const v = this.video;
    if (!v) return;
    this.spanEnd = undefined;
    v.currentTime = Math.max(0, v.currentTime - seconds);
    this.o.onTime(v.currentTime);
  }

  private start(v: HTMLVideoElement): void {
    v.play().catch((e: Error) => {
      if (e.name !== 'AbortError') this.o.onError(`The ${this.track === 'dub' ? 'dubbed' : 'source'} video cannot play: ${e.message}`);
    });
  }

  /** When a span is playing and has reached its end: pause there. True when it stopped. */
  private stopAtSpanEnd(v: HTMLVideoElement): boolean {
    if (this.spanEnd === undefined || v.paused || v.currentTime < this.spanEnd) return false;
    const end = this.spanEnd;
    v.pause();
    v.currentTime = end;
    this.spanEnd = undefined;
    this.o.onTime(end);
    return true;
  }

  private loop(): void {
    cancelAnimationFrame(this.frame);
    const tick = () => {
      const v = this.video;
      if (!v || v.paused) return;
      if (this.stopAtSpanEnd(v)) return;
      this.o.onTime(v.currentTime);
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }
}
