import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamError } from '@dub/core';
import { translatorConformance } from '../testing/conformance.js';
import { startFakeTranslationServer, type FakeTranslationServer } from '../testing/fake-translation-server.js';
import type { BaseTranslatorOptions } from '../base-translator.js';
import type { Translator } from '../types.js';
import { createDeeplTranslator, deeplBaseUrl, deeplTargetLang } from './deepl.js';
import { createLibreTranslateTranslator } from './libretranslate.js';
import { createOpenAiCompatibleTranslator } from './openai-compatible.js';

let server: FakeTranslationServer;
beforeAll(async () => {
  server = await startFakeTranslationServer();
});
afterAll(async () => {
  await server.close();
});

const FAST: BaseTranslatorOptions = { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 40 }, timeoutMs: 2_000 };
const LINES = ['Hello there.', 'How are you?', 'I am fine, thanks.', 'See you tomorrow.', 'Goodbye.'];

type Make = (opts: BaseTranslatorOptions) => Translator;
const ENGINES: [string, Make][] = [
  ['openai-compatible', (o) => createOpenAiCompatibleTranslator({ ...o, baseUrl: `${server.url}/v1`, apiKey: 'sk-test', model: 'test-model' })],
  ['deepl', (o) => createDeeplTranslator({ ...o, apiKey: 'key-123:fx', baseUrl: server.url })],
  ['libretranslate', (o) => createLibreTranslateTranslator({ ...o, baseUrl: server.url, apiKey: 'lt-key' })],
];

for (const [name, make] of ENGINES) {
  translatorConformance(`${name} against a local server`, {
    create: ({ maxBatchSegments }) => ({ translator: make({ ...FAST, maxBatchSegments }), sourceLocale: 'en-US', targetLocale: 'es-ES' }),
    looksTranslated: (src, out) => out.toLowerCase() === `[es] ${src}`.toLowerCase(),
    lines: LINES,
  });
}

const req = (n = 2) => ({ sourceLocale: 'en-US', targetLocale: 'es-ES', segments: LINES.slice(0, n).map((text, i) => ({ id: `s${i}`, text })) });

describe.each(ENGINES)('%s failure handling', (_name, make) => {
  const fresh = () => {
    server.requests.length = 0;
    server.faults.length = 0;
  };

  it('retries 5xx and succeeds', async () => {
    fresh();
    server.faults.push({ status: 500 }, { status: 503 });
    const out = await make(FAST).translate(req());
    expect(out.map((o) => o.text)).toEqual(['[es] Hello there.', '[es] How are you?']);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
  });

  it('honours Retry-After on 429', async () => {
    fresh();
    server.faults.push({ status: 429, retryAfter: '1' });
    const t0 = Date.now();
    const out = await make(FAST).translate(req(1));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(out).toHaveLength(1);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('retries 408 and does not retry other 4xx', async () => {
    fresh();
    server.faults.push({ status: 408 });
    await expect(make(FAST).translate(req(1))).resolves.toHaveLength(1);
    fresh();
    server.faults.push({ status: 400, body: '{"error":"bad language"}' });
    const err = (await make(FAST).translate(req(1)).catch((e: unknown) => e)) as UpstreamError;
    expect(err).toMatchObject({ code: 'upstream_error', retryable: false, upstreamStatus: 400 });
    expect(err.message).toContain('bad language');
    expect(server.requests).toHaveLength(1);
  });

  it('fails after the last attempt with a retryable error when the server keeps failing', async () => {
    fresh();
    server.faults.push({ status: 502 }, { status: 502 }, { status: 502 }, { status: 502 });
    await expect(make(FAST).translate(req(1))).rejects.toMatchObject({ code: 'upstream_error', retryable: true, upstreamStatus: 502 });
    expect(server.requests).toHaveLength(3);
  });

  it('times out a slow request and retries it', async () => {
    fresh();
    server.faults.push({ delayMs: 600 });
    const t0 = Date.now();
    const out = await make({ ...FAST, timeoutMs: 200 }).translate(req(1));
    expect(out).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(600);
    fresh();
    server.faults.push({ delayMs: 600 }, { delayMs: 600 });
    await expect(make({ ...FAST, timeoutMs: 150, retry: { ...FAST.retry, attempts: 2 } }).translate(req(1))).rejects.toMatchObject({
      code: 'upstream_error',
      retryable: true,
      details: { reason: 'timeout' },
    });
  });

  it.each(['not-json', 'missing-id', 'extra-id', 'duplicate-id', 'wrong-count', 'number-text', 'no-translations'] as const)(
    'retries a malformed reply (%s), then never returns a partial result',
    async (kind) => {
      fresh();
      server.faults.push({ malformed: kind });
      const out = await make(FAST).translate(req(3));
      expect(out.map((o) => o.id)).toEqual(['s0', 's1', 's2']);
      expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
      fresh();
      server.faults.push({ malformed: kind }, { malformed: kind }, { malformed: kind });
      await expect(make(FAST).translate(req(3))).rejects.toMatchObject({ code: 'upstream_error', details: { reason: 'malformed_reply' } });
    },
  );

  it('treats a refused connection as retryable', async () => {
    const closed = await startFakeTranslationServer();
    const url = closed.url;
    await closed.close();
    const t: Translator =
      _name === 'deepl'
        ? createDeeplTranslator({ ...FAST, apiKey: 'k', baseUrl: url })
        : _name === 'libretranslate'
          ? createLibreTranslateTranslator({ ...FAST, baseUrl: url })
          : createOpenAiCompatibleTranslator({ ...FAST, baseUrl: url, model: 'm' });
    await expect(t.translate(req(1))).rejects.toMatchObject({ code: 'upstream_error', retryable: true });
  });

  it('stops waiting for a retry when the caller cancels', async () => {
    fresh();
    server.faults.push({ status: 429, retryAfter: '30' });
    const ac = new AbortController();
    setTimeout(() => ac.abort('shutdown'), 150);
    const t0 = Date.now();
    await expect(make(FAST).translate(req(1), { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});

describe('wire formats', () => {
  it('openai-compatible: bearer key, model, json mode, ids, speakers, durations and budgets in the prompt', async () => {
    server.requests.length = 0;
    const t = createOpenAiCompatibleTranslator({ ...FAST, baseUrl: `${server.url}/v1/`, apiKey: 'sk-test', model: 'qwen' });
    await t.translate({
      sourceLocale: 'en-US',
      targetLocale: 'de-DE',
      context: 'a cooking show',
      segments: [
        { id: 'a', text: 'Welcome to the show.', speaker: 'S1', duration: 2 },
        { id: 'b', text: 'Thanks!', speaker: 'S2', duration: 0.4 },
      ],
    });
    const r = server.requests[0]!;
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.headers.authorization).toBe('Bearer sk-test');
    const body = r.body as { model: string; response_format: unknown; messages: { role: string; content: string }[] };
    expect(body.model).toBe('qwen');
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages[0]!.content).toContain('German (de-DE)');
    expect(body.messages[0]!.content).toContain('{"translations":[{"id":"<id>","text":"<translation>"}]}');
    const user = JSON.parse(body.messages[1]!.content) as { context: string; segments: { id: string; speaker: string; seconds: number; max_chars: number; text: string }[] };
    expect(user.context).toBe('a cooking show');
    expect(user.segments).toEqual([
      { id: 'a', speaker: 'S1', seconds: 2, max_chars: 28, text: 'Welcome to the show.' },
      { id: 'b', speaker: 'S2', seconds: 0.4, max_chars: 6, text: 'Thanks!' },
    ]);
  });

  it('openai-compatible writes to a length budget: a segment\'s maxChars replaces the budget from its duration (the other engines take none)', async () => {
    server.requests.length = 0;
    const t = createOpenAiCompatibleTranslator({ ...FAST, baseUrl: `${server.url}/v1/`, model: 'qwen' });
    expect(t.lengthBudget).toBe(true);
    await t.translate({ sourceLocale: 'en-US', targetLocale: 'de-DE', segments: [{ id: 'a', text: 'Welcome to the show, everyone.', duration: 2, maxChars: 11 }] });
    const user = JSON.parse((server.requests[0]!.body as { messages: { content: string }[] }).messages[1]!.content) as { segments: { max_chars: number }[] };
    expect(user.segments[0]!.max_chars).toBe(11);
    expect(createDeeplTranslator({ ...FAST, apiKey: 'k' }).lengthBudget).toBe(false);
    expect(createLibreTranslateTranslator({ ...FAST, baseUrl: server.url }).lengthBudget).toBe(false);
  });

  it('openai-compatible: accepts a fenced JSON reply', async () => {
    const { parseTranslations } = await import('./openai-prompt.js');
    expect(parseTranslations('x', '```json\n{"translations":[{"id":"a","text":"b"}]}\n```')).toEqual([{ id: 'a', text: 'b' }]);
  });

  it('deepl: auth header, language codes, Free/Pro base URL', async () => {
    server.requests.length = 0;
    const t = createDeeplTranslator({ ...FAST, apiKey: 'abc:fx', baseUrl: server.url });
    const out = await t.translate({ sourceLocale: 'en-US', targetLocale: 'pt-BR', segments: [{ id: 'x', text: 'Hi' }] });
    expect(out).toEqual([{ id: 'x', text: '[pt-br] Hi' }]);
    const r = server.requests[0]!;
    expect(r.path).toBe('/v2/translate');
    expect(r.headers.authorization).toBe('DeepL-Auth-Key abc:fx');
    expect(r.body).toMatchObject({ text: ['Hi'], source_lang: 'EN', target_lang: 'PT-BR' });
    expect(deeplTargetLang('en-US')).toBe('EN-US');
    expect(deeplTargetLang('es-MX')).toBe('ES');
    expect(deeplTargetLang('hi-IN')).toBeUndefined();
    expect(deeplBaseUrl('abc:fx')).toBe('https://api-free.deepl.com');
    expect(deeplBaseUrl('abc')).toBe('https://api.deepl.com');
    expect(await t.supports('en-US', 'ta-IN')).toMatchObject({ supported: false });
    expect(await createDeeplTranslator({}).supports('en-US', 'es-ES')).toMatchObject({ supported: false, reason: expect.stringContaining('DUB_TRANSLATE_DEEPL_API_KEY') });
  });

  it('libretranslate: q list, codes, format text, api_key; pairs from GET /languages', async () => {
    server.requests.length = 0;
    const t = createLibreTranslateTranslator({ ...FAST, baseUrl: server.url, apiKey: 'lt' });
    await t.translate({ sourceLocale: 'en-US', targetLocale: 'fr-FR', segments: [{ id: 'x', text: 'Hi' }, { id: 'y', text: 'Bye' }] });
    const r = server.requests.find((q) => q.path === '/translate')!;
    expect(r.body).toEqual({ q: ['Hi', 'Bye'], source: 'en', target: 'fr', format: 'text', api_key: 'lt' });
    expect(await t.supports('en-US', 'es-ES')).toEqual({ supported: true });
    expect(await t.supports('en-US', 'de-DE')).toMatchObject({ supported: false });
  });
});
