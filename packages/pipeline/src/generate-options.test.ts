import { describe, expect, it } from 'vitest';
import { PLACEMENT_DEFAULTS, TURN_DEFAULTS } from '@dub/core';
import { AAC_CHUNK_FRAMES } from '@dub/media';
import { STREAMING_LOUDNESS, VOICE_OVER_DEFAULTS } from '@dub/mix';
import { resolveGenerateOptions } from './generate-options.js';

describe('resolveGenerateOptions', () => {
  it('applies every default once, keeping what cache keys name as given', () => {
    const r = resolveGenerateOptions({}, {});
    expect(r.loudness).toEqual({ given: null, target: STREAMING_LOUDNESS });
    expect(r.voiceOver).toEqual({ duckDb: VOICE_OVER_DEFAULTS.duckDb, delaySeconds: VOICE_OVER_DEFAULTS.delaySeconds });
    expect(r.placement).toEqual({ speedCap: PLACEMENT_DEFAULTS.speedCap, speedLimit: PLACEMENT_DEFAULTS.speedLimit, turns: TURN_DEFAULTS, condense: true });
    expect(r.audio).toEqual({ chunking: {}, chunkFrames: AAC_CHUNK_FRAMES });
    expect(r.synthesis).toEqual({ speakerPace: true, predict: true, speedResponse: true });
    expect(r.quality).toEqual({ asr: 'auto', speaker: 'auto' });
    expect(r.voiceConversion).toBe('auto');
    expect(r.lips).toEqual({ selected: 'auto' });
  });

  it('takes the given options and the environment', () => {
    const r = resolveGenerateOptions(
      { loudness: { integrated: -23 }, placement: { speedCap: 1.8, speedLimit: 1.5 }, audio: { chunkFrames: 64 }, lips: { engine: 'viseme-warp' }, synthesis: { linesAtOnce: 2 } },
      { DUB_PLACEMENT_TURNS: 'off', DUB_SPEAKER_PACE: 'off', DUB_SPEAKER_ENGINE: 'mfcc', DUB_SHORTEN_CONDENSE: 'off', DUB_SYNTH_PREDICT: 'off', DUB_SPEED_RESPONSE: 'off' },
    );
    expect(r.loudness).toEqual({ given: { integrated: -23 }, target: { ...STREAMING_LOUDNESS, integrated: -23 } });
    // the limit is never below the cap
    expect(r.placement).toEqual({ speedCap: 1.8, speedLimit: 1.8, turns: false, condense: false });
    expect(r.audio).toEqual({ chunking: { chunkFrames: 64 }, chunkFrames: 64 });
    expect(r.synthesis).toEqual({ linesAtOnce: 2, speakerPace: false, predict: false, speedResponse: false });
    expect(r.quality.speaker).toBe('mfcc');
    expect(r.lips.selected).toBe('explicit');
  });
});
