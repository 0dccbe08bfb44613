/**
 * The header's note on subtitles a user brought (issue 24): what reading the asset's source_srt
 * (the transcript's `asr` record, id `source_srt`) and the version's reference SRT (the script's
 * `translation` record, id `reference_srt`) normalised, as @dub/srt's readSrt recorded it
 * ("decoded as windows-1252 (...)", "3 empty cues dropped (first at line 12)"). Type-only import:
 * the page loads no server package code.
 */
import type { EngineRecord } from '@dub/core';

/** The header line: undefined when neither SRT needed a normalisation (or none was given). */
export function srtNotesText(engines: Record<string, EngineRecord> | undefined): string | undefined {
  const parts: string[] = [];
  const asr = engines?.asr;
  if (asr?.id === 'source_srt' && asr.notes?.length) parts.push(`source subtitles: ${asr.notes.join('; ')}`);
  const translation = engines?.translation;
  if (translation?.id === 'reference_srt' && translation.notes?.length) parts.push(`reference subtitles: ${translation.notes.join('; ')}`);
  return parts.length ? `Subtitles read as ffmpeg reads them. ${parts.join('. ')}.` : undefined;
}
