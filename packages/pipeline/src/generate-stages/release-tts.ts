/**
 * Where the models are not kept across jobs (DUB_KEEP_MODELS=0, `dub run`'s default): once the
 * speech timeline is rendered no later stage speaks a line, so the TTS engine (and its voice
 * conversion) is disposed and the sessions the synthesis loaded are released. The mix, the encode
 * and the quality stage's back-transcription then run without them: Kokoro-82M int8 held ~0.25 GB
 * there, at the generation's peak. Where they are kept (`dub serve`, `dub worker`: warm models for
 * the next job) it does nothing; the teardown disposes the engine and the sessions stay. A line
 * spoken after the release (none is) would load the model again. No progress share.
 */
import type { SessionStore } from '@dub/core';
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

/** `fn`'s result and the sessions it loaded into `sessions` (those not loaded before it), with their providers. */
export async function sessionsLoadedBy<T>(sessions: Pick<SessionStore, 'providers'>, fn: () => Promise<T>): Promise<{ value: T; loaded: ReadonlyMap<string, 'cpu' | 'cuda'> }> {
  const before = new Set(sessions.providers.keys());
  const value = await fn();
  return { value, loaded: new Map([...sessions.providers].filter(([file]) => !before.has(file))) };
}

/**
 * Disposes `dispose` (the TTS engine) then releases each session of `loaded` from `sessions`;
 * returns the released ones with their providers. Nothing when `keep` is not false.
 */
export async function releaseSynthesisSessions(keep: boolean | undefined, loaded: ReadonlyMap<string, 'cpu' | 'cuda'>, sessions: Pick<SessionStore, 'release'>, dispose: () => Promise<void>): Promise<ReadonlyMap<string, 'cpu' | 'cuda'> | undefined> {
  if (keep !== false) return undefined;
  await dispose();
  for (const file of loaded.keys()) await sessions.release(file);
  return loaded;
}

export const releaseTtsStage: GenerateStage = unweightedStage({
  name: 'release-tts',
  inputs: ['synth', 'speechKey'],
  async run(s) {
    const released = await releaseSynthesisSessions(s.rt.config.keepModels, s.synthSessions ?? new Map(), s.rt.sessions, () => s.synth!.dispose());
    if (released?.size) s.rt.ctx.logger.info({ models: [...released.keys()] }, 'synthesis models released');
    return released ? { releasedSessions: released } : {};
  },
});
