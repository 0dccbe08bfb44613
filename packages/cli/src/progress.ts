/**
 * What `dub run` shows while it works. On a terminal: one live line per stage on stderr (the job,
 * the stage, the job's percent done, the job's elapsed time and ETA), rewritten in place and left
 * behind when the next stage starts. Elsewhere (a pipe, a log file, CI): plain lines, one when a
 * stage starts and one each time the job crosses a 25% step within it.
 * Quiet: nothing. Every stage's time is kept for the summary either way.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '@dub/core';

export type ProgressMode = 'tty' | 'lines' | 'quiet';

export interface StageTime {
  label: string;
  stage: string;
  seconds: number;
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

interface Live {
  label: string;
  stage: string;
  start: number;
  last: number;
  fraction: number;
  step: number;
}

export class ProgressDisplay {
  private live: Live | undefined;
  private readonly done: StageTime[] = [];
  /** When each job (label) first reported: its elapsed time and ETA count from there. */
  private readonly jobStart = new Map<string, number>();

  constructor(
    readonly mode: ProgressMode,
    private readonly out: NodeJS.WritableStream = process.stderr,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** A progress report of `stage` (of the job labelled `label`, e.g. the target locale or "prepare"). */
  update(label: string, stage: string, fraction: number): void {
    const t = this.now();
    if (!this.jobStart.has(label)) this.jobStart.set(label, t);
    if (!this.live || this.live.stage !== stage || this.live.label !== label) {
      this.finish();
      this.live = { label, stage, start: t, last: t, fraction: -1, step: -1 };
    }
    const live = this.live;
    live.last = t;
    const f = Math.min(1, Math.max(0, fraction));
    if (f === live.fraction) return;
    live.fraction = f;
    if (this.mode === 'tty') this.out.write(`\r\x1b[K${this.line(live)}`);
    else if (this.mode === 'lines') {
      const step = Math.floor(f * 4);
      if (step !== live.step) {
        live.step = step;
        this.out.write(`${this.line(live)}\n`);
      }
    }
  }

  /**
   * Ends the live stage (its line stays on a terminal) and records its time: from its first
   * report until the next stage's first report (or now), so the stage times add up to the run.
   */
  finish(): void {
    const live = this.live;
    if (!live) return;
    this.live = undefined;
    this.done.push({ label: live.label, stage: live.stage, seconds: (this.now() - live.start) / 1000 });
    if (this.mode === 'tty') this.out.write('\n');
  }

  /** Writes a message (a warning, an output path) without breaking the live line. */
  note(text: string): void {
    if (this.mode === 'tty' && this.live) this.out.write(`\r\x1b[K${text}\n${this.line(this.live)}`);
    else this.out.write(`${text}\n`);
  }

  /** Seconds per stage, in the order the stages ran (a stage seen twice is summed). */
  times(): StageTime[] {
    const merged = new Map<string, StageTime>();
    for (const s of this.done) {
      const k = `${s.label}\u0000${s.stage}`;
      const m = merged.get(k);
      if (m) m.seconds += s.seconds;
      else merged.set(k, { ...s });
    }
    return [...merged.values()];
  }

  private line(l: Live): string {
    const elapsed = (l.last - (this.jobStart.get(l.label) ?? l.start)) / 1000;
    const pct = `${Math.floor(l.fraction * 100)}%`.padStart(4);
    const eta = l.fraction > 0.02 && l.fraction < 1 ? `  eta ${formatDuration((elapsed * (1 - l.fraction)) / l.fraction)}` : '';
    return `${l.label.padEnd(8)} ${l.stage.padEnd(22)} ${pct}  ${formatDuration(elapsed)}${eta}`;
  }
}

export type LogFormat = 'text' | 'json';

/**
 * The run's logger. json: pino's JSON lines on stderr. text: warnings and errors as plain
 * `warning: ...` lines through `note` (debug and info too with a debug level), each warning kept
 * for the summary.
 */
export function createRunLogger(format: LogFormat, level: string, note: (line: string) => void, warnings: string[]): Logger {
  if (format === 'json') return pino({ level, name: 'dub-run' }, pino.destination(2));
  const names: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
  let pending = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const raw = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          const rec = JSON.parse(raw) as Record<string, unknown> & { level: number; msg?: string };
          const { level: lv, msg, time: _t, pid: _p, hostname: _h, name: _n, ...rest } = rec;
          const extra = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
          const text = `${msg ?? ''}${extra ? ` (${extra})` : ''}`;
          if (lv >= 40 && lv < 50) warnings.push(text);
          note(`${names[lv] ?? 'log'}: ${text}`);
        } catch {
          note(raw);
        }
      }
      cb();
    },
  });
  return pino({ level, name: 'dub-run' }, sink);
}
