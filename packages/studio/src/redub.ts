/**
 * Re-dub: a segment action (hooks.ts) that re-synthesizes one line through the API
 * (POST /v1/versions/{id}/segments/{segment_id}/redub, StudioClient.redub) with the text, speaker
 * and times as they stand in the editor (unsaved edits included), and plays it.
 * The line's audio stays in its row as a small player (`#seg-N-redub-audio`) so it can be heard
 * again; the row says what the API did (synthesized now or from the cache, where it is placed).
 * While it runs, the page's buttons are disabled (the page's busy state) and the button says
 * "Re-dubbing…" with aria-busy.
 */
import type { LineAudio } from './api-client.js';
import { h } from './dom.js';
import { registerSegmentAction, type SegmentActionContext } from './hooks.js';
import { formatTime } from './time.js';

/** Status where the version has a script to read (the API answers 400 otherwise). */
const WITH_SCRIPT = new Set(['ReadyToEdit', 'Generating', 'Completed', 'Failed']);

/** Play a line's audio in its row: one player per row, replaced by the next re-dub. */
export function showLineAudio(doc: Document, holderId: string, audioId: string, label: string, line: LineAudio, autoplay: boolean): HTMLAudioElement {
  const holder = doc.getElementById(holderId);
  doc.getElementById(audioId)?.remove();
  const url = URL.createObjectURL(line.wav);
  const audio = h('audio', { id: audioId, class: 'line-audio', controls: true, preload: 'auto', 'aria-label': label, src: url });
  audio.addEventListener('emptied', () => URL.revokeObjectURL(url), { once: true });
  holder?.append(audio);
  if (autoplay) void audio.play().catch(() => undefined);
  return audio;
}

async function run(ctx: SegmentActionContext): Promise<void> {
  const n = ctx.index + 1;
  const doc = document;
  const button = doc.getElementById(`seg-${n}-redub`);
  const label = button?.textContent ?? 'Re-dub';
  button?.setAttribute('aria-busy', 'true');
  if (button) button.textContent = 'Re-dubbing\u2026';
  const status = doc.getElementById(`seg-${n}-redub-status`);
  if (status) status.textContent = `Re-dubbing segment ${n}\u2026`;
  const t0 = performance.now();
  try {
    const s = ctx.segment;
    const line = await ctx.client.redub(s.id, { text: s.target_text, speaker: s.speaker, start: s.start, end: s.end });
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    showLineAudio(doc, `seg-${n}-redub-out`, `seg-${n}-redub-audio`, `Re-dubbed line of segment ${n}`, line, true);
    const where = line.start !== undefined && line.end !== undefined ? `, placed ${formatTime(line.start)} to ${formatTime(line.end)}` : '';
    const how = line.regenerated ? 'synthesized now' : 'unchanged, from the cache';
    const msg = `Segment ${n} re-dubbed in ${seconds} s (${how}${where}, voice ${line.voiceSource || 'default'}, ${line.engine}).${ctx.dirty ? ' Save your edits so that the next generation uses this text.' : ''}`;
    if (status) status.textContent = msg;
    ctx.say(msg);
  } catch (e) {
    const msg = `Re-dub of segment ${n} failed: ${(e as Error).message}`;
    if (status) status.textContent = msg;
    ctx.fail(msg);
  } finally {
    button?.removeAttribute('aria-busy');
    if (button) button.textContent = label;
  }
}

let registered = false;

/** Register the Re-dub action (once). */
export function registerRedub(): void {
  if (registered) return;
  registered = true;
  registerSegmentAction({
    id: 'redub',
    text: '\u21bb Re-dub',
    label: (n) => `Re-dub segment ${n}`,
    enabled: (c) => WITH_SCRIPT.has(c.version.status) && c.segment.target_text.trim() !== '' && c.segment.end > c.segment.start,
    run,
  });
}
