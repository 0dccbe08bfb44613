/**
 * Small validators of query parameters and options the routes and services share (the create,
 * upload and add-languages bodies have theirs in validation.ts). Each throws a ValidationError
 * (400) naming the field.
 */
import { ValidationError } from '@dub/core';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_STUDIO_MINUTES = 180;
export const MAX_STUDIO_MINUTES = 43_200;

/** `?limit=` of a list: an integer from 1 to 100, default 20. */
export function listLimit(raw: string | undefined): number {
  const limit = raw === undefined ? DEFAULT_LIST_LIMIT : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new ValidationError(`query parameter limit: must be an integer from 1 to ${MAX_LIST_LIMIT}`, { field: 'limit' });
  return limit;
}

/** The `next_cursor` of a page that ends at the row with sequence number `seq`. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s:${seq}`).toString('base64url');
}

/** The sequence number a `cursor` continues before; only a `next_cursor` of an earlier page is one. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const n = Number(text.slice(2));
  // A safe integer: a larger one would overflow the query's bigint (a 500, not a 400).
  if (!/^s:\d{1,16}$/.test(text) || !Number.isSafeInteger(n)) throw new ValidationError('cursor: invalid cursor (use next_cursor of the previous page)', { field: 'cursor' });
  return n;
}

/** `expiration_minutes` of a studio link: an integer from 1 to 43200 (30 days), default 180. */
export function studioMinutes(minutes: number | undefined, field = 'expiration_minutes'): number {
  const m = minutes ?? DEFAULT_STUDIO_MINUTES;
  if (!Number.isInteger(m) || m < 1 || m > MAX_STUDIO_MINUTES) throw new ValidationError(`${field}: must be an integer from 1 to ${MAX_STUDIO_MINUTES}`, { field });
  return m;
}
