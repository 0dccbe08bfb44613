/**
 * The keyboard controller: maps a key (and what has the focus) to a shortcut (shortcuts.ts) and
 * runs it on the page's parts: save, undo/redo, playback, moving between segments, split, merge,
 * leaving a text field, the help dialog.
 */
import type { EditController } from './edit-controller.js';
import type { StudioHost } from './host.js';
import { shortcutFor, type FocusKind, type ShortcutAction } from './shortcuts.js';

export interface ShortcutTargets {
  edits: EditController;
  save(): Promise<void>;
  step(dir: -1 | 1): void;
  showShortcuts(): void;
}

export class ShortcutController {
  constructor(
    private readonly host: StudioHost,
    private readonly to: ShortcutTargets,
  ) {}

  onKey(e: KeyboardEvent): void {
    if (e.defaultPrevented || e.isComposing) return;
    if (this.host.main.querySelector<HTMLDialogElement>('#shortcuts-dialog')?.open) return;
    const action = shortcutFor(e, focusKind(e.target));
    if (!action || !this.host.ctx) return;
    if (this.run(action, e)) e.preventDefault();
  }

  /** Run a shortcut; true when it was used (the key's default is then prevented). */
  private run(a: ShortcutAction, e: KeyboardEvent): boolean {
    const { host, to } = this;
    switch (a) {
      case 'save':
        if (host.actions().edit) void to.save();
        return true;
      case 'undo':
      case 'redo':
        if (!host.editable()) return false;
        if (a === 'undo') to.edits.undo();
        else to.edits.redo();
        return true;
      case 'play-pause':
        host.player?.toggle();
        return true;
      case 'back':
        host.player?.back(5);
        return true;
      case 'pause':
        host.player?.pause();
        return true;
      case 'forward':
        host.player?.forward();
        return true;
      case 'previous-segment':
        to.step(-1);
        return true;
      case 'next-segment':
        to.step(1);
        return true;
      case 'seek-back':
      case 'seek-forward': {
        const d = (e.shiftKey ? 0.1 : 1) * (a === 'seek-back' ? -1 : 1);
        host.player?.seek(host.playhead + d);
        return true;
      }
      case 'split':
        to.edits.split();
        return true;
      case 'merge':
        to.edits.merge();
        return true;
      case 'edit-text': {
        const r = host.rows[host.selected];
        if (!r) return false;
        r.text.focus();
        return true;
      }
      case 'leave-field': {
        if (host.selected < 0) return false;
        (e.target as HTMLElement).blur();
        host.timeline?.focusSelected();
        return true;
      }
      case 'help':
        to.showShortcuts();
        return true;
    }
  }
}

/** What has the focus, for the keyboard shortcuts. */
export function focusKind(target: EventTarget | null): FocusKind {
  const el = target as HTMLElement | null;
  if (!el || typeof el.tagName !== 'string') return 'page';
  if (el.classList.contains('block-body')) return 'block';
  const tag = el.tagName;
  if (el.isContentEditable || tag === 'TEXTAREA' || tag === 'SELECT') return 'text';
  if (tag === 'INPUT') return ['checkbox', 'radio', 'range', 'button', 'submit', 'reset', 'color', 'file'].includes((el as HTMLInputElement).type) ? 'control' : 'text';
  if (tag === 'BUTTON' || tag === 'A' || tag === 'VIDEO' || tag === 'AUDIO' || tag === 'SUMMARY' || tag === 'DIALOG') return 'control';
  const role = el.getAttribute('role');
  if (role === 'slider' || role === 'tab' || role === 'button') return 'control';
  return 'page';
}
