/**
 * The studio's keyboard shortcuts: which key does what, where. Pure, so a unit test can check the
 * table; the page calls shortcutFor on every keydown and runs the action it names.
 */

export type ShortcutAction =
  | 'save'
  | 'undo'
  | 'redo'
  | 'play-pause'
  | 'back'
  | 'pause'
  | 'forward'
  | 'previous-segment'
  | 'next-segment'
  | 'seek-back'
  | 'seek-forward'
  | 'split'
  | 'merge'
  | 'edit-text'
  | 'leave-field'
  | 'help';

/** What has the focus, as far as shortcuts care. */
export type FocusKind =
  /** Typing goes there: text inputs, textareas, selects. */
  | 'text'
  /** A control that Space/Enter activate or arrows move: buttons, links, checkboxes, tabs, sliders, range inputs. */
  | 'control'
  /** A segment block of the timeline (a button, but Space plays and arrows move between segments). */
  | 'block'
  /** Nothing in particular (the page, a table cell, the video). */
  | 'page';

export interface KeyLike {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  shiftKey?: boolean;
  altKey?: boolean;
}

export function shortcutFor(e: KeyLike, focus: FocusKind): ShortcutAction | undefined {
  const mod = Boolean(e.ctrlKey || e.metaKey);
  const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (mod && !e.altKey) {
    if (k === 's' && !e.shiftKey) return 'save';
    if (k === 'z') return e.shiftKey ? 'redo' : 'undo';
    if (k === 'y' && !e.shiftKey) return 'redo';
    return undefined;
  }
  if (mod || e.altKey) return undefined;
  if (focus === 'text') return k === 'Escape' ? 'leave-field' : undefined;
  if (k === 'Escape') return undefined;
  if (focus === 'control') return undefined;
  switch (k) {
    case ' ':
      return 'play-pause';
    case 'j':
      return 'back';
    case 'k':
      return 'pause';
    case 'l':
      return 'forward';
    case 'ArrowUp':
      return 'previous-segment';
    case 'ArrowDown':
      return 'next-segment';
    case 'ArrowLeft':
      return focus === 'block' ? 'previous-segment' : 'seek-back';
    case 'ArrowRight':
      return focus === 'block' ? 'next-segment' : 'seek-forward';
    case 's':
      return 'split';
    case 'm':
      return 'merge';
    case 'Enter':
      return focus === 'page' || focus === 'block' ? 'edit-text' : undefined;
    case '?':
      return 'help';
    default:
      return undefined;
  }
}

/** The table the help dialog and the README show. */
export const SHORTCUTS: readonly { keys: string; does: string }[] = [
  { keys: 'Space', does: 'play or pause the player shown (source or dub)' },
  { keys: 'K', does: 'pause' },
  { keys: 'L', does: 'play; again: faster (1.5x, 2x)' },
  { keys: 'J', does: 'back 5 s (browsers cannot play backwards); again while playing: back 5 s more' },
  { keys: '\u2191 / \u2193', does: 'previous / next segment (selects it and moves the playhead to its start)' },
  { keys: '\u2190 / \u2192', does: 'playhead back / forward 1 s (Shift: 0.1 s); on a timeline block: previous / next segment' },
  { keys: 'S', does: 'split the selected segment (or the one under the playhead) at the playhead' },
  { keys: 'M', does: 'merge the selected segment with the next one' },
  { keys: 'Enter', does: 'edit the selected segment\u2019s target text (on a timeline block too)' },
  { keys: 'Esc', does: 'leave a text field (back to the timeline block), so these keys work again' },
  { keys: 'Ctrl/\u2318 + S', does: 'save' },
  { keys: 'Ctrl/\u2318 + Z', does: 'undo' },
  { keys: 'Ctrl/\u2318 + Shift + Z, Ctrl + Y', does: 'redo' },
  { keys: 'On an edge of the selected block', does: '\u2190/\u2192 move it 50 ms (Shift: 0.5 s), Page Up/Down to the previous/next pause' },
  { keys: '?', does: 'show these shortcuts' },
];
