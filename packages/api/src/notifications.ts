/**
 * What the outbox carries for a status change: the signed callback (when the asset has a
 * callback_url) and the owner's e-mail for the events that notify by mail (added languages ready,
 * generation completed or failed).
 */
import type { AssetErrorObject, AssetStatus, CallbackEvent, EventType, VersionErrorObject, VersionStatus } from '@dub/core';
import type { AssetRow, OutboxItem, VersionRow } from './catalog.js';

export interface StatusChange {
  event: EventType;
  asset: AssetRow;
  version: VersionRow | null;
  status: AssetStatus | VersionStatus;
  error: AssetErrorObject | VersionErrorObject | null;
  /** The version belongs to a language added after creation (POST languages). */
  addedLanguage?: boolean;
}

export function callbackPayload(c: StatusChange, sentAt: string): CallbackEvent {
  return {
    event: c.event,
    asset_id: c.asset.asset_id,
    version_id: c.version ? c.version.version_id : null,
    locale: c.version ? c.version.locale : null,
    status: c.status,
    error: c.error,
    sent_at: sentAt,
  };
}

const MAIL_EVENTS: ReadonlySet<EventType> = new Set(['version_generated', 'version_generate_failed']);

export function outboxItemsFor(c: StatusChange, sentAt: string, ownerEmail: string | undefined): OutboxItem[] {
  const items: OutboxItem[] = [];
  if (c.asset.callback_url) items.push({ kind: 'callback', asset_id: c.asset.asset_id, target: c.asset.callback_url, subject: null, body: JSON.stringify(callbackPayload(c, sentAt)) });
  const mail = MAIL_EVENTS.has(c.event) || (c.addedLanguage && (c.event === 'version_ready' || c.event === 'version_failed'));
  if (ownerEmail && mail && c.version) {
    const what: Record<string, string> = {
      version_ready: 'is ready for review',
      version_failed: 'failed during preparation',
      version_generated: 'has been generated',
      version_generate_failed: 'failed during generation',
    };
    const subject = `[dub] ${c.asset.name}: ${c.version.locale} ${what[c.event] ?? c.event}`;
    const lines = [
      `Asset: ${c.asset.name} (${c.asset.asset_id})`,
      `Language: ${c.version.locale}`,
      `Version: ${c.version.name} (${c.version.version_id})`,
      `Status: ${c.status}`,
      ...(c.error ? [`Error: ${c.error.error_code}: ${c.error.detail}`] : []),
      `Event: ${c.event} at ${sentAt}`,
    ];
    items.push({ kind: 'email', asset_id: c.asset.asset_id, target: ownerEmail, subject, body: lines.join('\n') + '\n' });
  }
  return items;
}
