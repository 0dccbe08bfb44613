/**
 * Test helper (not exported by the package): ffmpeg's reading of an SRT file, cue for cue, from
 * the packets its SubRip demuxer makes (`ffprobe -f srt -show_packets -show_data`): start and end
 * in seconds and the payload bytes exactly as the demuxer queued them (ffmpeg converts UTF-16 to
 * UTF-8 and passes every other encoding through as bytes). No decoder or encoder runs, so no
 * markup is rewritten.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface FfmpegCue {
  start: number;
  end: number;
  data: Buffer;
}

/** Why ffprobe cannot be used here, or undefined when it can. */
export function ffprobeMissing(): string | undefined {
  const r = spawnSync('ffprobe', ['-version'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'ffprobe is not installed (apt-get install ffmpeg)';
}

export function ffmpegCues(file: string): FfmpegCue[] {
  const out = execFileSync('ffprobe', ['-v', 'error', '-f', 'srt', '-i', file, '-show_entries', 'packet=pts,duration,data', '-show_data', '-of', 'json'], { maxBuffer: 1 << 28 }).toString();
  const packets = (JSON.parse(out) as { packets?: { pts: number; duration?: number; data: string }[] }).packets ?? [];
  return packets.map((p) => ({
    start: p.pts / 1000,
    // ffprobe prints a duration of 0 as N/A (absent from the JSON).
    end: (p.pts + (p.duration ?? 0)) / 1000,
    // Hex dump lines: "00000000: 4865 6c6c 6f0a ...  Hello." (offset, 8 groups of 2 bytes, then text).
    data: Buffer.from(
      p.data
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(10, 49).replace(/ /g, ''))
        .join(''),
      'hex',
    ),
  }));
}

/** The text normalisation readSrt applies on top of ffmpeg's reading: trailing white space off each line, blank lines out. */
export function normaliseCueText(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '')
    .join('\n');
}
