import { describe, expect, it } from 'vitest';
import { srtNotesText } from './srt-notes.js';

describe('the header note on the subtitles read', () => {
  it("says what reading the source and reference SRTs normalised, and nothing when they needed nothing", () => {
    const engines = {
      asr: { id: 'source_srt', label: 'source subtitles', selected: 'explicit' as const, notes: ['lines end with CR only (old Mac style): read as line ends', '1 empty cue dropped (line 6)'] },
      translation: { id: 'reference_srt', label: 'reference_srt', selected: 'explicit' as const, notes: ['coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 2)'] },
      vad: { id: 'silero', selected: 'auto' as const },
    };
    expect(srtNotesText(engines)).toBe(
      'Subtitles read as ffmpeg reads them. source subtitles: lines end with CR only (old Mac style): read as line ends; 1 empty cue dropped (line 6). reference subtitles: coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 2).',
    );
    expect(srtNotesText({ asr: { ...engines.asr, notes: [] }, translation: { id: 'apertium', selected: 'auto' } })).toBeUndefined();
    expect(srtNotesText(undefined)).toBeUndefined();
  });
});
