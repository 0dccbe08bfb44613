/**
 * The Speakers panel: each speaker's name (rename), voice (own, anonymized, a library voice or the
 * version's default) and a preview of that choice; and the speaker choice in each segment row.
 */
import type { ScriptSegment, SpeakerVoice } from '@dub/core';
import type { LibraryVoiceView } from './api-client.js';
import { fill, h } from './dom.js';
import type { EditController } from './edit-controller.js';
import type { StudioHost } from './host.js';
import { messageOf } from './messages.js';
import { showLineAudio } from './redub.js';
import { speakerStats } from './script-edit.js';

export class SpeakersPanel {
  /** The library voices a speaker can be given (GET /voices of the version). */
  private libraryVoices: LibraryVoiceView[] | undefined;

  constructor(
    private readonly host: StudioHost,
    private readonly edits: EditController,
  ) {}

  async loadVoices(): Promise<void> {
    if (this.libraryVoices || !this.host.client) return;
    try {
      this.libraryVoices = await this.host.client.voices();
      this.render();
    } catch (e) {
      this.libraryVoices = [];
      this.host.showError(`The library voices could not be loaded: ${messageOf(e)}`);
    }
  }

  /** The speakers list (#speakers): name, voice and preview of each. */
  render(): void {
    const { main, store } = this.host;
    const list = main.querySelector('#speakers');
    if (!list || !store.draft) return;
    const ro = !this.host.actions().edit;
    const draft = store.draft;
    const items = speakerStats(draft).map((st, k) => {
      const sp = draft.speakers.find((x) => x.id === st.id);
      const name = h('input', { type: 'text', id: `speaker-${k}-name`, class: 'speaker-edit speaker-name', value: sp?.name ?? '', placeholder: st.id, maxlength: 200, autocomplete: 'off', readonly: ro, disabled: ro });
      name.addEventListener('input', () => this.setSpeaker(st.id, (x) => {
        const v = name.value;
        if (v.trim()) x.name = v;
        else delete x.name;
      }));
      name.addEventListener('change', () => this.speakersChanged());
      const voice = h('select', { id: `speaker-${k}-voice`, class: 'speaker-edit speaker-voice', disabled: ro, 'aria-describedby': `speaker-${k}-voice-status` }, ...this.voiceOptions());
      const saved = voiceValue(sp?.voice);
      // a library voice the list does not have (not loaded yet, or gone): still shown as chosen
      if (![...voice.options].some((o) => o.value === saved)) voice.append(h('option', { value: saved }, `Library voice ${sp?.voice?.library_voice_id ?? ''}`));
      voice.value = saved;
      voice.addEventListener('change', () => {
        const choice = voiceOf(voice.value);
        this.setSpeaker(st.id, (x) => {
          if (choice) x.voice = choice;
          else delete x.voice;
        });
      });
      const preview = h('button', { type: 'button', id: `speaker-${k}-preview`, class: 'speaker-preview', 'aria-label': `Preview the chosen voice of speaker ${st.id}`, on: { click: () => void this.previewVoice(st.id, k, voice.value) } }, '\u25b6 Preview');
      return h(
        'li',
        { 'data-speaker': st.id, id: `speaker-${k}` },
        h('div', { class: 'speaker-head' }, h('strong', {}, sp?.name?.trim() || st.id), sp?.name?.trim() ? ` (${st.id})` : null, ` ${st.segments} segment${st.segments === 1 ? '' : 's'}, ${st.seconds.toFixed(1)} s`),
        h('div', { class: 'speaker-controls' },
          h('label', { for: name.id }, 'Name', h('span', { class: 'visually-hidden' }, ` of speaker ${st.id}`)), name,
          h('label', { for: voice.id }, 'Voice', h('span', { class: 'visually-hidden' }, ` of speaker ${st.id}`)), voice,
          preview,
        ),
        h('div', { id: `speaker-${k}-preview-out`, class: 'action-out' }, h('p', { id: `speaker-${k}-voice-status`, class: 'small action-status', 'aria-live': 'polite' })),
      );
    });
    fill(list, ...items);
    this.host.refreshEdits();
  }

  /** The controls' state after an edit or while an action runs (no re-render). */
  refresh(edit: boolean): void {
    const { main, busy, store } = this.host;
    for (const el of main.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>('.speaker-edit')) el.disabled = busy || !edit;
    for (const el of main.querySelectorAll<HTMLButtonElement>('.speaker-preview')) el.disabled = busy;
    for (const li of main.querySelectorAll<HTMLElement>('#speakers > li')) li.classList.toggle('changed', store.speakerDiff.includes(li.dataset.speaker ?? ''));
  }

  private voiceOptions(): HTMLOptionElement[] {
    const out = [
      h('option', { value: '' }, 'Version default'),
      h('option', { value: 'speaker' }, 'Their own voice (cloned)'),
      h('option', { value: 'anonymized' }, 'Anonymized'),
    ];
    for (const v of this.libraryVoices ?? []) out.push(h('option', { value: `library:${v.voice_id}` }, `Library: ${v.name} (${v.gender}${v.speaks_locale ? '' : `, does not speak ${this.host.store.draft?.target_locale ?? ''}`})`));
    return out;
  }

  /** Change one speaker's entry in the draft (added when the script had none for that id). */
  private setSpeaker(id: string, change: (s: { id: string; name?: string; voice?: SpeakerVoice }) => void): void {
    const draft = this.host.store.draft;
    if (!draft || !this.host.editable()) return;
    let sp = draft.speakers.find((x) => x.id === id);
    if (!sp) {
      sp = { id };
      draft.speakers.push(sp);
    }
    change(sp);
    this.host.refreshEdits();
  }

  /** A rename shows in the lanes, the speaker cells and the list once the field is left. */
  private speakersChanged(): void {
    const draft = this.host.store.draft;
    if (this.host.timeline && draft) this.host.timeline.setSegments(draft.segments, draft.speakers);
    for (const r of this.host.rows) if (r.speaker) this.fillSpeakerOptions(r.speaker);
    this.render();
  }

  private async previewVoice(id: string, k: number, value: string): Promise<void> {
    const status = this.host.main.querySelector(`#speaker-${k}-voice-status`);
    const button = this.host.main.querySelector<HTMLButtonElement>(`#speaker-${k}-preview`);
    button?.setAttribute('aria-busy', 'true');
    if (status) fill(status, `Rendering a preview of speaker ${id}\u2026`);
    await this.host.run(async (c) => {
      try {
        const line = await c.previewVoice(id, voiceOf(value) ?? null);
        showLineAudio(this.host.win.document, `speaker-${k}-preview-out`, `speaker-${k}-preview-audio`, `Voice preview of speaker ${id}`, line, true);
        const msg = `Preview of speaker ${id}: ${line.voiceSource || 'default'} voice (${line.engine}), ${line.duration.toFixed(1)} s.`;
        if (status) fill(status, msg);
        this.host.say(msg);
      } catch (e) {
        if (status) fill(status, `Preview failed: ${messageOf(e)}`);
        throw e;
      } finally {
        button?.removeAttribute('aria-busy');
      }
    });
  }

  /** A segment's speaker, as a choice among the script's speakers. */
  speakerSelect(s: ScriptSegment, i: number, n: number): HTMLSelectElement {
    const sel = h('select', { id: `seg-${n}-speaker`, class: 'segment-speaker', 'aria-label': `Speaker of segment ${n}` });
    this.fillSpeakerOptions(sel);
    sel.value = s.speaker;
    sel.addEventListener('change', () => {
      if (!this.edits.setSpeakerOf(i, sel.value)) return;
      const draft = this.host.store.draft;
      if (this.host.timeline && draft) this.host.timeline.setSegments(draft.segments, draft.speakers);
      this.host.applySelection(false);
      this.render();
    });
    return sel;
  }

  private fillSpeakerOptions(sel: HTMLSelectElement): void {
    const draft = this.host.store.draft;
    if (!draft) return;
    const keep = sel.value;
    const names = new Map(draft.speakers.filter((x) => x.name?.trim()).map((x) => [x.id, x.name!.trim()]));
    fill(sel, ...speakerStats(draft).map((st) => h('option', { value: st.id }, names.has(st.id) ? `${names.get(st.id)} (${st.id})` : st.id)));
    if (keep) sel.value = keep;
  }
}

/** The select value of a voice choice: '' (none), 'speaker', 'anonymized', 'library:<id>'. */
function voiceValue(v: SpeakerVoice | undefined): string {
  if (!v) return '';
  if (v.source === 'library') return `library:${v.library_voice_id ?? ''}`;
  return v.source;
}

function voiceOf(value: string): SpeakerVoice | undefined {
  if (value === 'speaker') return { source: 'speaker' };
  if (value === 'anonymized') return { source: 'anonymized', anonymization: 1 };
  if (value.startsWith('library:')) return { source: 'library', library_voice_id: value.slice(8) };
  return undefined;
}
