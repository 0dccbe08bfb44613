/**
 * What the studio's panels and controllers see of the page (StudioApp implements it): the shared
 * state (client, context, draft store, player, timeline, selection) and the page-wide steps
 * (refresh, rebuild, select, run an action, messages). Panels and controllers import only this
 * file and each other's leaf modules, never app.ts, so no import runs back up.
 */
import type { SrtProfileName } from '@dub/core';
import type { StudioClient } from './api-client.js';
import type { DraftStore } from './draft-store.js';
import type { Player, Track } from './player.js';
import type { StudioActions } from './status.js';
import type { Timeline } from './timeline.js';
import type { StudioContext } from './types.js';
import type { Span } from './waveform.js';

/** One row of the segment table. */
export interface Row {
  tr: HTMLTableRowElement;
  start: HTMLInputElement;
  end: HTMLInputElement;
  text: HTMLTextAreaElement;
  issues: HTMLUListElement;
  reading: HTMLParagraphElement;
  quality: HTMLDivElement;
  playSource: HTMLButtonElement;
  playDub: HTMLButtonElement;
  actions: HTMLButtonElement[];
  speaker: HTMLSelectElement | undefined;
}

export interface SelectOptions {
  seek?: number | 'start';
  scroll?: 'row' | 'block' | 'both';
}

export interface StudioHost {
  readonly win: Window;
  /** The page's main region (#app). */
  readonly main: HTMLElement;
  readonly store: DraftStore;
  readonly client: StudioClient | undefined;
  readonly ctx: StudioContext | undefined;
  /** An action is running: the buttons are disabled. */
  busy: boolean;
  readonly player: Player | undefined;
  readonly timeline: Timeline | undefined;
  /** The pauses found in the source audio's waveform. */
  readonly silences: Span[];
  readonly playhead: number;
  /** The selected segment (-1: none). */
  selected: number;
  /** The segment table's rows. */
  readonly rows: readonly Row[];

  actions(): StudioActions;
  editable(): boolean;
  /** The SRT profile chosen in the toolbar (also the reading-speed limit). */
  profile(): SrtProfileName;
  /** The version as the API now has it (context kept). */
  setVersion(v: StudioContext['version']): void;

  render(): void;
  rebuild(): void;
  refreshEdits(): void;
  queueRefresh(): void;
  reload(): Promise<void>;
  /** Poll the version's status while it moves (generation, preparation). */
  schedulePoll(): void;
  select(i: number, o?: SelectOptions): void;
  applySelection(scroll: boolean): void;
  play(track: Track, i: number): void;
  /** Run an action with the buttons disabled (unless `lock` is false); API errors are shown. */
  run(fn: (c: StudioClient) => Promise<void>, lock?: boolean): Promise<void>;

  say(text: string): void;
  showError(text: string): void;
  clearMessages(): void;
}
