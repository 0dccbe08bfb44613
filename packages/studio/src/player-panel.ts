/**
 * The player pane: the Source and Dubbed tabs with their videos (and the result's downloads), the
 * playhead line, and the heading of the speakers list and the glossary that sit under them.
 */
import { byId, h } from './dom.js';
import type { StudioHost } from './host.js';
import { Player, type Track } from './player.js';
import { formatTime } from './time.js';

/** Build the pane and its Player (the tab shown is kept from `host.player`). */
export function playerPane(host: StudioHost, o: { onTime(t: number): void; glossary: HTMLElement | undefined }): { nodes: Node[]; player: Player } {
  const { asset: a, version: v } = host.ctx!;
  const hasDub = v.status === 'Completed' && Boolean(v.result_url);
  let source: HTMLVideoElement | undefined;
  let dub: HTMLVideoElement | undefined;
  const shown: Track = host.player?.shown === 'dub' && hasDub ? 'dub' : 'source';
  const tab = (track: Track, text: string, enabled: boolean) =>
    h('button', {
      type: 'button', role: 'tab', id: `tab-${track}`, 'aria-controls': `panel-${track}`, 'aria-selected': String(track === shown), tabindex: track === shown ? '0' : '-1', disabled: !enabled,
      on: {
        click: () => host.player?.show(track),
        keydown: (e) => {
          const k = (e as KeyboardEvent).key;
          if (k === 'ArrowLeft' || k === 'ArrowRight') {
            e.preventDefault();
            const other = track === 'source' ? 'dub' : 'source';
            if (host.player?.has(other)) {
              host.player.show(other);
              byId(`tab-${other}`).focus();
            }
          }
        },
      },
    }, text);
  const sourcePanel = h('div', { id: 'panel-source', role: 'tabpanel', 'aria-labelledby': 'tab-source', hidden: shown !== 'source' });
  if (a.source_video_url) {
    source = h('video', { id: 'source-video', controls: true, preload: 'metadata', src: a.source_video_url, poster: a.thumbnail_url ?? undefined, 'aria-label': 'Source video' });
    sourcePanel.append(source);
  } else sourcePanel.append(h('p', {}, 'The source video is not available yet.'));
  const dubPanel = h('div', { id: 'panel-dub', role: 'tabpanel', 'aria-labelledby': 'tab-dub', hidden: shown !== 'dub' });
  if (hasDub) {
    dub = h('video', { id: 'result-video', controls: true, preload: 'metadata', src: v.result_url!, 'aria-label': 'Dubbed result' });
    dubPanel.append(
      dub,
      h('p', { class: 'small' },
        h('a', { href: v.result_url!, download: '' }, 'Download video'),
        ' \u00b7 ',
        v.result_audio_url ? h('a', { href: v.result_audio_url, download: '' }, 'Download audio') : null,
        v.result_generated_at ? ` \u00b7 generated ${new Date(v.result_generated_at).toLocaleString()}` : null,
      ),
    );
  }
  const dubNote = hasDub ? '' : v.status === 'Generating' ? 'The dub is being generated\u2026' : 'Not generated yet: Play dub needs a generated result (generate the version; revising it removes the result).';
  const player = new Player({
    source,
    dub,
    onTime: o.onTime,
    onTrack: (track) => {
      for (const t of ['source', 'dub'] as const) {
        const b = host.main.querySelector<HTMLButtonElement>(`#tab-${t}`);
        b?.setAttribute('aria-selected', String(t === track));
        if (b) b.tabIndex = t === track ? 0 : -1;
        const p = host.main.querySelector<HTMLElement>(`#panel-${t}`);
        if (p) p.hidden = t !== track;
      }
    },
    onError: (m) => host.showError(m),
  });
  const out: Node[] = [
    h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Player' }, tab('source', 'Source', Boolean(source)), tab('dub', 'Dubbed', hasDub)),
    sourcePanel,
    dubPanel,
    h('p', { class: 'small playhead-line' }, h('span', { id: 'playhead-time' }, `Playhead ${formatTime(0)}`), a.duration !== null ? ` of ${formatTime(a.duration)}` : null),
  ];
  if (dubNote) out.push(h('p', { class: 'small', id: 'dub-note' }, dubNote));
  out.push(h('h2', { id: 'speakers-h' }, 'Speakers'));
  if (host.store.draft) {
    out.push(
      h('ul', { id: 'speakers', class: 'speakers', 'aria-labelledby': 'speakers-h' }),
      h('p', { class: 'small' }, 'Speaker labels come from speaker detection; a name saved for a speaker in the script is shown with its label.'),
    );
  } else out.push(h('p', { class: 'small' }, 'Known once the version is prepared.'));
  if (o.glossary) out.push(o.glossary);
  return { nodes: out, player };
}
