/**
 * The timeline's canvas: the ruler, the pauses that dragged edges snap to, and the source audio's
 * waveform, drawn for the visible time only (the canvas is the width of the view). A click or a
 * scrub on it moves the playhead.
 */
import { h } from './dom.js';
import { amplitudeTable, columnPeaks, type Span, type WaveformData } from './waveform.js';

const RULER_H = 18;
const WAVE_H = 64;
const CANVAS_H = RULER_H + WAVE_H;
const TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

export class WaveCanvas {
  readonly canvas: HTMLCanvasElement;
  private wave: WaveformData | undefined;
  private amp: Float32Array | undefined;
  private waveMax = 1;
  private silences: readonly Span[] = [];

  constructor(o: { timeAt(clientX: number): number; seek(t: number): void }) {
    const canvas = h('canvas', { class: 'timeline-canvas', height: CANVAS_H, 'aria-hidden': 'true' });
    this.canvas = canvas;
    // ruler and waveform: click or scrub to move the playhead
    canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      canvas.setPointerCapture(e.pointerId);
      o.seek(o.timeAt(e.clientX));
      const move = (m: PointerEvent) => o.seek(o.timeAt(m.clientX));
      const up = () => {
        canvas.removeEventListener('pointermove', move);
        canvas.removeEventListener('pointerup', up);
        canvas.removeEventListener('pointercancel', up);
      };
      canvas.addEventListener('pointermove', move);
      canvas.addEventListener('pointerup', up);
      canvas.addEventListener('pointercancel', up);
    });
  }

  setWaveform(w: WaveformData, silences: readonly Span[]): void {
    this.wave = w;
    this.amp = amplitudeTable(w);
    let max = 0;
    for (const b of w.peak) if (b > max) max = b;
    this.waveMax = Math.max(1e-4, this.amp[max]!);
    this.silences = silences;
  }

  /** Draw the visible time: `cssW` pixels wide from `t0` seconds at `pps` pixels per second (`snap`: show the pauses). */
  draw(cssW: number, t0: number, pps: number, snap: boolean): void {
    if (cssW <= 0) return;
    const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
    const W = Math.round(cssW * dpr);
    const H = Math.round(CANVAS_H * dpr);
    if (this.canvas.width !== W || this.canvas.height !== H) {
      this.canvas.width = W;
      this.canvas.height = H;
      this.canvas.style.width = `${cssW}px`;
      this.canvas.style.height = `${CANVAS_H}px`;
    }
    const g = this.canvas.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, cssW, CANVAS_H);
    const t1 = t0 + cssW / pps;
    const x = (t: number) => (t - t0) * pps;
    // ruler
    g.fillStyle = '#f6f8fa';
    g.fillRect(0, 0, cssW, RULER_H);
    g.fillStyle = '#57606a';
    g.strokeStyle = '#8c959f';
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const step = TICKS.find((s) => s * pps >= 70) ?? 3600;
    g.beginPath();
    for (let t = Math.floor(t0 / step) * step; t <= t1; t += step) {
      const px = Math.round(x(t)) + 0.5;
      g.moveTo(px, RULER_H - 6);
      g.lineTo(px, RULER_H);
      g.fillText(tickLabel(t, step), px + 3, RULER_H / 2);
    }
    g.stroke();
    // pauses (what edges snap to)
    if (snap && this.silences.length) {
      g.fillStyle = 'rgba(11, 92, 173, 0.08)';
      for (const s of this.silences) {
        if (s.end < t0 || s.start > t1) continue;
        g.fillRect(x(s.start), RULER_H, (s.end - s.start) * pps, WAVE_H);
      }
    }
    // waveform: the highest peak under each device pixel column, centred
    const mid = RULER_H + WAVE_H / 2;
    g.strokeStyle = '#d0d7de';
    g.beginPath();
    g.moveTo(0, mid + 0.5);
    g.lineTo(cssW, mid + 0.5);
    g.stroke();
    if (this.wave && this.amp) {
      const cols = columnPeaks(this.wave, t0, t1, W);
      g.setTransform(1, 0, 0, 1, 0, 0);
      g.fillStyle = '#3b6ea8';
      const half = (WAVE_H / 2 - 2) * dpr;
      const m = mid * dpr;
      for (let c = 0; c < W; c++) {
        const b = cols[c]!;
        if (!b) continue;
        const hgt = Math.max(1, Math.min(1, this.amp[b]! / this.waveMax) * half);
        g.fillRect(c, m - hgt, 1, hgt * 2);
      }
    }
  }
}

function tickLabel(t: number, step: number): string {
  const s = Math.round(t * 10) / 10;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const ss = step < 1 ? sec.toFixed(1).padStart(4, '0') : String(Math.floor(sec)).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
