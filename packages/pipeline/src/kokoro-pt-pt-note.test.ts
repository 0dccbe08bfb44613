/**
 * Kokoro's pt-PT is a Brazilian Portuguese voice reading espeak-ng's European Portuguese phonemes
 * (issue 23): the tts record says so in its notes, whether auto or a configuration chose Kokoro,
 * so engines.json, `dub run`'s summary (which prints each record's notes) and the quality report's
 * engines carry it. No model runs here.
 */
import { describe, expect, it } from 'vitest';
import type { JobRuntime, Transcript, VersionScript } from '@dub/core';
import { KOKORO_PT_PT_NOTE } from '@dub/voice';
import { withKokoroNote, type SynthesisResult, type TtsEngineChoice } from './generate-synthesis.js';
import { generationEngines } from './generate-stages/engines.js';

const kokoro = (selected: 'auto' | 'explicit'): TtsEngineChoice => ({ id: 'kokoro', selected, reason: selected === 'auto' ? 'auto: Kokoro-82M v1.0 speaks pt-PT' : 'DUB_TTS_ENGINE=kokoro', models: [] });

describe("the tts record of Kokoro's pt-PT", () => {
  it('carries the note, auto or explicit; pt-BR, other engines and other locales carry none', () => {
    for (const selected of ['auto', 'explicit'] as const) expect(withKokoroNote(kokoro(selected), 'pt-PT').notes).toEqual([KOKORO_PT_PT_NOTE]);
    expect(withKokoroNote(kokoro('auto'), 'pt-BR')).toEqual(kokoro('auto'));
    expect(withKokoroNote(kokoro('auto'), 'es-ES')).toEqual(kokoro('auto'));
    const espeak: TtsEngineChoice = { id: 'espeak-ng', selected: 'explicit', reason: 'DUB_TTS_ENGINE=espeak-ng', models: [] };
    expect(withKokoroNote(espeak, 'pt-PT')).toEqual(espeak);
    // notes already there are kept
    expect(withKokoroNote({ ...kokoro('auto'), notes: ['earlier'] }, 'pt-PT').notes).toEqual(['earlier', KOKORO_PT_PT_NOTE]);
  });

  it("is written into the generation's tts engine record (engines.json, the report), with the voice in the label", async () => {
    const rt = { sessions: { providers: new Map() }, config: { device: 'cpu' } } as unknown as JobRuntime;
    const synth = {
      ttsChoice: withKokoroNote(kokoro('explicit'), 'pt-PT'),
      engineId: 'kokoro',
      ttsModel: undefined,
      ttsLabel: 'Kokoro-82M v1.0 int8: pf_dora',
      conversion: { id: 'none', selected: 'auto', reason: 'auto: no voice conversion model here', models: [] },
      conversionLabel: 'no voice conversion',
      ttsTerms: {},
      conversionTerms: {},
      transcript: { engines: {} } as unknown as Transcript,
      script: { engines: {} } as unknown as VersionScript,
      stretcher: 'atempo',
    } as unknown as SynthesisResult;
    const engines = await generationEngines(rt, synth, undefined);
    expect(engines.tts).toMatchObject({ id: 'kokoro', label: 'Kokoro-82M v1.0 int8: pf_dora', selected: 'explicit', notes: [KOKORO_PT_PT_NOTE] });
    // another locale's record has no notes
    const es = await generationEngines(rt, { ...synth, ttsChoice: withKokoroNote(kokoro('auto'), 'es-ES') }, undefined);
    expect(es.tts!.notes).toBeUndefined();
  });
});
