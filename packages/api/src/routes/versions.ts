/**
 * Version routes: read, revise, generate, the quality report of the current result, and a further
 * version of a dubbing. Read, revise, generate and the report also accept the signed studio link
 * of the version (auth `key-or-studio`).
 */
import { Type } from '@sinclair/typebox';
import type { GenerateMode } from '@dub/core';
import type { FastifyInstance } from 'fastify';
import { LinkNotAllowedError } from '../errors.js';
import { GenerateBodySchema, NewVersionBodySchema, ReviseBodySchema, ReviseResponseSchema, type ReviseBody } from '../schemas.js';
import { baseUrlOf, errors, org, orgOf, security, VersionParams, versionIdOf, type ServerContext } from './context.js';

export function registerVersionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { service, options: o } = ctx;

  app.get(
    '/v1/versions/:version_id',
    { config: { auth: 'key-or-studio' }, schema: { summary: 'Read one version (result URLs are signed afresh on every call, valid 5 days).', tags: ['versions'], security, params: VersionParams, response: { 200: { $ref: 'Version#' }, ...errors(401, 404, 429, 500) } } },
    async (req) => service.versions.getVersion(req.access!, versionIdOf(req), baseUrlOf(req, o)),
  );

  app.patch(
    '/v1/versions/:version_id/revise',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'Return a version to editing (Completed/ReadyToEdit/Failed -> ReadyToEdit; a version that failed in preparation is prepared again).',
        tags: ['versions'],
        security,
        params: VersionParams,
        body: ReviseBodySchema,
        response: { 200: ReviseResponseSchema, ...errors(400, 401, 403, 404, 409, 429, 500) },
      },
    },
    async (req) => {
      const vid = versionIdOf(req);
      const studio = ((req.body ?? {}) as ReviseBody).studio_url_request;
      if (studio && !req.principal) throw new LinkNotAllowedError('studio_url_request: a studio link cannot create studio links; use the API key');
      return service.versions.revise(await orgOf(service, req, vid), vid, studio, baseUrlOf(req, o));
    },
  );

  app.post(
    '/v1/versions/:version_id/generate',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'Start generating a version (ReadyToEdit -> Generating). 403 when the balance cannot cover it (the version is then Failed with insufficient_balance).',
        tags: ['versions'],
        security,
        params: VersionParams,
        body: GenerateBodySchema,
        response: { 202: { $ref: 'Version#' }, ...errors(400, 401, 403, 404, 409, 429, 500) },
      },
    },
    async (req, reply) => {
      const vid = versionIdOf(req);
      return reply.status(202).send(await service.versions.generate(await orgOf(service, req, vid), vid, (req.body as { generate_mode: GenerateMode }).generate_mode, baseUrlOf(req, o)));
    },
  );

  app.get(
    '/v1/versions/:version_id/report',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'The quality report (dub.quality-report/1) of the current result: per line placement, speed, overflow, loudness, back-transcription WER, speaker similarity; loudness and durations of the outputs. 404 before the first generation.',
        tags: ['versions'],
        security,
        params: VersionParams,
        response: errors(401, 403, 404, 429, 500),
      },
    },
    async (req, reply) => reply.type('application/json; charset=utf-8').send(await service.versions.qualityReport(req.access!, versionIdOf(req))),
  );

  app.post(
    '/v1/dubbings/:dubbing_id/versions',
    {
      schema: {
        summary: 'Create a further version of a language as a copy of an existing version\'s script (ReadyToEdit at once).',
        tags: ['versions'],
        security,
        params: Type.Object({ dubbing_id: Type.String() }),
        body: NewVersionBodySchema,
        response: { 201: { $ref: 'Version#' }, ...errors(400, 401, 404, 429, 500) },
      },
    },
    async (req, reply) => reply.status(201).send(await service.versions.newVersion(org(req), (req.params as { dubbing_id: string }).dubbing_id, (req.body ?? {}) as { from_version_id?: string; name?: string }, baseUrlOf(req, o))),
  );
}
