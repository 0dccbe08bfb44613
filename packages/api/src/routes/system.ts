/**
 * Public routes of the service itself: health (database reachable), Prometheus metrics, the
 * OpenAPI description and its HTML page, and the public key that verifies callback signatures.
 */
import type { FastifyInstance } from 'fastify';
import { docsPage } from '../docs-page.js';
import type { ServerContext } from './context.js';

export function registerSystemRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get('/healthz', { config: { auth: 'public' }, schema: { hide: true } }, async () => {
    await ctx.db.query('SELECT 1');
    return { status: 'ok', database: ctx.db.kind };
  });
  app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (_req, reply) => {
    const gauges = ctx.gauges ? await ctx.gauges() : [];
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(ctx.metrics.render(gauges));
  });
  app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
  app.get('/docs', { config: { auth: 'public' }, schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(docsPage(app.swagger() as never)));
  app.get(
    '/v1/callbacks/public-key',
    { config: { auth: 'public' }, schema: { summary: 'PEM public key (EC P-256) that verifies the X-Signature of callbacks.', tags: ['callbacks'], produces: ['application/x-pem-file'] } },
    async (_req, reply) => reply.type('application/x-pem-file').send(ctx.publicKeyPem),
  );
}
