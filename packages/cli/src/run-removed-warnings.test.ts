/**
 * `dub run`'s summary warnings about text the source transcription removed: one bounded line per
 * transcript.json `removed` entry (a repetition loop's repeats), derived from the transcript so a
 * run that resumes from the cached transcript lists them too; and one per window of speech Whisper
 * judged silent (`no_speech_windows`).
 */
import { describe, expect, it } from 'vitest';
import type { RemovedText, TranscriptSegment } from '@dub/core';
import { noSpeechWarnings, removedTextWarnings } from './commands/run.js';

const seg = (id: string, text: string, removed?: RemovedText[]): TranscriptSegment => ({ id, start: 0, end: 1, speaker: 'spk_1', text, words: [], ...(removed ? { removed } : {}) });
const loop = (kept: string, text: string, start: number, end: number): RemovedText => ({ text, start, end, kind: 'repetition_loop', kept, reason: 'repetition loop' });

describe('dub run: warnings for text removed from the source transcript', () => {
  it('one line per removal, with the kept copy, the copies, the span and where it is recorded', () => {
    const segments = [
      seg('seg-0001', "So I'm a d-", [loop("I'm a d-", "I'm a d- I'm a d- I'm a d- I'm a d-", 2, 8)]),
      seg('seg-0002', 'Right, so.'),
      // whole copies are counted (a partial last copy is not); two removals on one segment are two lines
      seg('seg-0003', 'thank you', [loop('thank you', 'thank you thank you thank', 11.25, 13.5), loop('yes', 'yes yes yes yes yes yes', 14, 16.04)]),
    ];
    expect(removedTextWarnings('en-US', { segments })).toEqual([
      `en-US: transcription: Whisper repeated "I'm a d-" 5 times; the repeats at 2.0-8.0 s were removed (transcript.json seg-0001)`,
      'en-US: transcription: Whisper repeated "thank you" 3 times; the repeats at 11.3-13.5 s were removed (transcript.json seg-0003)',
      'en-US: transcription: Whisper repeated "yes" 7 times; the repeats at 14.0-16.0 s were removed (transcript.json seg-0003)',
    ]);
    expect(removedTextWarnings('en-US', { segments: [segments[1]!] })).toEqual([]);
    expect(removedTextWarnings('de-DE', { segments: [segments[0]!] }, 'talk/transcript.json')[0]).toMatch(/^de-DE: .* \(talk\/transcript\.json seg-0001\)$/);
  });

  it('shortens a long kept copy with an ellipsis, so the line stays bounded', () => {
    const kept = 'and then we went down to the river and we saw the boats and the people on them';
    const [line] = removedTextWarnings('en-US', { segments: [seg('seg-0007', kept, [loop(kept, `${kept} ${kept}`, 3, 9)])] });
    expect(line).toContain(`"${kept.slice(0, 59).trimEnd()}…" 3 times`);
    expect(line!.length).toBeLessThan(200);
  });
});

describe('dub run: warnings for speech Whisper judged silent', () => {
  it('one line per window in transcript.json no_speech_windows: left out, or kept when every window was', () => {
    const no_speech_windows = [
      { start: 1.5, end: 8.011, no_speech_probability: 0.637, avg_logprob: -1.108, kept: true },
      { start: 30, end: 42.5, no_speech_probability: 0.91, avg_logprob: -1.6, kept: false },
    ];
    expect(noSpeechWarnings('en-US', { no_speech_windows })).toEqual([
      'en-US: transcription: 1.50-8.01 s: Whisper judged this speech silent (no-speech probability 0.64, average log-probability -1.11); transcribed after all: every window was judged so, and the voice-activity detector found speech there',
      'en-US: transcription: 30.00-42.50 s: Whisper judged this speech silent (no-speech probability 0.91, average log-probability -1.60); left out of the transcript',
    ]);
    expect(noSpeechWarnings('en-US', {})).toEqual([]);
  });
});
