/**
 * Shorter lines (issue 26, item 4): an LLM asked through a local fake OpenAI-compatible server
 * with the line's character budget, an engine's n-best (Translator.nbest, as an offline model
 * gives it), and an engine that can do neither; the report's `shortening` record says what was
 * tried in each case.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore, ShorteningSchema, silentLogger, validate, type ScriptSegment, type StageContext, type VersionScript } from '@dub/core';
import { loadTranslateConfig, type Translator } from '@dub/translate';
import { ArtifactCache } from './artifacts.js';
import { condensingShortener, NBEST_SIZE, sentenceCase, pickShorter, shortenerFor, shortenerOf, shortenLine, type LineLength } from './generate-shorten.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shorten-test-'));
const ctx = { logger: silentLogger } as StageContext;
const cache = new ArtifactCache(new FsBlobStore(path.join(dir, 'store')), 'ast_shorten', { tmpDir: dir });

const SOURCE = 'And so, my fellow Americans, ask not what your country can do for you.';
const LONG = 'Y así, mis compatriotas americanos, no preguntéis qué puede hacer vuestro país por vosotros.';
const SHORT = 'Compatriotas, no preguntéis qué hará el país por vosotros.';
const segment: ScriptSegment = { id: 'seg-1', start: 0, end: 4, speaker: 'speaker_1', source_text: SOURCE, target_text: LONG };
const script: VersionScript = { v: 1, asset_id: 'ast_shorten', version_id: 'ver_shorten', source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'apertium', speakers: [], segments: [segment], updated_at: new Date(0).toISOString() };
/** Seconds to speak a text: 0.06 s a character (a stand-in for the TTS engine). */
const speak = async (text: string): Promise<LineLength> => ({ natural: text.length * 0.06 });

/** A fake OpenAI-compatible server: the short line when the segment's max_chars allows it, else the long one; `reply` overrides. */
let server: http.Server;
let url = '';
const requests: { segments: { id: string; text: string; max_chars: number }[] }[] = [];
let reply: string | undefined;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: { role: string; content: string }[] };
      const payload = JSON.parse(body.messages.find((m) => m.role === 'user')!.content) as (typeof requests)[number];
      requests.push(payload);
      const translations = payload.segments.map((s) => ({ id: s.id, text: reply ?? (s.max_chars >= SHORT.length ? SHORT : LONG) }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify({ translations }) } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await fsp.rm(dir, { recursive: true, force: true });
});

const llmConfig = () => loadTranslateConfig({ DUB_TRANSLATE_ENGINE: 'openai-compatible', DUB_TRANSLATE_OPENAI_BASE_URL: url, DUB_TRANSLATE_OPENAI_MODEL: 'fake-model', DUB_TRANSLATE_ATTEMPTS: '1' });

/** A translator with only an n-best (as an offline model exposes it): `texts` best first. */
function nbestTranslator(texts: string[], calls: number[] = []): Translator {
  return {
    id: 'm2m100',
    label: 'M2M100',
    engine: 'm2m100',
    dispose: async () => {},
    lengthBudget: false,
    supports: async () => ({ supported: true }),
    translate: async (r) => r.segments.map((s) => ({ id: s.id, text: texts[0]! })),
    nbest: async (r, n) => (calls.push(n), r.segments.map((s) => ({ id: s.id, texts }))),
  };
}

describe('shorter lines', () => {
  it('the LLM is asked for the line within its character budget; the record says what was tried and what is spoken', async () => {
    const shortener = await shortenerFor(script, llmConfig(), cache, ctx);
    expect(shortener).toMatchObject({ engine: 'openai-compatible', possible: true, method: 'length_budget' });
    const before = { natural: LONG.length * 0.06 };
    // room for 3.5 s at the cap: budget = characters x cap x room / seconds
    const r = await shortenLine(shortener, segment, before, 3.5, 1.25, speak);
    const budget = Math.floor((LONG.length * 1.25 * 3.5) / before.natural);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.segments).toMatchObject([{ id: 'seg-1', text: SOURCE, max_chars: budget }]);
    expect(r.text).toBe(SHORT);
    expect(r.length!.natural).toBeCloseTo(SHORT.length * 0.06, 9);
    expect(r.record).toMatchObject({
      engine: 'openai-compatible',
      attempted: true,
      applied: true,
      method: 'length_budget',
      budget_chars: budget,
      chars_before: LONG.length,
      chars_after: SHORT.length,
      seconds_before: Math.round(before.natural * 1000) / 1000,
      seconds_after: Math.round(SHORT.length * 60) / 1000,
    });
    expect(r.record.reason).toMatch(/re-translated within \d+ characters/);
    // the same request again comes from the cache
    await shortenLine(shortener, segment, before, 3.5, 1.25, speak);
    expect(requests).toHaveLength(1);
  });

  it("an LLM line that is not shorter is tried and said, not spoken; neither is one that is not shorter to speak", async () => {
    const shortener = await shortenerFor(script, llmConfig(), cache, ctx);
    reply = `${LONG} Sí.`;
    try {
      const r = await shortenLine(shortener, segment, { natural: 6 }, 2.9, 1.25, speak);
      expect(r.text).toBeUndefined();
      expect(r.record).toMatchObject({ attempted: true, applied: false, method: 'length_budget', chars_before: LONG.length });
      expect(r.record.reason).toMatch(/is not shorter than the script's/);
    } finally {
      reply = undefined;
    }
    const slow = await shortenLine(shortener, segment, { natural: 2 }, 1.8, 1.25, async () => ({ natural: 2.5 }));
    expect(slow.text).toBeUndefined();
    expect(slow.record).toMatchObject({ attempted: true, applied: false, chars_after: SHORT.length, seconds_before: 2, seconds_after: 2.5 });
    expect(slow.record.reason).toMatch(/not shorter to speak/);
  });

  it("an engine's n-best: the best-ranked alternative within the budget, else the shortest; the record counts them", async () => {
    const calls: number[] = [];
    const mid = 'Así que, compatriotas, no preguntéis qué puede hacer vuestro país por vosotros.';
    const shortener = shortenerOf(nbestTranslator([LONG, LONG, mid, SHORT, 'País.'], calls), script, cache, ctx);
    expect(shortener).toMatchObject({ engine: 'm2m100', possible: true, method: 'n_best' });
    // a budget that the middle one meets: it is ranked above the shorter ones
    const before = { natural: LONG.length * 0.06 };
    const room = ((mid.length + 1) * before.natural) / (LONG.length * 1.25);
    const r = await shortenLine(shortener, segment, before, room, 1.25, speak);
    expect(calls).toEqual([NBEST_SIZE]);
    expect(r.text).toBe(mid);
    expect(r.record).toMatchObject({ engine: 'm2m100', attempted: true, applied: true, method: 'n_best', candidates: 4, chars_after: mid.length });
    expect(r.record.reason).toMatch(/alternative within \d+ characters/);
    // pickShorter on its own: distinct, best-ranked within budget, else the shortest, never one as long as the script's
    expect(pickShorter([LONG, mid, SHORT], LONG, SHORT.length)).toEqual({ text: SHORT, candidates: 3 });
    expect(pickShorter([LONG, mid, SHORT], LONG, 10)).toEqual({ text: SHORT, candidates: 3 });
    expect(pickShorter([LONG, ` ${LONG} `, ''], LONG, 10)).toEqual({ candidates: 1 });
  });

  it('n-best alternatives none of which is shorter: tried, not applied, and said', async () => {
    const shortener = shortenerOf(nbestTranslator([LONG, `${LONG}!`]), { ...script, segments: [{ ...segment, id: 'seg-2' }] }, cache, ctx);
    const r = await shortenLine(shortener, { ...segment, id: 'seg-2', source_text: `${SOURCE} ` }, { natural: 6 }, 3, 1.25, speak);
    expect(r.text).toBeUndefined();
    expect(r.record).toMatchObject({ attempted: true, applied: false, method: 'n_best', candidates: 2 });
    expect(r.record.reason).toMatch(/none of m2m100's 2 alternatives is shorter/);
  });

  it("apertium for the pair: the offline model's n-best where it is installed; here (not fetched) the source line condensed, and the reason says what would", async () => {
    const dirs = { DUB_TRANSLATE_M2M100_MODEL: 'm2m100-not-here' };
    const shortener = await shortenerFor(script, loadTranslateConfig({ DUB_TRANSLATE_ENGINE: 'apertium', ...dirs }), cache, ctx);
    expect(shortener).toMatchObject({ engine: 'apertium', possible: true, method: 'condensed' });
    expect(shortener.reason).toMatch(/apertium translates at its own length.*M2M100's n-best would, where it serves the pair \(here: .*the source line is condensed/);
    // off (DUB_SHORTEN_CONDENSE=off): nothing asked, as before
    const off = await shortenerFor(script, loadTranslateConfig({ DUB_TRANSLATE_ENGINE: 'apertium', ...dirs }), cache, ctx, { condense: false });
    expect(off).toMatchObject({ engine: 'apertium', possible: false });
    expect(off.reason).toMatch(/condensing the source line is off \(DUB_SHORTEN_CONDENSE=off\)/);
  });

  it('an engine that can do neither: the source condensed (fillers left out) and translated again by it; the record names what was left out', async () => {
    const asked: string[] = [];
    // a stand-in for apertium: the long line for the filled source, the short one for the condensed
    const plain: Translator = { id: 'apertium', label: 'Apertium', engine: 'apertium', dispose: async () => {}, lengthBudget: false, supports: async () => ({ supported: true }), translate: async (r) => r.segments.map((s) => (asked.push(s.text), { id: s.id, text: /know/.test(s.text) ? LONG : SHORT })) };
    const filled = { ...segment, id: 'seg-c1', source_text: 'Well, you know, ask not what your country can do for you.' };
    const shortener = condensingShortener(plain, { ...script, segments: [filled] }, cache, ctx, 'apertium translates at its own length')!;
    expect(shortener).toMatchObject({ engine: 'apertium', possible: true, method: 'condensed' });
    const r = await shortenLine(shortener, filled, { natural: LONG.length * 0.06 }, 3.5, 1.25, speak);
    expect(asked).toEqual(['Ask not what your country can do for you.']);
    expect(r.text).toBe(SHORT);
    expect(r.record).toMatchObject({ engine: 'apertium', attempted: true, applied: true, method: 'condensed', removed: ['well', 'you know'], chars_before: LONG.length, chars_after: SHORT.length });
    expect(r.record.reason).toMatch(/the source condensed \(left out: well, you know\) and translated again/);
    expect(validate(ShorteningSchema, r.record)).toBeTruthy();
    // a line with nothing to leave out is not asked for, and says so
    const plainLine = await shortenLine(shortener, { ...segment, id: 'seg-c2' }, { natural: 6 }, 3, 1.25, speak);
    expect(plainLine.record).toMatchObject({ attempted: false, applied: false });
    expect(plainLine.record.reason).toMatch(/no hesitation, filler, discourse marker or repeated word to leave out/);
    expect(asked).toHaveLength(1);
    // the condensed line starts with a capital where the script's does
    expect(sentenceCase(' no hay mucha diferencia.', 'Bien, no hay')).toBe(' No hay mucha diferencia.');
    expect(sentenceCase('¿eres tú?', '¿Eres')).toBe('¿Eres tú?');
    expect(sentenceCase('y así', 'y así, pues')).toBe('y así');
    // a source language without rules: no condensing shortener
    expect(condensingShortener(plain, { ...script, source_locale: 'fr-FR' }, cache, ctx, 'x')).toBeUndefined();
  });

  it('an engine that neither takes a budget nor ranks alternatives: nothing asked, and the record says why', async () => {
    const plain: Translator = { id: 'apertium', label: 'Apertium', engine: 'apertium', dispose: async () => {}, lengthBudget: false, supports: async () => ({ supported: true }), translate: async (r) => r.segments.map((s) => ({ id: s.id, text: LONG })) };
    const shortener = shortenerOf(plain, script, cache, ctx);
    expect(shortener.possible).toBe(false);
    expect(shortener.method).toBeUndefined();
    const r = await shortenLine(shortener, segment, { natural: 6, atSpeakerRate: 7 }, 3, 1.25, speak);
    expect(r.text).toBeUndefined();
    expect(r.record).toEqual({ engine: 'apertium', attempted: false, applied: false, chars_before: LONG.length, seconds_before: 7, reason: expect.stringMatching(/apertium translates at its own length/) });
  });
});
