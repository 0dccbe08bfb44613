/**
 * Text the source transcription removed (a repetition loop cut to its first copy by @dub/asr
 * dropLoopRepeats) in the transcript: on the segment holding the kept copy (`removed`, with the
 * text, where it was and the reason) and as a note line of the asr record, never silently.
 */
import { describe, expect, it } from 'vitest';
import { dropLoopRepeats, type AsrSegment } from '@dub/asr';
import { TranscriptSchema, validate, type Transcript } from '@dub/core';
import type { SpeakerTurns } from './stages.js';
import { buildTranscript, removedBySegment, removedTextNotes } from './transcript.js';

const words = (text: string, start: number, step: number) => text.split(' ').map((t, i) => ({ text: t, start: start + i * step, end: start + (i + 1) * step, confidence: 0.9 }));
const seg = (text: string, start: number, end: number, step: number): AsrSegment => ({ start, end, text, words: words(text, start, step) });

describe('a repetition loop removed from the source transcription, in the transcript', () => {
  it('is listed on the segment that keeps the first copy, and as a note', () => {
    // the recognition: a loop inside the first segment, then Whisper's one copy per segment
    const recognized = [seg("So I'm a d- I'm a d- I'm a d- I'm a d-", 0, 6.5, 0.5), seg("I'm a d-", 6.5, 8, 0.5), seg('Right, so.', 9, 10, 0.5)];
    const { segments, removed } = dropLoopRepeats(recognized, 'en-US');
    expect(segments.map((s) => [s.start, s.end, s.text])).toEqual([
      [0, 2, "So I'm a d-"],
      [9, 10, 'Right, so.'],
    ]);
    // the speakers stage labels the lines (and may split them)
    const turns: SpeakerTurns = { engine: 'mfcc', segments: segments.map((s) => ({ ...s, speaker: 'spk_1' })), speakers: [{ id: 'spk_1', speechSeconds: 3 }] };
    const t = validate<Transcript>(TranscriptSchema, buildTranscript('en-US', 10, 'whisper', turns, {}, undefined, undefined, removed), 'transcript');
    expect(t.segments[0]).toMatchObject({ id: 'seg-0001', text: "So I'm a d-", end: 2 });
    expect(t.segments[0]!.words.map((w) => w.text)).toEqual(['So', "I'm", 'a', 'd-']);
    expect(t.segments[0]!.removed).toEqual([
      {
        text: "I'm a d- I'm a d- I'm a d- I'm a d-",
        start: 2,
        end: 8,
        kind: 'repetition_loop',
        kept: "I'm a d-",
        reason: 'repetition loop: "I\'m a d-" decoded 5 times in a row at every temperature (a hallucination, not speech): kept once, the repeats removed',
      },
    ]);
    expect(t.segments[1]!.removed).toBeUndefined();
    expect(removedTextNotes(t.segments)).toEqual([`seg-0001 (2.00-8.00 s): removed "I'm a d- I'm a d- I'm a d- I'm a d-"; ${t.segments[0]!.removed![0]!.reason}`]);
  });

  it('goes to the segment whose span holds the kept copy, else the nearest', () => {
    const r = { start: 3, end: 5, text: 'x y x y', kept: 'x y', keptStart: 2, keptEnd: 3, period: 2, copies: 3, reason: 'r' };
    const lines = [
      { start: 0, end: 1.5 },
      { start: 1.5, end: 2.75 },
      { start: 3.25, end: 6 },
    ];
    // 3.0 is 0.25 s past the second line and 0.25 s before the third: the first nearest
    expect([...removedBySegment(lines, [r]).keys()]).toEqual([1]);
    expect([...removedBySegment(lines, [{ ...r, keptEnd: 1 }]).keys()]).toEqual([0]);
    expect([...removedBySegment(lines, [{ ...r, keptEnd: 3.2 }]).keys()]).toEqual([2]);
    expect(removedBySegment([], [r]).size).toBe(0);
  });
});
