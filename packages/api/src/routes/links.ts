/**
 * Signed links: create a studio link of a version (POST studio_url, API key only), and the public
 * routes a signed link opens: result downloads (with HTTP ranges) and an asset's source video and
 * thumbnail. The signature is the credential of the public ones (services/links.ts checks it).
 */
import type { FastifyInstance } from 'fastify';
import { sendBlob } from '../blob-response.js';
import { NotFoundError } from '../errors.js';
import { StudioUrlRequestSchema, StudioUrlResponseSchema, type StudioUrlRequest } from '../schemas.js';
import { baseUrlOf, errors, org, security, VersionParams, versionIdOf, type ServerContext } from './context.js';

export function registerLinkRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { service, options: o } = ctx;

  app.post(
    '/v1/versions/:version_id/studio_url',
    {
      schema: {
        summary: 'Create a studio link for this one version (signed by default, 180 minutes).',
        tags: ['versions'],
        security,
        params: VersionParams,
        body: StudioUrlRequestSchema,
        response: { 200: StudioUrlResponseSchema, ...errors(400, 401, 404, 429, 500) },
      },
    },
    async (req) => ({ studio_url: await service.links.studioUrl(org(req), versionIdOf(req), (req.body ?? {}) as StudioUrlRequest, baseUrlOf(req, o)) }),
  );

  app.get('/v1/downloads/:version_id/:generation/:kind', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const p = req.params as { version_id: string; generation: string; kind: string };
    if ((p.kind !== 'video' && p.kind !== 'audio') || !/^\d+$/.test(p.generation)) throw new NotFoundError('not found');
    const q = req.query as Record<string, string>;
    const d = await service.links.resolveDownload(p.version_id, Number(p.generation), p.kind, q.expires, q.sig);
    return sendBlob(req, reply, ctx.store, d.key, d.contentType, d.filename);
  });

  app.get('/v1/media/:asset_id/:kind', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const p = req.params as { asset_id: string; kind: string };
    if (p.kind !== 'source' && p.kind !== 'thumbnail') throw new NotFoundError('not found');
    const q = req.query as Record<string, string>;
    const m = await service.links.resolveAssetMedia(p.asset_id, p.kind, q.expires, q.sig);
    return sendBlob(req, reply, ctx.store, m.key, m.contentType, m.filename);
  });
}
