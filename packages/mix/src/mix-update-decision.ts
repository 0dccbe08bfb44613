/**
 * Whether a re-dub's replace mix can be updated from the previous generation's mix
 * (updateMixReplace) rather than mixed in full: only when that generation left its mix state, the
 * state names the same background and duration, and it kept the premix's hop energies (the
 * integrated loudness is recomputed from them). Otherwise the reason, which the quality report
 * carries (`mix.update.reason`). updateMixReplace may still fall back after reading the files
 * (another speech length, a gain past the tolerance).
 */

/** What the decision reads of the previous generation's mix state (blob keys). */
export interface PreviousMixState {
  /** The background mixed (null: a voice-over mix). */
  background: string | null;
  duration: number;
  /** The premix's K-weighted hop energies (null: the mix kept none). */
  hops: string | null;
}

export type MixUpdateDecision<S extends PreviousMixState> = { update: true; state: S & { hops: string } } | { update: false; reason: string };

/**
 * `previous`: the previous generation, when one aimed at the same target and mix, with its mix
 * state when that state's blobs are still there; `now`: this generation's background and duration.
 */
export function mixUpdateDecision<S extends PreviousMixState>(previous: { mixState?: S } | undefined, now: { background: string | null; duration: number }): MixUpdateDecision<S> {
  const state = previous?.mixState;
  if (!state) return { update: false, reason: previous ? 'the previous generation left no mix state' : 'no previous generation' };
  if (state.background !== now.background || state.duration !== now.duration || !state.hops) return { update: false, reason: 'the previous mix had another background or length' };
  return { update: true, state: state as S & { hops: string } };
}
