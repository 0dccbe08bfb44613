/**
 * The fastify application: authentication and rate limiting hooks, the error mapping to
 * `{detail}` (http-errors.ts, errors.ts), OpenAPI, and the route modules of routes/, one per
 * resource, each thin over its service (services/).
 */
import swagger from '@fastify/swagger';
import multipart from '@fastify/multipart';
import { AssetSchema, VersionSchema } from '@dub/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { RateLimitedError, UnauthorizedError } from './errors.js';
import { clip, createClientErrorHandler, createErrorReply, expectationFailed, newRequestId, REQUEST_ID_HEADER } from './http-errors.js';
import { registerJsonParser } from './json-body.js';
import { checkPathIds, hostProblem } from './request-checks.js';
import { ApiErrorBodySchema } from './schemas.js';
import { registerAssetRoutes } from './routes/assets.js';
import { baseUrlOf, type AuthMode, type ServerContext } from './routes/context.js';
import { registerLinkRoutes } from './routes/links.js';
import { registerScriptRoutes } from './routes/scripts.js';
import { registerSegmentRoutes } from './routes/segments.js';
import { registerStudioRoutes } from './routes/studio.js';
import { registerSystemRoutes } from './routes/system.js';
import { registerVersionRoutes } from './routes/versions.js';
import { registerVoiceRoutes } from './routes/voices.js';

export { baseUrlOf, type ServerContext } from './routes/context.js';

export async function buildServer(ctx: ServerContext): Promise<FastifyInstance> {
  const { service, options: o } = ctx;
  const bodyLimit = 32 * 1024 * 1024;
  const errorReply = createErrorReply({ logger: ctx.logger, bodyLimit });
  const app = Fastify({
    logger: false,
    bodyLimit,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true } },
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: newRequestId,
    requestIdHeader: false,
    // Errors of the router (bad percent-encoding, an over-long path parameter) answer {detail}.
    frameworkErrors: (err, req, reply) => errorReply(err, req, reply),
    clientErrorHandler: createClientErrorHandler(ctx.logger),
    // A missing Host is answered by the onRequest hook with {detail}, not by Node with an empty 400.
    http: { requireHostHeader: false },
  });
  // An Expect other than 100-continue: 417 with {detail} (Node's own answer has no body).
  app.server.on('checkExpectation', expectationFailed);
  app.addSchema(ApiErrorBodySchema);
  app.addSchema(AssetSchema);
  app.addSchema(VersionSchema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'dub API', version: '1.0.0', description: 'Self-hostable AI video dubbing: assets, dubbings, versions, SRT, studio links and signed callbacks.' },
      components: { securitySchemes: { api_key: { type: 'http', scheme: 'bearer' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (json.$id as string) ?? `def-${i}` },
  });
  await app.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 4, fields: 8, fieldSize: 32 * 1024 * 1024, parts: 16 } });

  registerJsonParser(app);

  app.setErrorHandler((err, req, reply) => errorReply(err as Error, req, reply));
  app.setNotFoundHandler((req, reply) => reply.status(404).send({ detail: `no route ${req.method} ${clip(req.url.split('?')[0]!)}` }));

  app.addHook('onRequest', (req, reply, done) => {
    (req as unknown as { t0: bigint }).t0 = process.hrtime.bigint();
    reply.header(REQUEST_ID_HEADER, req.id);
    const badHost = hostProblem(req);
    if (badHost) {
      reply.status(400).header('connection', 'close').send({ detail: badHost });
      return;
    }
    const mode: AuthMode = req.routeOptions.config?.auth ?? 'key';
    if (mode === 'public' || !req.routeOptions.url) return done();
    if (mode === 'key-or-studio') {
      const q = req.query as Record<string, string | undefined>;
      const vid = (req.params as Record<string, string>).version_id;
      if (q.sig !== undefined && vid) {
        try {
          req.access = service.links.checkStudioToken(vid, q.expires, q.sig);
        } catch (e) {
          return done(e as Error);
        }
        return done();
      }
    }
    const p = ctx.keys.authenticate(req.headers.authorization);
    if (!p) return done(new UnauthorizedError());
    const retry = ctx.limiter.hit(p.keyId);
    if (retry !== undefined) return done(new RateLimitedError(o.rateLimitPerMin, retry));
    req.principal = p;
    req.access = { org: p.org };
    done();
  });
  // An absent body is an empty object: optional bodies (revise, studio_url, new version) need none.
  // Ids in the path that cannot exist are 404 before any route reads them (after authentication).
  app.addHook('preValidation', (req, _reply, done) => {
    try {
      checkPathIds(req.params);
    } catch (e) {
      return done(e as Error);
    }
    if ((req.body === undefined || req.body === null) && req.method !== 'GET' && req.method !== 'HEAD') req.body = {};
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    ctx.metrics.inc('dub_http_requests_total', 'HTTP requests by route and status.', { method: req.method, route, status: String(reply.statusCode) });
    const t0 = (req as unknown as { t0?: bigint }).t0;
    if (t0) ctx.metrics.observe('dub_http_request_duration_seconds', 'HTTP request duration.', { method: req.method, route }, Number(process.hrtime.bigint() - t0) / 1e9);
    done();
  });

  registerSystemRoutes(app, ctx);
  registerAssetRoutes(app, ctx);
  registerVersionRoutes(app, ctx);
  registerLinkRoutes(app, ctx);
  registerScriptRoutes(app, ctx);
  registerStudioRoutes(app, ctx, (req) => baseUrlOf(req, o));
  registerSegmentRoutes(app, ctx);
  registerVoiceRoutes(app, ctx);

  return app;
}
