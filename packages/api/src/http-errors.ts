/**
 * Every error leaves the API as `{detail}`: DubError by its `status` (and `code`), fastify's
 * schema validation errors as 400 naming the field, other client errors of fastify keep their
 * status, anything else is a 500 with a generic detail (the cause is logged).
 */
import { isDubError } from '@dub/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { fieldOfPointer, literalValues } from './validation.js';

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

export function errorReply(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (isDubError(err)) {
    if (err.status >= 500) req.log.error({ err }, 'request failed');
    return reply.status(err.status).send({ detail: err.status >= 500 && err.code === 'internal_error' ? 'internal server error' : err.message });
  }
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) return reply.status(400).send({ detail: describeValidation(fe.validation, fe.validationContext) });
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const detail =
      fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? `unsupported content type ${req.headers['content-type'] ?? '(none)'}; send application/json`
        : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'body: a JSON body is required'
          : fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err instanceof SyntaxError)
            ? `body: invalid JSON (${err.message})`
            : err.message;
    return reply.status(status === 415 ? 400 : status).send({ detail });
  }
  req.log.error({ err }, 'request failed');
  return reply.status(500).send({ detail: 'internal server error' });
}
