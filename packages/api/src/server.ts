/**
 * The fastify application: authentication and rate limiting hooks, the error mapping to
 * `{detail}`, OpenAPI, and thin routes over DubService.
 */
import swagger from '@fastify/swagger';
import multipart from '@fastify/multipart';
import { AssetSchema, ValidationError, VersionSchema, type BlobStore, type Logger, type GenerateMode, type SrtLocality, type SrtProfileName } from '@dub/core';
import { Type } from '@sinclair/typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { KeyRing, Principal, RateLimiter } from './auth.js';
import { sendBlob } from './blob-response.js';
import type { Db } from './db/db.js';
import { docsPage } from './docs-page.js';
import { LinkNotAllowedError, RateLimitedError, UnauthorizedError } from './errors.js';
import { clip, createClientErrorHandler, createErrorReply, expectationFailed, newRequestId, REQUEST_ID_HEADER } from './http-errors.js';
import { registerJsonParser } from './json-body.js';
import type { Metrics } from './metrics.js';
import type { ResolvedApiOptions } from './options.js';
import { checkPathIds, hostProblem, requestBaseUrl } from './request-checks.js';
import {
  AddLanguagesBodySchema,
  ApiErrorBodySchema,
  CreateAssetBodySchema,
  GenerateBodySchema,
  ListAssetsQuerySchema,
  NewVersionBodySchema,
  ReviseBodySchema,
  ReviseResponseSchema,
  SrtQuerySchema,
  StudioUrlRequestSchema,
  StudioUrlResponseSchema,
  VoiceSchema,
  type ReviseBody,
  type StudioUrlRequest,
} from './schemas.js';
import type { Access, DubService } from './service.js';
import { registerStudioRoutes } from './routes/studio.js';
import { registerSegmentRoutes } from './routes/segments.js';
import { handleUpload } from './upload.js';
import { parseAddLanguages, parseCreateAsset, type CreateChecks } from './validation.js';
import type { VoiceCatalog } from './voices.js';

export interface ServerContext {
  service: DubService;
  store: BlobStore;
  db: Db;
  keys: KeyRing;
  limiter: RateLimiter;
  metrics: Metrics;
  voices: VoiceCatalog;
  options: ResolvedApiOptions;
  publicKeyPem: string;
  /** Where the cause of every 500 goes, with its request id. */
  logger: Logger;
  /** Extra gauges for /metrics (outbox, queue). */
  gauges?: () => Promise<{ name: string; help: string; labels?: Record<string, string>; value: number }[]>;
}

type AuthMode = 'key' | 'public' | 'key-or-studio';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    access?: Access;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

const Err = { $ref: 'ErrorBody#' };
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, Err]));
const security = [{ api_key: [] as string[] }];

export function baseUrlOf(req: FastifyRequest, opts: ResolvedApiOptions): string {
  return requestBaseUrl(req, opts.publicUrl);
}

function org(req: FastifyRequest): string {
  return req.principal!.org;
}

/** The organization a request acts for: its API key's, or the owner of the signed studio link's version. */
async function orgOf(service: DubService, req: FastifyRequest, versionId: string): Promise<string> {
  const a = req.access!;
  return 'org' in a ? a.org : (await service.versions.versionRow(a, versionId)).org_id;
}

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

  const checks: CreateChecks = { allowPrivateUrls: o.allowPrivateUrls, allowInsecureCallbacks: o.allowInsecureCallbacks, isLibraryVoice: (id) => ctx.voices.has(id) };

  // ------------------------------------------------------------ public
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

  // ------------------------------------------------------------ assets
  app.get(
    '/v1/assets/',
    {
      schema: {
        summary: 'Paginated list of the caller\'s assets, newest first (cursor based).',
        tags: ['assets'],
        security,
        querystring: ListAssetsQuerySchema,
        response: { 200: Type.Object({ items: Type.Array(Type.Ref('Asset')), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...errors(400, 401, 429, 500) },
      },
    },
    async (req) => {
      const q = req.query as { limit?: string; cursor?: string };
      const limit = q.limit === undefined ? 20 : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ValidationError('query parameter limit: must be an integer from 1 to 100', { field: 'limit' });
      return service.assets.listAssets(org(req), limit, q.cursor, baseUrlOf(req, o));
    },
  );

  app.post(
    '/v1/assets/',
    { schema: { summary: 'Create an asset from a media URL.', tags: ['assets'], security, body: CreateAssetBodySchema, response: { 201: { $ref: 'Asset#' }, ...errors(400, 401, 403, 429, 500) } } },
    async (req, reply) => {
      const input = await parseCreateAsset(req.body, checks);
      return reply.status(201).send(await service.assets.createAsset(org(req), input, baseUrlOf(req, o)));
    },
  );

  app.post(
    '/v1/assets/upload',
    {
      schema: {
        summary: 'Create an asset from an uploaded file (multipart/form-data: request (JSON), video (<= 5 GB), background (<= 500 MB)).',
        tags: ['assets'],
        security,
        consumes: ['multipart/form-data'],
        response: { 201: { $ref: 'Asset#' }, ...errors(400, 401, 403, 429, 500) },
      },
    },
    async (req, reply) => {
      try {
        return reply.status(201).send(await handleUpload(req, { service, store: ctx.store, checks, org: org(req), baseUrl: baseUrlOf(req, o), maxMediaBytes: service.assets.limitsFor(org(req)).max_media_bytes }));
      } catch (e) {
        // Refused before the whole body arrived (size limit, bad request part): discard the rest
        // unparsed and close the connection after the answer.
        if (!req.raw.complete) {
          req.raw.unpipe();
          req.raw.resume();
          reply.header('connection', 'close');
        }
        throw e;
      }
    },
  );

  app.get(
    '/v1/assets/:asset_id',
    { schema: { summary: 'Read one asset with its languages and versions.', tags: ['assets'], security, params: Type.Object({ asset_id: Type.String() }), response: { 200: { $ref: 'Asset#' }, ...errors(401, 404, 429, 500) } } },
    async (req, reply) => reply.type('application/json; charset=utf-8').send(await service.assets.getAssetJson(org(req), (req.params as { asset_id: string }).asset_id, baseUrlOf(req, o))),
  );

  app.post(
    '/v1/assets/:asset_id/languages',
    {
      schema: {
        summary: 'Add target languages (a new dubbing and version each).',
        tags: ['assets'],
        security,
        params: Type.Object({ asset_id: Type.String() }),
        body: AddLanguagesBodySchema,
        response: { 202: { $ref: 'Asset#' }, ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const b = parseAddLanguages(req.body);
      return reply.status(202).send(await service.assets.addLanguages(org(req), (req.params as { asset_id: string }).asset_id, b.languages, b.auto_generate, baseUrlOf(req, o)));
    },
  );

  app.get('/v1/media/:asset_id/:kind', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const p = req.params as { asset_id: string; kind: string };
    if (p.kind !== 'source' && p.kind !== 'thumbnail') return reply.status(404).send({ detail: 'not found' });
    const q = req.query as Record<string, string>;
    const m = await service.links.resolveAssetMedia(p.asset_id, p.kind, q.expires, q.sig);
    return sendBlob(req, reply, ctx.store, m.key, m.contentType, m.filename);
  });

  // ------------------------------------------------------------ versions
  const vParams = Type.Object({ version_id: Type.String() });
  app.get(
    '/v1/versions/:version_id',
    { config: { auth: 'key-or-studio' }, schema: { summary: 'Read one version (result URLs are signed afresh on every call, valid 5 days).', tags: ['versions'], security, params: vParams, response: { 200: { $ref: 'Version#' }, ...errors(401, 404, 429, 500) } } },
    async (req) => service.versions.getVersion(req.access!, (req.params as { version_id: string }).version_id, baseUrlOf(req, o)),
  );

  app.patch(
    '/v1/versions/:version_id/revise',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'Return a version to editing (Completed/ReadyToEdit/Failed -> ReadyToEdit; a version that failed in preparation is prepared again).',
        tags: ['versions'],
        security,
        params: vParams,
        body: ReviseBodySchema,
        response: { 200: ReviseResponseSchema, ...errors(400, 401, 404, 429, 500) },
      },
    },
    async (req) => {
      const vid = (req.params as { version_id: string }).version_id;
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
        params: vParams,
        body: GenerateBodySchema,
        response: { 202: { $ref: 'Version#' }, ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const vid = (req.params as { version_id: string }).version_id;
      return reply.status(202).send(await service.versions.generate(await orgOf(service, req, vid), vid, (req.body as { generate_mode: GenerateMode }).generate_mode, baseUrlOf(req, o)));
    },
  );

  app.post(
    '/v1/versions/:version_id/studio_url',
    {
      schema: {
        summary: 'Create a studio link for this one version (signed by default, 180 minutes).',
        tags: ['versions'],
        security,
        params: vParams,
        body: StudioUrlRequestSchema,
        response: { 200: StudioUrlResponseSchema, ...errors(400, 401, 404, 429, 500) },
      },
    },
    async (req) => ({ studio_url: await service.links.studioUrl(org(req), (req.params as { version_id: string }).version_id, (req.body ?? {}) as StudioUrlRequest, baseUrlOf(req, o)) }),
  );

  app.get(
    '/v1/versions/:version_id/srt',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'Subtitles as SRT (locality source|target, default target; srt_profile regular|mobile|global_regular|global_mobile, default regular).',
        tags: ['versions'],
        security,
        params: vParams,
        querystring: Type.Intersect([SrtQuerySchema, Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) })]),
        produces: ['application/x-subrip'],
        response: { 200: Type.String({ description: 'SRT document' }), ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const q = req.query as { locality?: SrtLocality; srt_profile?: SrtProfileName };
      const vid = (req.params as { version_id: string }).version_id;
      const text = await service.scripts.srt(req.access!, vid, q.locality ?? 'target', q.srt_profile ?? 'regular');
      return reply
        .type('application/x-subrip; charset=utf-8')
        .header('content-disposition', `attachment; filename="${vid}-${q.locality ?? 'target'}.srt"`)
        .send(text);
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
        params: vParams,
        response: errors(401, 403, 404, 429, 500),
      },
    },
    async (req, reply) => reply.type('application/json; charset=utf-8').send(await service.versions.qualityReport(req.access!, (req.params as { version_id: string }).version_id)),
  );

  app.get(
    '/v1/versions/:version_id/script',
    {
      config: { auth: 'key-or-studio' },
      schema: { summary: 'Read the editable script of a version (ETag for If-Match).', tags: ['studio'], security, params: vParams, response: errors(400, 401, 403, 404, 429, 500) },
    },
    async (req, reply) => {
      const s = await service.scripts.getScript(req.access!, (req.params as { version_id: string }).version_id);
      return reply.header('etag', s.etag).send(s.script);
    },
  );

  app.put(
    '/v1/versions/:version_id/script',
    {
      config: { auth: 'key-or-studio' },
      schema: { summary: 'Replace the script (only in ReadyToEdit). If-Match with the ETag of the read; a mismatch answers 412.', tags: ['studio'], security, params: vParams, response: errors(400, 401, 403, 404, 412, 429, 500) },
    },
    async (req, reply) => {
      const ifMatch = req.headers['if-match'];
      const s = await service.scripts.putScript(req.access!, (req.params as { version_id: string }).version_id, req.body, typeof ifMatch === 'string' ? ifMatch : undefined, (id) => ctx.voices.has(id));
      return reply.header('etag', s.etag).send(s.script);
    },
  );

  registerStudioRoutes(app, ctx, (req) => baseUrlOf(req, o));
  registerSegmentRoutes(app, ctx);

  app.get('/v1/downloads/:version_id/:generation/:kind', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const p = req.params as { version_id: string; generation: string; kind: string };
    if ((p.kind !== 'video' && p.kind !== 'audio') || !/^\d+$/.test(p.generation)) return reply.status(404).send({ detail: 'not found' });
    const q = req.query as Record<string, string>;
    const d = await service.links.resolveDownload(p.version_id, Number(p.generation), p.kind, q.expires, q.sig);
    return sendBlob(req, reply, ctx.store, d.key, d.contentType, d.filename);
  });

  // ------------------------------------------------------------ dubbings and voices
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

  app.get(
    '/v1/voices',
    { schema: { summary: 'Library voices (usable as voice_library_id); each narrates every target language.', tags: ['voices'], security, response: { 200: Type.Object({ voices: Type.Array(VoiceSchema) }), ...errors(401, 429, 500) } } },
    async (req) => {
      const base = baseUrlOf(req, o);
      return {
        voices: ctx.voices.voices.map((v) => ({ voice_id: v.id, name: v.name, gender: v.gender, description: v.description, languages: v.languages, preview_url: `${base}/v1/voices/${v.id}/preview` })),
      };
    },
  );
  app.get(
    '/v1/voices/:voice_id/preview',
    { schema: { summary: 'A WAV preview of a library voice (rendered on first request, then cached). Query locale (default en-US).', tags: ['voices'], security, params: Type.Object({ voice_id: Type.String() }), querystring: Type.Object({ locale: Type.Optional(Type.String()) }) } },
    async (req, reply) => {
      const key = await ctx.voices.preview(ctx.store, (req.params as { voice_id: string }).voice_id, (req.query as { locale?: string }).locale ?? 'en-US');
      return sendBlob(req, reply, ctx.store, key, 'audio/wav');
    },
  );

  return app;
}
