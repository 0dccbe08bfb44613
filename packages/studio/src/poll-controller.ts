/**
 * The polling controller: while the version's status can move on its own (preparing, generating),
 * ask for it with a growing delay (`pollDelayMs`) and reload the page's data when it changes.
 */
import type { StudioHost } from './host.js';
import { messageOf } from './messages.js';
import { pollDelayMs } from './status.js';

export class PollController {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private since = 0;

  constructor(private readonly host: StudioHost) {}

  schedule(): void {
    this.stop();
    if (!this.host.ctx || !this.host.actions().poll) {
      this.since = 0;
      return;
    }
    if (!this.since) this.since = Date.now();
    this.timer = setTimeout(() => void this.pollOnce(), pollDelayMs(Date.now() - this.since));
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async pollOnce(): Promise<void> {
    this.timer = undefined;
    const { client, ctx } = this.host;
    if (!client || !ctx) return;
    try {
      const v = await client.version();
      if (v.status !== ctx.version.status) {
        await this.host.reload();
        this.host.say(`The version is now ${v.status}.`);
        return;
      }
    } catch (e) {
      this.host.showError(messageOf(e));
    }
    this.schedule();
  }

  /** After a refused action: show the status the version has now (a reload, unless there are unsaved edits). */
  async refreshStatus(): Promise<void> {
    try {
      const v = await this.host.client!.version();
      if (v.status !== this.host.ctx!.version.status) {
        if (this.host.store.dirty()) {
          this.host.setVersion(v);
          this.host.render();
          this.schedule();
        } else await this.host.reload();
      }
    } catch {
      // the original error is already shown
    }
  }
}
