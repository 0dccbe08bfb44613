/**
 * Subtitle segments of the project's documents: the source transcript of an asset and the
 * target text of a version's script. Word timings are passed on where the document has them
 * (otherwise the formatter estimates them from character share).
 */
import type { Transcript, VersionScript, Word } from '@dub/core';
import type { SubtitleSegment } from './types.js';

function words(ws: readonly Word[] | undefined): Pick<SubtitleSegment, 'words'> {
  return ws?.length ? { words: ws.map((w) => ({ text: w.text, start: w.start, end: w.end })) } : {};
}

/** The source-language transcript as subtitle segments. */
export function transcriptSubtitles(t: Transcript): SubtitleSegment[] {
  return t.segments.map((s) => ({ start: s.start, end: s.end, text: s.text, speaker: s.speaker, ...words(s.words) }));
}

/** A version's target text as subtitle segments. */
export function scriptSubtitles(s: VersionScript): SubtitleSegment[] {
  return s.segments.map((x) => ({ start: x.start, end: x.end, text: x.target_text, speaker: x.speaker, ...words(x.target_words) }));
}
