/**
 * Per-segment actions beyond the built-in "Play source" and "Play dub": each registered action
 * gets a button in every segment's Listen group (`seg-{n}-{id}`), enabled when `enabled` says so,
 * and an output area under it (`seg-{n}-{id}-out`, with a polite live status line
 * `seg-{n}-{id}-status`). `run` gets the segment as edited, the client and a way to reload; the
 * page is busy (its buttons disabled) while it runs. The page's entry module registers "Re-dub"
 * (redub.ts: POST /segments/{id}/redub, then plays the line).
 */
import type { ScriptSegment, Version } from '@dub/core';
import type { StudioClient } from './api-client.js';

export interface SegmentActionContext {
  segment: ScriptSegment;
  /** Index in the script (0-based). */
  index: number;
  version: Version;
  client: StudioClient;
  /** The script has unsaved edits (an action that reads the saved script should refuse). */
  dirty: boolean;
  /** Reload the version and its script from the API (after the action changed them). */
  reload(): Promise<void>;
  /** Show a confirmation or an error in the page's status and alert regions. */
  say(text: string): void;
  fail(text: string): void;
}

export interface SegmentAction {
  /** Short id, used in the button's id: `seg-{n}-{id}`. */
  id: string;
  /** Visible button text, e.g. "Re-dub". */
  text: string;
  /** Accessible name for segment n, e.g. "Re-dub segment 3". */
  label(n: number): string;
  enabled(ctx: Omit<SegmentActionContext, 'reload' | 'say' | 'fail'>): boolean;
  run(ctx: SegmentActionContext): Promise<void>;
}

const actions: SegmentAction[] = [];

export function registerSegmentAction(a: SegmentAction): void {
  if (actions.some((x) => x.id === a.id)) throw new Error(`segment action ${a.id} is already registered`);
  actions.push(a);
}

export function segmentActions(): readonly SegmentAction[] {
  return actions;
}
