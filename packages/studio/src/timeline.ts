/**
 * The timeline under the players: a ruler and the source audio's waveform (drawn on a canvas the
 * width of the view, for the visible time only), one lane per speaker with each segment as a
 * block at its time, and the playhead. Blocks are positioned by CSS from two custom properties
 * (--s, --e: seconds) and the track's --pps (pixels per second), so zooming changes one property.
 * Pointer: click a block to select its segment (and move the playhead there), drag its edges to
 * change its times, click the ruler or waveform to move the playhead, Ctrl/Cmd + wheel to zoom.
 * Keyboard: the selected block is the timeline's tab stop (roving tabindex); its edges are
 * sliders (arrows, Page Up/Down, Home/End). What an edit means is the app's business: the
 * timeline reports it through the callbacks.
 */
import type { ScriptSegment } from '@dub/core';
import { h } from './dom.js';
import { formatTime } from './time.js';
import { WaveCanvas } from './timeline-draw.js';
import type { Span, WaveformData } from './waveform.js';

export type Edge = 'start' | 'end';
export type EdgeKey = 'dec' | 'inc' | 'dec-big' | 'inc-big' | 'prev-pause' | 'next-pause' | 'min' | 'max';

export interface TimelineCallbacks {
  /** A block was clicked (`at`: the time under the pointer) or focused. */
  select(index: number, at?: number): void;
  /** The ruler or the waveform was clicked or scrubbed. */
  seek(t: number): void;
  /** An edge is being dragged to `t` (`snap`: snapping is wanted; Alt held turns it off). */
  drag(index: number, edge: Edge, t: number, phase: 'start' | 'move' | 'end', snap: boolean): void;
  /** A key on a focused edge. */
  edgeKey(index: number, edge: Edge, key: EdgeKey): void;
}

const MAX_PPS = 400;

export class Timeline {
  readonly el: HTMLElement;
  private readonly scroll: HTMLDivElement;
  private readonly track: HTMLDivElement;
  private readonly lanesEl: HTMLDivElement;
  private readonly labelsEl: HTMLDivElement;
  private readonly playheadEl: HTMLDivElement;
  private readonly zoomInput: HTMLInputElement;
  private readonly snapInput: HTMLInputElement;
  readonly status: HTMLElement;
  private blocks: HTMLButtonElement[] = [];
  /** The selected block's edges as sliders (keyboard and pointer); absent when nothing is selected or read-only. */
  private readonly edges: Record<Edge, HTMLSpanElement> | undefined;
  private suppressClick = false;
  private segments: readonly ScriptSegment[] = [];
  private lanes: string[] = [];
  private pps = 20;
  private minPps = 0.05;
  private selected = -1;
  private playhead = 0;
  /** The ruler, the pauses and the waveform (timeline-draw.ts). */
  private readonly wave: WaveCanvas;
  private drawQueued = false;
  private zoomed = false;
  private pendingView: { pps: number; scrollLeft: number; zoomed: boolean } | undefined;

  constructor(
    private duration: number,
    private readonly editable: boolean,
    private readonly textDir: 'ltr' | 'rtl',
    private readonly cb: TimelineCallbacks,
  ) {
    this.duration = Math.max(0.1, duration);
    this.zoomInput = h('input', { type: 'range', id: 'zoom', min: 0, max: 1000, step: 1, value: 500, 'aria-label': 'Zoom', on: { input: () => this.setZoom(this.ppsOf(Number(this.zoomInput.value)), this.centerTime()) } });
    this.snapInput = h('input', { type: 'checkbox', id: 'snap', checked: true, on: { change: () => this.queueDraw() } });
    this.status = h('span', { id: 'waveform-status', class: 'small', 'aria-live': 'polite' });
    this.wave = new WaveCanvas({ timeAt: (x) => this.timeAt(x), seek: (t) => this.cb.seek(t) });
    this.lanesEl = h('div', { class: 'lanes' });
    this.edges = editable ? { start: this.makeEdge('start'), end: this.makeEdge('end') } : undefined;
    this.wireBlocks();
    this.playheadEl = h('div', { class: 'playhead', 'aria-hidden': 'true' });
    this.track = h('div', { class: 'timeline-track' }, this.wave.canvas, this.lanesEl, this.playheadEl);
    this.scroll = h('div', { class: 'timeline-scroll', id: 'timeline-scroll' }, this.track);
    this.labelsEl = h('div', { class: 'lane-labels' });
    this.el = timelineFrame(editable, { zoomInput: this.zoomInput, snapInput: this.snapInput, status: this.status, labels: this.labelsEl, scroll: this.scroll, zoomBy: (f) => this.zoomBy(f), fit: () => this.fit() });

    this.scroll.addEventListener('scroll', () => this.queueDraw(), { passive: true });
    this.scroll.addEventListener(
      'wheel',
      (e) => {
        if (!(e.ctrlKey || e.metaKey)) return;
        e.preventDefault();
        this.setZoom(this.pps * (e.deltaY < 0 ? 1.25 : 0.8), this.timeAt(e.clientX));
      },
      { passive: false },
    );
    if (typeof ResizeObserver !== 'undefined') {
      // The first call comes after the page's first layout and before its paint: the zoom is set
      // from the measured width there, so building the page forces no layout of its own.
      new ResizeObserver(() => {
        const v = this.pendingView;
        this.pendingView = undefined;
        if (v) this.restoreView(v);
        else if (!this.zoomed) this.initialZoom();
        this.queueDraw();
      }).observe(this.scroll);
    }
  }

  // ------------------------------------------------------------------ content

  /** (Re)build the lanes and blocks. */
  setSegments(segments: readonly ScriptSegment[], speakers: readonly { id: string; name?: string }[]): void {
    this.segments = segments;
    this.lanes = speakers.map((s) => s.id);
    for (const s of segments) if (!this.lanes.includes(s.speaker)) this.lanes.push(s.speaker);
    const names = new Map(speakers.filter((s) => s.name?.trim()).map((s) => [s.id, `${s.name!.trim()} (${s.id})`]));
    const laneEls = this.lanes.map((id, i) => h('div', { class: `lane lane-${i % 8}`, role: 'group', 'aria-label': `Speaker ${names.get(id) ?? id}` }));
    this.labelsEl.replaceChildren(h('div', { class: 'lane-label wave-label', 'aria-hidden': 'true' }, 'Audio'), ...this.lanes.map((id, i) => h('div', { class: `lane-label lane-${i % 8}`, 'aria-hidden': 'true', title: names.get(id) ?? id }, names.get(id) ?? id)));
    const sel = Math.min(this.selected, segments.length - 1);
    this.selected = -1;
    this.blocks = segments.map((s, i) => {
      const b = this.makeBlock(s, i);
      laneEls[this.lanes.indexOf(s.speaker)]!.append(b);
      return b;
    });
    this.lanesEl.replaceChildren(...laneEls);
    this.setSelected(sel);
  }

  /** One element per block: a button (its edges are dragged by pointer near them; see wireBlocks). */
  private makeBlock(s: ScriptSegment, i: number): HTMLButtonElement {
    const b = h('button', { type: 'button', class: 'block block-body', tabindex: '-1', dir: this.textDir, 'data-index': i, id: `block-${i + 1}` });
    this.paintBlock(b, s, i);
    return b;
  }

  private blockOf(target: EventTarget | null): number {
    const el = (target as HTMLElement | null)?.closest?.('.block') as HTMLElement | null;
    return el && this.lanesEl.contains(el) ? Number(el.dataset.index) : -1;
  }

  /** Which edge of block i a client x grabs (within 6 px of it, a third of a narrow block), if any. */
  private edgeAt(i: number, clientX: number): Edge | undefined {
    if (!this.editable) return undefined;
    const r = this.blocks[i]!.getBoundingClientRect();
    const zone = Math.min(6, r.width / 3);
    if (clientX - r.left <= zone) return 'start';
    if (r.right - clientX <= zone) return 'end';
    return undefined;
  }

  /** Pointer and focus on the blocks, delegated to the lanes (one listener each, whatever the count). */
  private wireBlocks(): void {
    const L = this.lanesEl;
    L.addEventListener('click', (e) => {
      const i = this.blockOf(e.target);
      if (i < 0) return;
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      this.cb.select(i, e.detail === 0 ? undefined : this.timeAt(e.clientX));
    });
    L.addEventListener('focusin', (e) => {
      const i = this.blockOf(e.target);
      if (i >= 0 && i !== this.selected) this.cb.select(i);
    });
    L.addEventListener('pointermove', (e) => {
      if (e.buttons) return;
      const i = this.blockOf(e.target);
      if (i >= 0) this.blocks[i]!.style.cursor = this.edgeAt(i, e.clientX) ? 'ew-resize' : '';
    });
    L.addEventListener('pointerdown', (e) => {
      const i = this.blockOf(e.target);
      if (i < 0 || e.button !== 0) return;
      const edge = this.edgeAt(i, e.clientX);
      if (!edge) return;
      e.preventDefault();
      this.dragEdge(this.blocks[i]!, i, edge, e);
    });
  }

  /** Drag an edge of block i from a pointerdown on `el` (the block near its edge, or an edge slider). */
  private dragEdge(el: HTMLElement, i: number, edge: Edge, e: PointerEvent): void {
    el.setPointerCapture(e.pointerId);
    const from = this.segments[i]![edge];
    // a press without a move (under 3 px) is a click: the edge stays where it is
    let moved = false;
    this.cb.drag(i, edge, from, 'start', false);
    const move = (m: PointerEvent) => {
      if (!moved && Math.abs(m.clientX - e.clientX) < 3) return;
      moved = true;
      this.cb.drag(i, edge, this.timeAt(m.clientX), 'move', !m.altKey && this.snapInput.checked);
    };
    const up = (u: PointerEvent) => {
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
      el.removeEventListener('pointercancel', up);
      const done = moved && u.type !== 'pointercancel';
      this.cb.drag(i, edge, done ? this.timeAt(u.clientX) : from, 'end', done && !u.altKey && this.snapInput.checked);
      // a drag from a block's edge is no click on the block; a press without a move is
      this.suppressClick = moved && el !== this.edges?.[edge];
      if (moved) this.edges?.[edge].focus({ preventScroll: true });
    };
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', up);
  }

  /** An edge slider of the selected block: arrows, Page Up/Down, Home/End, or a pointer drag. */
  private makeEdge(edge: Edge): HTMLSpanElement {
    const el = h('span', { class: `edge edge-${edge}`, role: 'slider', tabindex: '0', 'aria-orientation': 'horizontal', hidden: true });
    el.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || this.selected < 0) return;
      e.preventDefault();
      e.stopPropagation();
      el.focus({ preventScroll: true });
      this.dragEdge(el, this.selected, edge, e);
    });
    el.addEventListener('keydown', (e) => {
      const key = edgeKeyOf(e);
      if (!key || e.ctrlKey || e.metaKey || e.altKey || this.selected < 0) return;
      e.preventDefault();
      e.stopPropagation();
      this.cb.edgeKey(this.selected, edge, key);
    });
    return el;
  }

  private paintBlock(b: HTMLButtonElement, s: ScriptSegment, i: number): void {
    const n = i + 1;
    b.style.setProperty('--s', String(s.start));
    b.style.setProperty('--e', String(Math.max(s.start, s.end)));
    b.dataset.start = String(s.start);
    b.dataset.end = String(s.end);
    const text = s.target_text.trim() || s.source_text.trim();
    if (b.textContent !== text) b.textContent = text;
    b.setAttribute('aria-label', `Segment ${n}, ${s.speaker}, ${formatTime(s.start)} to ${formatTime(s.end)}: ${text || '(no text)'}`);
    if (i === this.selected) this.paintEdges();
  }

  /** Put the edge sliders on the selected block (its lane, its times, its segment number). */
  private paintEdges(): void {
    if (!this.edges) return;
    const s = this.segments[this.selected];
    const b = this.blocks[this.selected];
    for (const edge of ['start', 'end'] as const) {
      const el = this.edges[edge];
      if (!s || !b) {
        el.hidden = true;
        el.removeAttribute('id');
        continue;
      }
      if (el.parentElement !== b.parentElement) b.parentElement!.append(el);
      paintEdge(el, edge, this.selected + 1, s[edge], this.duration);
    }
  }

  /** Repaint one block after its times or text changed. */
  updateBlock(i: number): void {
    const b = this.blocks[i];
    const s = this.segments[i];
    if (b && s) this.paintBlock(b, s, i);
  }

  setSelected(i: number): void {
    const first = this.blocks[0];
    if (first) first.tabIndex = -1;
    const prev = this.blocks[this.selected];
    if (prev) {
      prev.classList.remove('selected');
      prev.removeAttribute('aria-current');
      prev.tabIndex = -1;
    }
    this.selected = i;
    const b = this.blocks[i];
    if (b) {
      b.classList.add('selected');
      b.setAttribute('aria-current', 'true');
    }
    // the timeline's one tab stop: the selected block, else the first
    const stop = b ?? this.blocks[0];
    if (stop) stop.tabIndex = 0;
    this.paintEdges();
  }

  /** Focus the selected block (Esc from a text field). */
  focusSelected(): void {
    this.blocks[this.selected]?.focus();
  }

  /** Scroll so that segment i is in view. */
  reveal(i: number): void {
    const s = this.segments[i];
    if (!s) return;
    const w = this.scroll.clientWidth;
    const x0 = s.start * this.pps;
    const x1 = s.end * this.pps;
    if (x0 < this.scroll.scrollLeft || x1 > this.scroll.scrollLeft + w) this.scroll.scrollLeft = Math.max(0, x0 - w * 0.2);
  }

  /** Mark flagged segments; with `only`, the others are dimmed. */
  setFlags(flagged: ReadonlySet<string>, only: boolean): void {
    this.blocks.forEach((b, i) => {
      const f = flagged.has(this.segments[i]!.id);
      b.classList.toggle('flagged', f);
      b.classList.toggle('dim', only && !f);
    });
  }

  setWaveform(w: WaveformData, silences: readonly Span[]): void {
    this.wave.setWaveform(w, silences);
    this.el.classList.add('has-waveform');
    this.queueDraw();
  }

  get snap(): boolean {
    return this.editable && this.snapInput.checked;
  }

  /** Seconds per pixel at the current zoom (the snap radius is a few pixels). */
  get secondsPerPixel(): number {
    return 1 / this.pps;
  }

  setPlayhead(t: number, follow: boolean): void {
    this.playhead = t;
    this.playheadEl.style.transform = `translateX(${t * this.pps}px)`;
    if (follow) {
      const x = t * this.pps;
      const w = this.scroll.clientWidth;
      if (x < this.scroll.scrollLeft || x > this.scroll.scrollLeft + w - 20) this.scroll.scrollLeft = Math.max(0, x - w * 0.1);
    }
  }

  // ------------------------------------------------------------------ zoom

  /** Pixels per second for a position of the zoom slider (logarithmic from "whole video" to MAX_PPS). */
  private ppsOf(v: number): number {
    return this.minPps * (MAX_PPS / this.minPps) ** (v / 1000);
  }

  private sliderOf(pps: number): number {
    return Math.round((Math.log(pps / this.minPps) / Math.log(MAX_PPS / this.minPps)) * 1000);
  }

  /** The first zoom: the whole video when it is short, else about a minute in view. */
  initialZoom(): void {
    const w = this.scroll.clientWidth;
    if (w <= 0) return;
    this.minPps = Math.min(MAX_PPS, w / this.duration);
    this.setZoom(this.duration <= 90 ? this.minPps : Math.max(this.minPps, w / 60), 0, false);
  }

  /** Zoom and scroll, to keep them across a re-render. */
  view(): { pps: number; scrollLeft: number; zoomed: boolean } {
    return { pps: this.pps, scrollLeft: this.scroll.scrollLeft, zoomed: this.zoomed };
  }

  /** Restore a view once the timeline has been laid out (see the ResizeObserver). */
  restoreViewLater(v: { pps: number; scrollLeft: number; zoomed: boolean }): void {
    this.pendingView = v;
  }

  restoreView(v: { pps: number; scrollLeft: number; zoomed: boolean }): void {
    const w = this.scroll.clientWidth;
    if (w > 0) this.minPps = Math.min(MAX_PPS, w / this.duration);
    this.setZoom(v.pps, 0, false);
    this.scroll.scrollLeft = v.scrollLeft;
    this.zoomed = v.zoomed;
  }

  fit(): void {
    this.zoomed = true;
    this.setZoom(this.minPps, 0);
  }

  zoomBy(f: number): void {
    this.zoomed = true;
    this.setZoom(this.pps * f, this.playheadInView() ? this.playhead : this.centerTime());
  }

  /** Set the zoom keeping `anchor` (seconds) where it is on screen. */
  setZoom(pps: number, anchor: number, user = true): void {
    if (user) this.zoomed = true;
    const w = this.scroll.clientWidth;
    const p = Math.min(MAX_PPS, Math.max(this.minPps, pps));
    const screenX = anchor * this.pps - this.scroll.scrollLeft;
    this.pps = p;
    this.track.style.setProperty('--pps', String(p));
    this.track.style.width = `${Math.ceil(this.duration * p)}px`;
    this.scroll.scrollLeft = Math.max(0, anchor * p - (Number.isFinite(screenX) && screenX >= 0 && screenX <= w ? screenX : w / 2));
    this.zoomInput.value = String(this.sliderOf(p));
    const visible = w / p;
    this.zoomInput.setAttribute('aria-valuetext', `${visible >= 120 ? `${Math.round(visible / 60)} minutes` : `${Math.round(visible * 10) / 10} seconds`} in view`);
    this.setPlayhead(this.playhead, false);
    this.queueDraw();
  }

  private centerTime(): number {
    return (this.scroll.scrollLeft + this.scroll.clientWidth / 2) / this.pps;
  }

  private playheadInView(): boolean {
    const x = this.playhead * this.pps - this.scroll.scrollLeft;
    return x >= 0 && x <= this.scroll.clientWidth;
  }

  /** The time under a client x coordinate. */
  private timeAt(clientX: number): number {
    const r = this.track.getBoundingClientRect();
    return Math.min(this.duration, Math.max(0, (clientX - r.left) / this.pps));
  }

  // ------------------------------------------------------------------ drawing

  private queueDraw(): void {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      this.draw();
    });
  }

  private draw(): void {
    this.wave.draw(this.scroll.clientWidth, this.scroll.scrollLeft / this.pps, this.pps, this.snap);
  }
}

/** What a key on an edge slider does (arrows, Page Up/Down, Home/End); undefined: not ours. */
function edgeKeyOf(e: KeyboardEvent): EdgeKey | undefined {
  return e.key === 'ArrowLeft' || e.key === 'ArrowDown' ? (e.shiftKey ? 'dec-big' : 'dec')
    : e.key === 'ArrowRight' || e.key === 'ArrowUp' ? (e.shiftKey ? 'inc-big' : 'inc')
    : e.key === 'PageUp' ? 'prev-pause'
    : e.key === 'PageDown' ? 'next-pause'
    : e.key === 'Home' ? 'min'
    : e.key === 'End' ? 'max'
    : undefined;
}

/** An edge slider placed at `t` on segment n. */
function paintEdge(el: HTMLSpanElement, edge: Edge, n: number, t: number, duration: number): void {
  el.hidden = false;
  el.id = `block-${n}-${edge}`;
  el.style.setProperty('--t', String(t));
  el.setAttribute('aria-label', `${edge === 'start' ? 'Start' : 'End'} of segment ${n}`);
  el.setAttribute('aria-valuemin', '0');
  el.setAttribute('aria-valuemax', String(Math.round(duration * 1000) / 1000));
  el.setAttribute('aria-valuenow', String(t));
  el.setAttribute('aria-valuetext', formatTime(t));
}

/** The timeline's section: its head (zoom, snap, the waveform's status) and body (lane labels, the scrolled track). */
function timelineFrame(
  editable: boolean,
  p: { zoomInput: HTMLInputElement; snapInput: HTMLInputElement; status: HTMLElement; labels: HTMLElement; scroll: HTMLElement; zoomBy(f: number): void; fit(): void },
): HTMLElement {
  return h(
    'section',
    { id: 'timeline', class: `timeline${editable ? ' editable' : ''}`, 'aria-labelledby': 'timeline-h' },
    h(
      'div',
      { class: 'timeline-head' },
      h('h2', { id: 'timeline-h' }, 'Timeline'),
      h(
        'div',
        { class: 'group', role: 'group', 'aria-label': 'Zoom' },
        h('button', { type: 'button', id: 'zoom-out', 'aria-label': 'Zoom out', on: { click: () => p.zoomBy(1 / 1.5) } }, '\u2212'),
        p.zoomInput,
        h('button', { type: 'button', id: 'zoom-in', 'aria-label': 'Zoom in', on: { click: () => p.zoomBy(1.5) } }, '+'),
        h('button', { type: 'button', id: 'zoom-fit', on: { click: () => p.fit() } }, 'Fit'),
      ),
      editable ? h('label', { class: 'check' }, p.snapInput, ' Snap edges to pauses') : null,
      p.status,
    ),
    h('div', { class: 'timeline-body' }, p.labels, p.scroll),
  );
}
