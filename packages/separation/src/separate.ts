/**
 * `separate()`: the stage's one call. Given clean tracks skip the model; otherwise the engine
 * (created for this call, or the caller's `engineInstance`) splits the input into speech and
 * background.
 */
import { resolveContext, ValidationError, type PartialContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { defaultTrackPath, fromGivenTracks } from './given-tracks.js';
import { resolveSeparateOptions, type SeparateOptions } from './options.js';
import { loadSeparationEngine } from './registry.js';
import type { SeparatedAudio, SeparatedFiles } from './types.js';

/** Separate audio in memory (at the engine's rate, 44.1 kHz for htdemucs). */
export function separate(input: PlanarAudio, options?: SeparateOptions, ctx?: PartialContext): Promise<SeparatedAudio>;
/** Separate a WAV file (any rate) into two WAV files, streaming it in windows. */
export function separate(input: string, options?: SeparateOptions, ctx?: PartialContext): Promise<SeparatedFiles>;
export async function separate(input: PlanarAudio | string, options: SeparateOptions = {}, context: PartialContext = {}): Promise<SeparatedAudio | SeparatedFiles> {
  const ctx = resolveContext(context);
  const o = resolveSeparateOptions(options);
  if (o.given) {
    if (typeof input === 'string') {
      const { speech, background } = o.given;
      if ((speech !== undefined && typeof speech !== 'string') || (background !== undefined && typeof background !== 'string')) {
        throw new ValidationError('given tracks must be file paths when the input is a file', { field: 'given' });
      }
      return fromGivenTracks(
        { mix: input, ...(speech !== undefined ? { speech } : {}), ...(background !== undefined ? { background } : {}) },
        { ...(o.speechPath ? { speechPath: o.speechPath } : {}), ...(o.backgroundPath ? { backgroundPath: o.backgroundPath } : {}), format: o.format, tmpDir: o.engineOptions.tmpDir, ffmpegPath: o.engineOptions.ffmpegPath },
        ctx,
      );
    }
    const { speech, background } = o.given;
    if ((speech !== undefined && typeof speech === 'string') || (background !== undefined && typeof background === 'string')) {
      throw new ValidationError('given tracks must be audio in memory when the input is', { field: 'given' });
    }
    return fromGivenTracks({ mix: input, ...(speech !== undefined ? { speech } : {}), ...(background !== undefined ? { background } : {}) }, {}, ctx);
  }
  const engine = o.engineInstance ?? (await loadSeparationEngine(o.engine, o.engineOptions, ctx));
  try {
    if (typeof input === 'string') {
      return await engine.separate(
        { path: input, speechPath: o.speechPath ?? defaultTrackPath(input, 'speech'), backgroundPath: o.backgroundPath ?? defaultTrackPath(input, 'background'), format: o.format },
        ctx,
      );
    }
    return await engine.separate(input, ctx);
  } finally {
    if (!o.engineInstance) await engine.dispose();
  }
}
