/**
 * A version's reference SRT read as ffmpeg reads it (@dub/srt readSrt): the translation record
 * of the script says what was normalised; a file ffmpeg would garble fails the version naming
 * the line, the problem and the fix. No media or model: the transcript is written directly.
 */
import { describe, expect, it } from 'vitest';
import { blobKeys, type Transcript } from '@dub/core';
import { prepareVersion } from '@dub/pipeline';
import { makeRuntime } from './prepare-helpers.js';

const ASSET = 'ast_refsrt';

function transcript(): Transcript {
  const seg = (id: string, start: number, end: number, text: string) => ({ id, start, end, speaker: 'S1', text, words: [{ text, start, end, confidence: 1 }] });
  return { v: 1, locale: 'en-US', engine: 'source_srt', duration: 6, speakers: [{ id: 'S1' }], segments: [seg('seg_1', 0.5, 2.5, 'Good morning.'), seg('seg_2', 3, 5.5, 'How are you?')] };
}

async function prepareWith(srt: string) {
  const rt = makeRuntime();
  await rt.store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript()));
  const job = { v: 1 as const, type: 'prepare-version' as const, job_id: 'ver_r-prepare', asset_id: ASSET, source_locale: 'en-US', version: { version_id: 'ver_r', dubbing_id: 'dub_r', locale: 'es-ES', srt } };
  return prepareVersion(job, rt);
}

describe('a reference SRT as ffmpeg reads it', () => {
  it('index 0, CR line ends, 1-digit fields, coordinates and an empty cue: the texts, with the notes in the translation record', async () => {
    const srt = '0\r0:0:0,500 --> 0:0:2,500 X1:1 X2:2 Y1:3 Y2:4\rBuenos días.\r\r1\r00:00:02,600 --> 00:00:02,900\r\r2\r00:00:03,000 --> 00:00:05,500\r¿Cómo estás?\r';
    const r = await prepareWith(srt);
    expect(r.script.translation_engine).toBe('reference_srt');
    expect(r.script.segments.map((s) => s.target_text)).toEqual(['Buenos días.', '¿Cómo estás?']);
    expect(r.script.engines?.translation?.notes).toEqual([
      'lines end with CR only (old Mac style): read as line ends',
      'coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 2)',
      '1 empty cue dropped (line 6)',
    ]);
  });

  it('a strict SRT has no notes', async () => {
    const r = await prepareWith('1\n00:00:00,500 --> 00:00:02,500\nBuenos días.\n\n2\n00:00:03,000 --> 00:00:05,500\n¿Cómo estás?\n');
    expect(r.script.engines?.translation?.notes).toBeUndefined();
  });

  it('a timing line without milliseconds fails the version with the line, the problem and the fix', async () => {
    const err = await prepareWith('1\n00:00:00 --> 00:00:02\nBuenos días.\n').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'VersionError' });
    expect((err as Error).message).toMatch(/^the reference srt of es-ES is not valid SRT: line 2: "00:00:00 --> 00:00:02" looks like a timing line but "00:00:00" has no milliseconds; fix: /);
  });
});
