/** One SRT cue. Times are in seconds; `text` holds the cue's lines joined by "\n". */
export interface SrtCue {
  /** The cue number as written in the file (parse) or its 1-based position (format/serialize). */
  index: number;
  start: number;
  end: number;
  text: string;
}

/** A timed word inside a subtitle segment (seconds). */
export interface SubtitleWord {
  text: string;
  start: number;
  end: number;
}

/** A transcript or script segment to be laid out as subtitles (seconds). */
export interface SubtitleSegment {
  start: number;
  end: number;
  text: string;
  /** Word timings where known; they take precedence over `text`. */
  words?: SubtitleWord[];
  speaker?: string;
}
