import { describe, expect, it } from 'vitest';
import { licenceWarningText, unclearedWeights } from './licences.js';

describe('licence warning of the header', () => {
  it('names each weight that ran without clearance for commercial use, and nothing when all are cleared', () => {
    const engines = {
      separation: { id: 'htdemucs-int8', label: 'HTDemucs v4 int8', model_id: 'htdemucs-int8', license: 'Demucs pretrained weights: scientific purposes only', commercial: 'no' as const, selected: 'auto' as const },
      vad: { id: 'silero', label: 'Silero VAD v5', license: 'MIT', commercial: 'yes' as const, selected: 'auto' as const },
      tts: { id: 'piper', label: 'Piper fr_FR-siwis-medium', license: 'CC-BY-4.0', commercial: 'unclear' as const, selected: 'explicit' as const },
      time_stretch: { id: 'rubberband', label: 'rubberband', selected: 'auto' as const },
    };
    expect(unclearedWeights(engines).map((w) => w.stage)).toEqual(['separation', 'tts']);
    expect(licenceWarningText(engines)).toBe(
      'Not cleared for commercial use: separation: HTDemucs v4 int8 (Demucs pretrained weights: scientific purposes only; commercial use no); tts: Piper fr_FR-siwis-medium (CC-BY-4.0; commercial use unclear). The service\'s NOTICE and --model-policy commercial (DUB_MODEL_POLICY) say more.',
    );
    expect(licenceWarningText({ vad: engines.vad, time_stretch: engines.time_stretch })).toBeUndefined();
    // a version without a result, or records written before licences were recorded
    expect(licenceWarningText(undefined)).toBeUndefined();
    expect(licenceWarningText({ separation: { id: 'htdemucs', selected: 'auto' } })).toBeUndefined();
  });
});
