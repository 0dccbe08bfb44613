/**
 * Asset routes: list (cursor pages), create from a URL, create from an upload (upload.ts streams
 * the parts into the blob store), read one, add languages.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AddLanguagesBodySchema, CreateAssetBodySchema, ListAssetsQuerySchema, PatchAssetBodySchema } from '../schemas.js';
import { handleUpload } from '../upload.js';
import { checkPairs, parseAddLanguages, parseCreateAsset, parsePatchAsset, parseVersionGlossary, type CreateChecks } from '../validation.js';
import { listLimit } from '../validators.js';
import { baseUrlOf, errors, org, security, VersionParams, versionIdOf, type ServerContext } from './context.js';

const AssetParams = Type.Object({ asset_id: Type.String() });

export function registerAssetRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { service, options: o } = ctx;
  const checks: CreateChecks = { allowPrivateUrls: o.allowPrivateUrls, allowInsecureCallbacks: o.allowInsecureCallbacks, isLibraryVoice: (id) => ctx.voices.has(id), ...(ctx.pairs ? { pairs: ctx.pairs } : {}) };

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
      return service.assets.listAssets(org(req), listLimit(q.limit), q.cursor, baseUrlOf(req, o));
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
        response: { 201: { $ref: 'Asset#' }, ...errors(400, 401, 403, 413, 429, 500) },
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
    { schema: { summary: 'Read one asset with its languages and versions.', tags: ['assets'], security, params: AssetParams, response: { 200: { $ref: 'Asset#' }, ...errors(401, 404, 429, 500) } } },
    async (req, reply) => reply.type('application/json; charset=utf-8').send(await service.assets.getAssetJson(org(req), (req.params as { asset_id: string }).asset_id, baseUrlOf(req, o))),
  );

  app.patch(
    '/v1/assets/:asset_id',
    {
      schema: {
        summary: "Extension: replace the asset's glossary and/or a dubbing's (languages[].glossary); null clears. Applies to translations made from then on.",
        tags: ['assets'],
        security,
        params: AssetParams,
        body: PatchAssetBodySchema,
        response: { 200: { $ref: 'Asset#' }, ...errors(400, 401, 404, 429, 500) },
      },
    },
    async (req) => service.assets.patchAsset(org(req), (req.params as { asset_id: string }).asset_id, parsePatchAsset(req.body), baseUrlOf(req, o)),
  );

  // Extension: a version's glossaries (the studio's panel; a studio link edits its language's only).
  app.get(
    '/v1/versions/:version_id/glossary',
    { config: { auth: 'key-or-studio' }, schema: { summary: "The asset's glossary and the version's language's (extension).", tags: ['studio'], security, params: VersionParams, response: errors(401, 403, 404, 429, 500) } },
    async (req) => service.assets.versionGlossary(req.access!, versionIdOf(req)),
  );
  app.put(
    '/v1/versions/:version_id/glossary',
    {
      config: { auth: 'key-or-studio' },
      schema: { summary: "Replace the asset's glossary (API key only) and/or the version's language's: { asset?, language? }, null clears (extension).", tags: ['studio'], security, params: VersionParams, response: errors(400, 401, 403, 404, 429, 500) },
    },
    async (req) => service.assets.putVersionGlossary(req.access!, versionIdOf(req), parseVersionGlossary(req.body)),
  );

  app.post(
    '/v1/assets/:asset_id/languages',
    {
      schema: {
        summary: 'Add target languages (a new dubbing and version each).',
        tags: ['assets'],
        security,
        params: AssetParams,
        body: AddLanguagesBodySchema,
        response: { 202: { $ref: 'Asset#' }, ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const b = parseAddLanguages(req.body);
      const assetId = (req.params as { asset_id: string }).asset_id;
      // 400 before anything is added when the engines do not serve a pair (the source was checked at creation)
      const a = ctx.pairs ? await service.assets.assetRow(assetId) : undefined;
      if (a && a.org_id === org(req)) await checkPairs(ctx.pairs, { source: a.locale, sourceSrt: true, targets: b.languages.map((l) => ({ locale: l.locale, srt: l.srt !== undefined && l.srt.trim() !== '' })) });
      return reply.status(202).send(await service.assets.addLanguages(org(req), (req.params as { asset_id: string }).asset_id, b.languages, b.auto_generate, baseUrlOf(req, o)));
    },
  );
}
