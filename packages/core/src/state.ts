/**
 * The version state machine of the interface contract as data, plus the rules the contract leaves
 * open (documented in the README):
 * - preparation failing moves NotReady -> Failed (event version_failed);
 * - a failed generation moves Generating -> Failed (event version_generate_failed); PATCH revise
 *   then returns it to ReadyToEdit;
 * - revise of a version whose preparation failed re-runs preparation: Failed -> NotReady
 *   (trigger `revise_unprepared`);
 * - script edits from the studio are allowed only in ReadyToEdit.
 */
import type { AssetStatus, EventType, VersionStatus } from './domain.js';

export type VersionTrigger =
  | 'prepared'
  | 'prepare_failed'
  | 'generate'
  | 'generated'
  | 'generate_failed'
  | 'revise'
  | 'revise_unprepared'
  | 'edit';

export interface VersionTransition {
  from: VersionStatus;
  trigger: VersionTrigger;
  to: VersionStatus;
  /** Callback event sent when the transition happens, if any. */
  event?: EventType;
}

export const VERSION_TRANSITIONS: readonly VersionTransition[] = Object.freeze([
  { from: 'NotReady', trigger: 'prepared', to: 'ReadyToEdit', event: 'version_ready' },
  { from: 'NotReady', trigger: 'prepare_failed', to: 'Failed', event: 'version_failed' },
  { from: 'ReadyToEdit', trigger: 'generate', to: 'Generating', event: 'version_generating' },
  { from: 'Generating', trigger: 'generated', to: 'Completed', event: 'version_generated' },
  { from: 'Generating', trigger: 'generate_failed', to: 'Failed', event: 'version_generate_failed' },
  { from: 'Completed', trigger: 'revise', to: 'ReadyToEdit' },
  { from: 'ReadyToEdit', trigger: 'revise', to: 'ReadyToEdit' },
  { from: 'Failed', trigger: 'revise', to: 'ReadyToEdit' },
  { from: 'Failed', trigger: 'revise_unprepared', to: 'NotReady' },
  { from: 'ReadyToEdit', trigger: 'edit', to: 'ReadyToEdit' },
] as const satisfies readonly VersionTransition[]);

export type TransitionAnswer =
  | { allowed: true; to: VersionStatus; event?: EventType }
  | { allowed: false; allowedFrom: VersionStatus[] };

/** Is trigger T allowed from status S, and to what status does it lead? */
export function versionTransition(from: VersionStatus, trigger: VersionTrigger): TransitionAnswer {
  const t = VERSION_TRANSITIONS.find((x) => x.from === from && x.trigger === trigger);
  if (t) return t.event ? { allowed: true, to: t.to, event: t.event } : { allowed: true, to: t.to };
  return { allowed: false, allowedFrom: VERSION_TRANSITIONS.filter((x) => x.trigger === trigger).map((x) => x.from) };
}

/**
 * Asset status follows its versions (the contract leaves this open):
 * - Failed only when the asset itself failed (then asset.error is set, as the contract requires);
 * - Dubbing while any version is NotReady (being prepared) or the asset has no version yet;
 * - PendingReview when nothing is being prepared and some version failed (a person must look);
 * - Ready when every version is ReadyToEdit, Generating or Completed.
 */
export function deriveAssetStatus(assetFailed: boolean, versions: readonly VersionStatus[]): AssetStatus {
  if (assetFailed) return 'Failed';
  if (versions.length === 0 || versions.some((s) => s === 'NotReady')) return 'Dubbing';
  if (versions.some((s) => s === 'Failed')) return 'PendingReview';
  return 'Ready';
}
