/**
 * The texts of a version: subtitles as SRT (source or target, four layout profiles) and the
 * editable script (GET with ETag, PUT with If-Match). API key or the version's studio link.
 */
import type { SrtLocality, SrtProfileName } from '@dub/core';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { SrtQuerySchema } from '../schemas.js';
import { errors, security, VersionParams, versionIdOf, type ServerContext } from './context.js';

export function registerScriptRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { service } = ctx;

  app.get(
    '/v1/versions/:version_id/srt',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'Subtitles as SRT (locality source|target, default target; srt_profile regular|mobile|global_regular|global_mobile, default regular).',
        tags: ['versions'],
        security,
        params: VersionParams,
        querystring: Type.Intersect([SrtQuerySchema, Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) })]),
        produces: ['application/x-subrip'],
        response: { 200: Type.String({ description: 'SRT document' }), ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const q = req.query as { locality?: SrtLocality; srt_profile?: SrtProfileName };
      const vid = versionIdOf(req);
      const text = await service.scripts.srt(req.access!, vid, q.locality ?? 'target', q.srt_profile ?? 'regular');
      return reply
        .type('application/x-subrip; charset=utf-8')
        .header('content-disposition', `attachment; filename="${vid}-${q.locality ?? 'target'}.srt"`)
        .send(text);
    },
  );

  app.get(
    '/v1/versions/:version_id/script',
    {
      config: { auth: 'key-or-studio' },
      schema: { summary: 'Read the editable script of a version (ETag for If-Match).', tags: ['studio'], security, params: VersionParams, response: errors(400, 401, 403, 404, 429, 500) },
    },
    async (req, reply) => {
      const s = await service.scripts.getScript(req.access!, versionIdOf(req));
      return reply.header('etag', s.etag).send(s.script);
    },
  );

  app.put(
    '/v1/versions/:version_id/script',
    {
      config: { auth: 'key-or-studio' },
      schema: { summary: 'Replace the script (only in ReadyToEdit). If-Match with the ETag of the read; a mismatch answers 412.', tags: ['studio'], security, params: VersionParams, response: errors(400, 401, 403, 404, 409, 412, 429, 500) },
    },
    async (req, reply) => {
      const ifMatch = req.headers['if-match'];
      const s = await service.scripts.putScript(req.access!, versionIdOf(req), req.body, typeof ifMatch === 'string' ? ifMatch : undefined, (id) => ctx.voices.has(id));
      return reply.header('etag', s.etag).send(s.script);
    },
  );
}
