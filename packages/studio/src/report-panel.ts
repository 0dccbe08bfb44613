/**
 * The quality report of the last generation: its summary in the header (#report-summary), each
 * segment's figures in its row's Quality cell, and the "Only flagged" filter (rows and blocks).
 */
import { fill, h } from './dom.js';
import type { StudioHost } from './host.js';
import { messageOf, setText } from './messages.js';
import { reportIndex, segmentFigures, summaryText, type QualityReportView } from './report.js';

export class ReportPanel {
  private report: QualityReportView | undefined;
  private error = '';

  constructor(private readonly host: StudioHost) {}

  /** A new version or script was loaded: the old report no longer applies. */
  clear(): void {
    this.report = undefined;
    this.error = '';
  }

  /** The quality report of the last generation, when the API has one. */
  async load(): Promise<void> {
    const { client, ctx } = this.host;
    if (!client || !ctx?.has_script) return;
    const versionId = ctx.version.version_id;
    try {
      const r = await client.report();
      if (this.host.ctx?.version.version_id !== versionId) return;
      this.report = r;
      this.error = '';
    } catch (e) {
      this.report = undefined;
      this.error = `The quality report could not be read: ${messageOf(e)}`;
    }
    this.show();
  }

  /** The report's figures in each row, the summary in the header, and the filter. */
  show(): void {
    const { main, rows, store } = this.host;
    const summary = main.ownerDocument.getElementById('report-summary');
    const r = this.report;
    if (summary) setText(summary, r ? summaryText(r) : this.error);
    const only = main.querySelector<HTMLInputElement>('#only-flagged');
    if (only) {
      only.disabled = !r;
      if (!r) only.checked = false;
    }
    const index = reportIndex(r);
    rows.forEach((row, i) => {
      const seg = store.draft!.segments[i]!;
      const q = index.get(seg.id);
      row.tr.classList.toggle('flagged', Boolean(q && q.flags.length));
      if (!r || !q) {
        fill(row.quality, r ? h('span', { class: 'small' }, 'not in the report') : '\u2014');
        return;
      }
      fill(
        row.quality,
        h('ul', { class: 'figures', 'aria-label': `Quality of segment ${i + 1}${q.flags.length ? `: flagged for ${q.flags.join(', ')}` : ''}` },
          ...segmentFigures(q, r.thresholds).map((f) =>
            h('li', { class: `figure figure-${f.flag}${f.flagged ? ' flagged' : ''}`, title: f.title, 'data-flag': f.flag },
              h('span', { class: 'figure-label' }, f.label), ' ', h('span', { class: 'figure-value' }, f.value), f.flagged ? h('span', { class: 'flag-mark' }, h('span', { 'aria-hidden': 'true' }, ' \u2691'), h('span', { class: 'visually-hidden' }, ' flagged')) : null),
          ),
        ),
      );
    });
    this.applyFilter();
  }

  private flaggedIds(): Set<string> {
    return new Set((this.report?.segments ?? []).filter((s) => s.flags.length > 0).map((s) => s.id));
  }

  /** Hide the rows (and dim the blocks) that are not flagged, when "Only flagged" is checked. */
  applyFilter(): void {
    const { main, rows, store } = this.host;
    const only = Boolean(main.querySelector<HTMLInputElement>('#only-flagged')?.checked);
    const flagged = this.flaggedIds();
    rows.forEach((r, i) => {
      r.tr.hidden = only && !flagged.has(store.draft!.segments[i]!.id);
    });
    this.host.timeline?.setFlags(flagged, only);
  }
}
