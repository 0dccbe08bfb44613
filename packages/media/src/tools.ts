/**
 * Where the ffmpeg and ffprobe binaries are: explicit options first, then the config
 * (FFMPEG_PATH / FFPROBE_PATH through `loadConfig()`), which falls back to the names on PATH.
 */
import { loadConfig, type DubConfig } from '@dub/core';

/** Public, partial: every media function accepts these next to its own options. */
export interface MediaToolOptions {
  /** ffmpeg binary; default `config.ffmpegPath` (FFMPEG_PATH, else `ffmpeg` on PATH). */
  ffmpegPath?: string;
  /** ffprobe binary; default `config.ffprobePath` (FFPROBE_PATH, else `ffprobe` on PATH). */
  ffprobePath?: string;
  /** A loaded config to read the paths from instead of the environment. */
  config?: Pick<DubConfig, 'ffmpegPath' | 'ffprobePath'>;
}

export interface MediaTools {
  ffmpegPath: string;
  ffprobePath: string;
}

export function resolveMediaTools(opts: MediaToolOptions = {}): MediaTools {
  if (opts.ffmpegPath && opts.ffprobePath) return { ffmpegPath: opts.ffmpegPath, ffprobePath: opts.ffprobePath };
  const config = opts.config ?? loadConfig();
  return { ffmpegPath: opts.ffmpegPath || config.ffmpegPath, ffprobePath: opts.ffprobePath || config.ffprobePath };
}

/** Only the tool options of a larger options object (so its other fields do not reach another function's). */
export function tools(opts: MediaToolOptions): MediaToolOptions {
  return { ...(opts.ffmpegPath ? { ffmpegPath: opts.ffmpegPath } : {}), ...(opts.ffprobePath ? { ffprobePath: opts.ffprobePath } : {}), ...(opts.config ? { config: opts.config } : {}) };
}
