/**
 * Which controls the page enables in each version status and what it tells the user. The API
 * decides every transition; this only mirrors the contract's table so that buttons that would be
 * refused are not offered.
 */
import type { VersionStatus } from '@dub/core';

export interface StudioActions {
  /** Script edits and Save (PUT script, trigger `edit`). */
  edit: boolean;
  /** POST generate. */
  generate: boolean;
  /** PATCH revise. */
  revise: boolean;
  /** The status changes by itself (worker events): poll GET version. */
  poll: boolean;
  /** Why the script is read-only, or empty when it is editable. */
  readOnlyReason: string;
}

export function studioActions(status: VersionStatus, hasScript: boolean): StudioActions {
  switch (status) {
    case 'ReadyToEdit':
      return { edit: hasScript, generate: hasScript, revise: false, poll: false, readOnlyReason: hasScript ? '' : 'The version has no script.' };
    case 'NotReady':
      return { edit: false, generate: false, revise: false, poll: true, readOnlyReason: 'The version is being prepared. It becomes editable when preparation finishes; this page updates by itself.' };
    case 'Generating':
      return { edit: false, generate: false, revise: false, poll: true, readOnlyReason: 'The final video is being generated. Editing is disabled until it finishes; this page updates by itself.' };
    case 'Completed':
      return { edit: false, generate: false, revise: true, poll: false, readOnlyReason: 'The video is generated; only preview remains. Revise returns the version to editing and permanently removes the generated video.' };
    case 'Failed':
      return { edit: false, generate: false, revise: true, poll: false, readOnlyReason: 'The version failed. Revise returns it to editing.' };
  }
}

/** Delay before the next status poll: every 2 s for the first minute, then every 5 s. */
export function pollDelayMs(elapsedMs: number): number {
  return elapsedMs < 60_000 ? 2000 : 5000;
}
