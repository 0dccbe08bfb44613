import path from 'node:path';

/** Containers that take `-movflags +faststart` (moov atom first, for progressive playback). */
export function faststartArgs(output: string): string[] {
  const ext = path.extname(output).toLowerCase();
  return ['.mp4', '.m4v', '.mov', '.m4a'].includes(ext) ? ['-movflags', '+faststart'] : [];
}
