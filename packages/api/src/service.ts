/**
 * The API's business logic, free of HTTP, one service per resource over a shared context
 * (services/context.ts): assets, versions (the state machine), signed links, scripts and SRT,
 * and the worker's events. DubService builds them on one context; routes reach them as
 * `service.assets`, `service.versions`, `service.links`, `service.scripts`, `service.events`.
 */
import type { WorkerEvent } from '@dub/core';
import { AssetService } from './services/assets.js';
import { ServiceContext, type ServiceDeps } from './services/context.js';
import { WorkerEventService } from './services/events.js';
import { LinkService } from './services/links.js';
import { ScriptService } from './services/scripts.js';
import { VersionService } from './services/versions.js';

export type { Access, ServiceDeps } from './services/context.js';
export { toAsset, type UploadedMedia } from './services/assets.js';
export type { MediaLink } from './services/links.js';
export { checkScriptSpeakers, etagOf, type ScriptWithTag } from './services/scripts.js';
export { DEFAULT_STUDIO_MINUTES, MAX_STUDIO_MINUTES } from './validators.js';

export class DubService {
  readonly ctx: ServiceContext;
  readonly links: LinkService;
  readonly assets: AssetService;
  readonly versions: VersionService;
  readonly scripts: ScriptService;
  readonly events: WorkerEventService;

  constructor(deps: ServiceDeps) {
    this.ctx = new ServiceContext(deps);
    this.links = new LinkService(this.ctx);
    this.assets = new AssetService(this.ctx, this.links);
    this.versions = new VersionService(this.ctx, this.links);
    this.scripts = new ScriptService(this.ctx);
    this.events = new WorkerEventService(this.ctx, this.versions);
  }

  /** Apply one worker event (services/events.ts). */
  applyWorkerEvent(ev: WorkerEvent): Promise<void> {
    return this.events.applyWorkerEvent(ev);
  }
}
