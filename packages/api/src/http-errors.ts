/**
 * Every error leaves the API as `{detail}`: DubError by its `status` (and `code`), fastify's
 * schema validation errors as 400 naming the field, fastify's own client errors (bad URL encoding,
 * over-long path parameter, body parsing) keep their 4xx status with a detail in the contract's
 * words; anything else is a 500 whose cause is logged with the request id. The request id is in
 * the `X-Request-Id` header of every response and, for a 500, in the body too.
 *
 * Errors of the HTTP layer below fastify answer `{detail}` as well: a malformed request line or
 * header (clientError), and an `Expect` other than 100-continue (417).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { isDubError, ValidationError, type DubError, type Logger } from '@dub/core';
import { ApiError, PayloadTooLargeError, UriTooLongError } from './errors.js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { fieldOfPointer, literalValues } from './validation.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** `req_` and 16 hex digits: the id of one request in the log and in its response. */
export function newRequestId(): string {
  return `req_${crypto.randomBytes(8).toString('hex')}`;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  schema?: unknown;
  parentSchema?: unknown;
}

/** One readable sentence from ajv errors: "languages[0].locale: is required". */
export function describeValidation(errors: readonly AjvError[], context: string | undefined): string {
  const e = errors.find((x) => x.keyword === 'anyOf') ?? errors[0]!;
  let field = fieldOfPointer(e.instancePath);
  let msg = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    const missing = String(e.params.missingProperty ?? '');
    field = field ? `${field}.${missing}` : missing;
    msg = 'is required';
  } else if (e.keyword === 'anyOf' || e.keyword === 'const') {
    const allowed = literalValues(e.parentSchema) ?? literalValues(e.schema && { anyOf: e.schema });
    msg = allowed ? `must be one of ${allowed.join(', ')}` : 'has an unsupported value';
  } else if (e.keyword === 'type') msg = `must be ${/^[aeiou]/.test(String(e.params.type)) ? 'an' : 'a'} ${e.params.type}`;
  const where = context === 'querystring' ? 'query parameter ' : '';
  return `${where}${field || context || 'body'}: ${msg}`;
}

/** At most `max` characters of client text in a detail or a log line. */
export function clip(s: string, max = 80): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The path of a request URL, without its query, clipped. */
function pathOf(req: FastifyRequest): string {
  return clip(req.url.split('?')[0]!);
}

/** The detail of one of fastify's own 4xx errors. */
function clientDetail(fe: FastifyError, req: FastifyRequest, bodyLimit: number): string {
  switch (fe.code) {
    case 'FST_ERR_BAD_URL':
      return `path: ${pathOf(req)} is not valid percent-encoding`;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return `path: a path parameter of ${pathOf(req)} is longer than the 100 characters any id has`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `unsupported content type ${clip(String(req.headers['content-type'] ?? '(none)'))}; send application/json`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'body: a JSON body is required';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return `body: invalid JSON (${fe.message})`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `body: larger than the limit of ${bodyLimit} bytes`;
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'body: its length does not match the Content-Length header';
    default:
      return fe instanceof SyntaxError ? `body: invalid JSON (${fe.message})` : fe.message;
  }
}

/**
 * The error class of what fastify refused before a route ran: schema validation and bad bodies
 * (400), an over-long path parameter (414), a body past the limit (413). A media type fastify has
 * no parser for is bad input like any other (400, not 415). Anything else: undefined (a 500).
 */
export function fromFastifyError(err: Error, req: FastifyRequest, bodyLimit: number): DubError | undefined {
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) return new ValidationError(describeValidation(fe.validation, fe.validationContext));
  const status = fe.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  const detail = clientDetail(fe, req, bodyLimit);
  if (status === 413) return new PayloadTooLargeError(detail);
  if (status === 414) return new UriTooLongError(detail);
  return new ValidationError(detail);
}

export interface ErrorReplyOptions {
  logger: Logger;
  bodyLimit: number;
}

/**
 * The error handler (setErrorHandler and frameworkErrors): the one place an error becomes an
 * answer. Its status is the error's (errors.ts decides it per condition); a 4xx answers
 * `{detail}`, anything else is logged with the request id, which the body carries.
 */
export function createErrorReply(o: ErrorReplyOptions) {
  return function errorReply(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.header(REQUEST_ID_HEADER, req.id);
    const e = isDubError(err) ? err : fromFastifyError(err, req, o.bodyLimit);
    if (e instanceof ApiError) reply.headers(e.headers);
    if (e && e.status < 500) return reply.status(e.status).send({ detail: e.message });
    const status = e?.status ?? 500;
    o.logger.error({ err, request_id: req.id, method: req.method, path: pathOf(req), status }, 'request failed');
    const detail = e && e.code !== 'internal_error' ? e.message : 'internal server error';
    return reply.status(status).send({ detail: `${detail} (request id ${req.id})`, request_id: req.id });
  };
}

/** Write a complete `{detail}` response on a raw socket (below fastify) and close it. */
function writeRaw(socket: Duplex, status: number, detail: string, id: string): void {
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * fastify's clientErrorHandler: a request Node's HTTP parser refused (malformed request line or
 * header, headers too large, too slow) gets `{detail}` instead of fastify's own body.
 */
export function createClientErrorHandler(logger: Logger) {
  return function clientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const id = newRequestId();
    logger.debug({ request_id: id, code: err.code, reason: err.message }, 'malformed HTTP request refused');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') writeRaw(socket, 408, 'the request did not arrive in time', id);
    else if (err.code === 'HPE_HEADER_OVERFLOW') writeRaw(socket, 431, 'the request headers are larger than the 16 KB allowed', id);
    else writeRaw(socket, 400, `malformed HTTP request (${clip(err.message)})`, id);
  } as (err: Error, socket: Duplex) => void;
}

/** `checkExpectation` of the HTTP server: only `Expect: 100-continue` is supported (417 otherwise). */
export function expectationFailed(req: http.IncomingMessage, res: http.ServerResponse): void {
  const id = newRequestId();
  const body = JSON.stringify({ detail: `Expect: ${clip(String(req.headers.expect ?? ''))} is not supported (only 100-continue)` });
  res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), [REQUEST_ID_HEADER]: id, connection: 'close' });
  res.end(body);
}
