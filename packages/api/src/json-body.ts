/**
 * JSON from clients (request bodies and the upload's `request` part) is checked before anything
 * else reads it: nesting deeper than MAX_JSON_DEPTH is refused by a linear scan of the text
 * (schema checks, serializers and the database driver recurse, and ~5,000 levels overflowed the
 * stack), and a string or key holding U+0000 is refused naming where (PostgreSQL cannot store it).
 * Both are 400 with a detail.
 */
import { ValidationError } from '@dub/core';
import type { FastifyInstance } from 'fastify';

/** The deepest nesting of arrays and objects accepted (a version script needs 4). */
export const MAX_JSON_DEPTH = 64;

/** Throws when `text` nests arrays/objects deeper than `max`. One pass, strings skipped. */
export function checkJsonDepth(text: string, what: string, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) throw new ValidationError(`${what}: JSON nested deeper than ${max} levels`, { field: what });
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
}

/** "languages[0].locale" from a path of keys and indexes (`what` for the value itself). */
function where(path: readonly (string | number)[], what: string): string {
  let s = '';
  for (const p of path) s = typeof p === 'number' ? `${s}[${p}]` : `${s}${s ? '.' : ''}${p.length > 40 ? `${p.slice(0, 40)}…` : p}`;
  return s || what;
}

/** Throws when a string or key of a parsed JSON value holds U+0000. Depth is bounded by checkJsonDepth. */
export function checkNoNul(value: unknown, what: string): void {
  const path: (string | number)[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.includes('\0')) throw new ValidationError(`${where(path, what)}: must not contain the NUL character (U+0000)`, { field: where(path, what) });
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        visit(v[i]);
        path.pop();
      }
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\0')) throw new ValidationError(`${where(path, what)}: a key must not contain the NUL character (U+0000)`, { field: where(path, what) });
        path.push(k);
        visit(x);
        path.pop();
      }
    }
  };
  visit(value);
}

/** Parse client JSON text with the checks above; `what` names it in errors ("request", "body"). */
export function parseJsonText(text: string, what: string): unknown {
  checkJsonDepth(text, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ValidationError(`${what}: must be JSON (${(e as Error).message})`, { field: what });
  }
  checkNoNul(value, what);
  return value;
}

/**
 * Replace fastify's application/json parser with one that adds the depth and NUL checks in front
 * of fastify's own (which keeps refusing `__proto__` and `constructor.prototype` keys).
 */
export function registerJsonParser(app: FastifyInstance): void {
  const fastifyParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    try {
      checkJsonDepth(body as string, 'body');
    } catch (e) {
      return done(e as Error, undefined);
    }
    fastifyParser(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      try {
        checkNoNul(value, 'body');
      } catch (e) {
        return done(e as Error, undefined);
      }
      done(null, value);
    });
  });
}
