/**
 * The toolbar: save, discard, undo, redo and the unsaved-changes count; generate (with or without
 * lips) and revise; SRT download (locality, profile); the keyboard shortcuts dialog. What a status
 * allows is the API's decision: the buttons follow `studioActions`.
 */
import type { GenerateMode, SrtLocality, SrtProfileName } from '@dub/core';
import { h } from './dom.js';
import type { EditController } from './edit-controller.js';
import type { StudioHost } from './host.js';
import { setText } from './messages.js';
import { SHORTCUTS } from './shortcuts.js';
import type { StudioActions } from './status.js';

const SRT_PROFILES: readonly SrtProfileName[] = ['regular', 'mobile', 'global_regular', 'global_mobile'];

export class ToolbarPanel {
  constructor(
    private readonly host: StudioHost,
    private readonly parts: { edits: EditController; save: () => Promise<void> },
  ) {}

  /** The toolbar's groups. */
  build(act: StudioActions): Node[] {
    const { edits, save } = this.parts;
    const mode = h('select', { id: 'generate-mode', disabled: !act.generate }, h('option', { value: 'no_lips' }, 'without lips'), h('option', { value: 'with_lips' }, 'with lips'));
    const locality = h('select', { id: 'srt-locality' }, h('option', { value: 'target' }, 'target'), h('option', { value: 'source' }, 'source'));
    const profile = h('select', { id: 'srt-profile', 'aria-describedby': 'srt-profile-help', on: { change: () => this.host.refreshEdits() } }, ...SRT_PROFILES.map((p) => h('option', { value: p }, p)));
    return [
      h('div', { class: 'group' },
        h('button', { type: 'button', id: 'save', disabled: true, 'aria-keyshortcuts': 'Control+S', on: { click: () => void save() } }, 'Save'),
        h('button', { type: 'button', id: 'discard', disabled: true, on: { click: () => edits.discard() } }, 'Discard'),
        h('button', { type: 'button', id: 'undo', disabled: true, 'aria-keyshortcuts': 'Control+Z', on: { click: () => edits.undo() } }, 'Undo'),
        h('button', { type: 'button', id: 'redo', disabled: true, 'aria-keyshortcuts': 'Control+Shift+Z', on: { click: () => edits.redo() } }, 'Redo'),
        h('span', { id: 'dirty', class: 'dirty', 'aria-live': 'polite' }),
      ),
      h('div', { class: 'group' },
        h('label', { for: 'generate-mode' }, 'Generate'),
        mode,
        h('button', { type: 'button', id: 'generate', disabled: !act.generate, on: { click: () => void this.generate(mode.value as GenerateMode) } }, 'Generate'),
        h('button', { type: 'button', id: 'revise', disabled: !act.revise, on: { click: () => void this.revise() } }, 'Revise'),
      ),
      h('div', { class: 'group' },
        h('label', { for: 'srt-locality' }, 'SRT'),
        locality,
        h('label', { for: 'srt-profile', class: 'visually-hidden' }, 'SRT profile (also the reading-speed limit of the lines)'),
        profile,
        h('span', { id: 'srt-profile-help', class: 'visually-hidden' }, 'The line lengths and reading speeds shown in the segments are checked against this profile.'),
        h('button', { type: 'button', id: 'download-srt', on: { click: () => void this.downloadSrt(locality.value as SrtLocality, profile.value as SrtProfileName) } }, 'Download SRT'),
      ),
      h('div', { class: 'group' }, h('button', { type: 'button', id: 'shortcuts', 'aria-keyshortcuts': 'Shift+?', on: { click: () => this.showShortcuts() } }, 'Keyboard shortcuts')),
    ];
  }

  /** The SRT profile chosen (also the reading-speed limit of the lines). */
  profile(): SrtProfileName {
    const v = this.host.main.querySelector<HTMLSelectElement>('#srt-profile')?.value;
    return v && (SRT_PROFILES as readonly string[]).includes(v) ? (v as SrtProfileName) : 'regular';
  }

  /** The buttons' state after an edit or while an action runs. */
  refresh(act: StudioActions): void {
    const { main, busy, store } = this.host;
    const btn = (id: string) => main.querySelector<HTMLButtonElement>(`#${id}`);
    const pending = store.pendingCount();
    const parseErrors = store.parseErrors.size;
    const save = btn('save');
    if (save) save.disabled = busy || !act.edit || (pending === 0 && parseErrors === 0);
    const discard = btn('discard');
    if (discard) discard.disabled = busy || (pending === 0 && parseErrors === 0);
    const undo = btn('undo');
    if (undo) undo.disabled = busy || !act.edit || !store.history.canUndo;
    const redo = btn('redo');
    if (redo) redo.disabled = busy || !act.edit || !store.history.canRedo;
    for (const id of ['split', 'merge']) {
      const b = btn(id);
      if (b) b.disabled = busy || !act.edit;
    }
    const dirty = main.querySelector('#dirty');
    if (dirty) setText(dirty, pending ? `${pending} unsaved change${pending === 1 ? '' : 's'}` : act.edit ? 'No unsaved changes' : '');
    const gen = btn('generate');
    if (gen) gen.disabled = busy || !act.generate;
    const rev = btn('revise');
    if (rev) rev.disabled = busy || !act.revise;
  }

  shortcutsDialog(): HTMLDialogElement {
    return h(
      'dialog',
      { id: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-h' },
      h('h2', { id: 'shortcuts-h' }, 'Keyboard shortcuts'),
      h('p', { class: 'small' }, 'Outside text fields. In a text field, Esc goes back to the timeline; Ctrl/\u2318 shortcuts work everywhere.'),
      h('table', { class: 'shortcut-table' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Keys'), h('th', { scope: 'col' }, 'What they do'))), h('tbody', {}, ...SHORTCUTS.map((s) => h('tr', {}, h('th', { scope: 'row' }, h('kbd', {}, s.keys)), h('td', {}, s.does))))),
      h('form', { method: 'dialog' }, h('button', { type: 'submit', id: 'shortcuts-close' }, 'Close')),
    );
  }

  showShortcuts(): void {
    const d = this.host.main.querySelector<HTMLDialogElement>('#shortcuts-dialog');
    if (d && !d.open) d.showModal();
  }

  private async generate(mode: GenerateMode): Promise<void> {
    const host = this.host;
    if (host.store.dirty() || host.store.parseErrors.size) return host.showError('Save or discard your changes before generating: generation uses the saved script.');
    await host.run(async (c) => {
      const v = await c.generate(mode);
      host.setVersion(v);
      host.render();
      host.say(`Generation started (${mode === 'with_lips' ? 'with lips' : 'without lips'}).`);
      host.schedulePoll();
    });
  }

  private async revise(): Promise<void> {
    const status = this.host.ctx?.version.status;
    if (status === 'Completed' && !this.host.win.confirm('Revise returns the version to editing and permanently removes the generated video and audio. Continue?')) return;
    await this.host.run(async (c) => {
      await c.revise();
      await this.host.reload();
      this.host.say('The version is back in editing.');
    });
  }

  private async downloadSrt(locality: SrtLocality, profile: SrtProfileName): Promise<void> {
    await this.host.run(async (c) => {
      const { text, filename } = await c.srt(locality, profile);
      const url = URL.createObjectURL(new Blob([text], { type: 'application/x-subrip' }));
      const a = h('a', { href: url, download: filename, hidden: true });
      this.host.win.document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      this.host.say(`Downloaded ${filename}.`);
    }, false);
  }
}
