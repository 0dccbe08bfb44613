/**
 * A real HTTP server on 127.0.0.1 speaking the wire formats of the HTTP engines (OpenAI chat
 * completions, DeepL v2, LibreTranslate), for tests. It "translates" by prefixing each text with
 * the target language code (`[es] hello`), records every request, and can be told to misbehave
 * on the next requests: an HTTP status (with Retry-After), a delay longer than the client's
 * timeout, or a malformed reply of a given kind.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { status: number; retryAfter?: string; body?: string }
  | { delayMs: number }
  | { malformed: 'not-json' | 'missing-id' | 'extra-id' | 'duplicate-id' | 'wrong-count' | 'no-translations' | 'number-text' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface FakeTranslationServer {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: RecordedRequest[];
  /** Faults applied to the next requests, one per request, in order. */
  faults: Fault[];
  /** Language list served on GET /languages (LibreTranslate). */
  languages: { code: string; targets: string[] }[];
  close(): Promise<void>;
}

export function fakeTranslate(text: string, target: string): string {
  return `[${target.toLowerCase()}] ${text}`;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

interface Item {
  id: string;
  text: string;
}

function applyMalformed(kind: string, items: Item[]): unknown[] | string {
  switch (kind) {
    case 'not-json':
      return 'Sure! Here are your translations:';
    case 'missing-id':
      return items.slice(1);
    case 'extra-id':
      return [...items, { id: 'not-a-segment', text: 'x' }];
    case 'duplicate-id':
      return [...items, items[0]!];
    case 'wrong-count':
      return items.slice(0, -1);
    case 'number-text':
      return items.map((it, i) => (i === 0 ? { id: it.id, text: 42 } : it));
    default:
      return items;
  }
}

/** The OpenAI chat completions endpoint: reads the segments back from the user message (JSON). */
function openAiReply(body: { messages?: { role: string; content: string }[] }, malformed?: string): unknown {
  const user = body.messages?.find((m) => m.role === 'user');
  const payload = JSON.parse(user?.content ?? '{}') as { target_language?: string; segments?: { id: string; text: string }[] };
  const tgt = /\(([a-z]{2,3})-/.exec(payload.target_language ?? '')?.[1] ?? 'xx';
  const items = (payload.segments ?? []).map((s) => ({ id: s.id, text: fakeTranslate(s.text, tgt) }));
  let content: string;
  if (malformed === 'not-json') content = 'Sure! Here are your translations:';
  else if (malformed === 'no-translations') content = JSON.stringify({ result: items });
  else content = JSON.stringify({ translations: malformed ? applyMalformed(malformed, items) : items });
  return { id: 'chatcmpl-fake', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] };
}

export async function startFakeTranslationServer(): Promise<FakeTranslationServer> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const state = { languages: [{ code: 'en', targets: ['es', 'fr'] }, { code: 'es', targets: ['en'] }] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      if (req.method === 'GET' && path === '/languages') return send(res, 200, state.languages);
      const fault = faults.shift();
      const respond = () => {
        if (fault && 'status' in fault) return send(res, fault.status, fault.body ?? { error: `fault ${fault.status}` }, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
        const malformed = fault && 'malformed' in fault ? fault.malformed : undefined;
        const b = (body ?? {}) as Record<string, unknown>;
        if (path.endsWith('/chat/completions')) return send(res, 200, openAiReply(b as never, malformed));
        if (path === '/v2/translate') {
          if (!String(req.headers.authorization ?? '').startsWith('DeepL-Auth-Key ')) return send(res, 403, { message: 'Wrong endpoint or key' });
          if (malformed === 'not-json') return send(res, 200, '<html>oops</html>');
          if (malformed === 'no-translations') return send(res, 200, { message: 'ok' });
          const texts = (b.text as string[]) ?? [];
          const items = texts.map((t, i) => ({ id: String(i), text: fakeTranslate(t, String(b.target_lang)) }));
          const out = malformed ? (applyMalformed(malformed, items) as Item[]) : items;
          return send(res, 200, { translations: out.map((t) => ({ detected_source_language: String(b.source_lang ?? 'EN'), text: t.text })) });
        }
        if (path === '/translate') {
          if (malformed === 'not-json') return send(res, 200, 'not json at all');
          if (malformed === 'no-translations') return send(res, 200, { translatedText: 'one string for a list' });
          const q = Array.isArray(b.q) ? (b.q as string[]) : [String(b.q)];
          const items = q.map((t, i) => ({ id: String(i), text: fakeTranslate(t, String(b.target)) }));
          const out = malformed ? (applyMalformed(malformed, items) as Item[]) : items;
          return send(res, 200, { translatedText: out.map((t) => t.text) });
        }
        send(res, 404, { error: 'not found' });
      };
      if (fault && 'delayMs' in fault) setTimeout(respond, fault.delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    get languages() {
      return state.languages;
    },
    set languages(v) {
      state.languages = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
