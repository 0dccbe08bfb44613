import { describe, expect, it } from 'vitest';
import { shortcutFor } from './shortcuts.js';

describe('shortcutFor', () => {
  it('Ctrl/Cmd shortcuts work everywhere, even while typing', () => {
    for (const f of ['text', 'control', 'block', 'page'] as const) {
      expect(shortcutFor({ key: 's', ctrlKey: true }, f)).toBe('save');
      expect(shortcutFor({ key: 'S', metaKey: true }, f)).toBe('save');
      expect(shortcutFor({ key: 'z', ctrlKey: true }, f)).toBe('undo');
      expect(shortcutFor({ key: 'Z', ctrlKey: true, shiftKey: true }, f)).toBe('redo');
      expect(shortcutFor({ key: 'y', ctrlKey: true }, f)).toBe('redo');
    }
    expect(shortcutFor({ key: 's', ctrlKey: true, altKey: true }, 'page')).toBeUndefined();
  });
  it('single keys never act in a text field (Esc leaves it) nor on other controls', () => {
    for (const key of [' ', 'j', 'k', 'l', 's', 'm', 'ArrowUp', 'ArrowLeft', 'Enter', '?']) {
      expect(shortcutFor({ key }, 'text')).toBeUndefined();
      expect(shortcutFor({ key }, 'control')).toBeUndefined();
    }
    expect(shortcutFor({ key: 'Escape' }, 'text')).toBe('leave-field');
    expect(shortcutFor({ key: 'Escape' }, 'page')).toBeUndefined();
  });
  it('on the page and on a timeline block', () => {
    const page = (key: string, shiftKey = false) => shortcutFor({ key, shiftKey }, 'page');
    expect([' ', 'j', 'k', 'l', 'J', 's', 'm', '?', 'Enter'].map((k) => page(k))).toEqual(['play-pause', 'back', 'pause', 'forward', 'back', 'split', 'merge', 'help', 'edit-text']);
    expect(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight'].map((k) => page(k))).toEqual(['previous-segment', 'next-segment', 'seek-back', 'seek-forward']);
    expect(page('ArrowLeft', true)).toBe('seek-back');
    expect(['ArrowLeft', 'ArrowRight', ' ', 'Enter'].map((key) => shortcutFor({ key }, 'block'))).toEqual(['previous-segment', 'next-segment', 'play-pause', 'edit-text']);
    expect(shortcutFor({ key: 'j', altKey: true }, 'page')).toBeUndefined();
    expect(page('x')).toBeUndefined();
  });
});
