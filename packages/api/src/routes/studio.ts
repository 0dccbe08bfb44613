/**
 * The studio routes: the page for a signed link (`/studio/{version_id}?expires&sig`, the
 * signature is the credential, scoped to that version) and for the plain studio_url
 * (`/v1/versions/{version_id}/studio`, the page asks for the API key), the page's static files,
 * and the context call the page opens with. Every other call the page makes is an ordinary API
 * route that accepts the link's signature for its own version (auth `key-or-studio`).
 */
import { isDubError } from '@dub/core';
import type { StudioAccess, StudioBoot, StudioContext } from '@dub/studio';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerContext } from './context.js';
import type { Access } from '../services/context.js';
import { StudioBuild, studioPage, studioPageHeaders } from '../studio-page.js';
import { WAVEFORM_FORMAT } from '../waveform.js';

const StudioContextSchema = Type.Object(
  {
    access: Type.Union([Type.Literal('link'), Type.Literal('key')], { description: 'link: a signed studio link; key: an API key.' }),
    link_expires_at: Type.Union([Type.String(), Type.Null()], { description: 'When the signed link expires (ISO 8601); null with an API key.' }),
    has_script: Type.Boolean({ description: 'The version has a script (it was prepared).' }),
    version: Type.Ref('Version'),
    asset: Type.Object({
      asset_id: Type.String(),
      name: Type.String(),
      locale: Type.String(),
      duration: Type.Union([Type.Number(), Type.Null()]),
      source_video_url: Type.Union([Type.String(), Type.Null()]),
      thumbnail_url: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  { $id: 'StudioContext' },
);

const WaveformSchema = Type.Object(
  {
    asset_id: Type.String(),
    rate: Type.Integer({ description: 'Windows per second (50).' }),
    duration: Type.Number({ description: 'Seconds of audio measured.' }),
    count: Type.Integer({ description: 'Number of windows: bytes in peak and in rms once decoded.' }),
    encoding: Type.Literal('u8-db', { description: 'One byte per window; dBFS = floor_db * (1 - byte / 255); byte 0 is floor_db or quieter.' }),
    floor_db: Type.Number({ description: 'The level of byte 0 (-90).' }),
    peak: Type.String({ description: 'Base64 of the peak level of each window.' }),
    rms: Type.String({ description: 'Base64 of the RMS level of each window.' }),
  },
  { $id: 'Waveform' },
);

export function registerStudioRoutes(app: FastifyInstance, ctx: ServerContext, baseUrlOf: (req: FastifyRequest) => string): void {
  const { service } = ctx;
  const build = new StudioBuild();

  /** What the page shows of one version: the version and the few asset fields it needs. */
  async function studioContext(access: Access, versionId: string, baseUrl: string, linkExpires: string | undefined): Promise<StudioContext> {
    const v = await service.versions.versionRow(access, versionId);
    const a = (await service.assets.assetRow(v.asset_id))!;
    const media = service.links.mediaLink(baseUrl);
    const expires = Number(linkExpires);
    return {
      access: 'org' in access ? 'key' : 'link',
      link_expires_at: 'org' in access || !Number.isFinite(expires) ? null : new Date(expires * 1000).toISOString(),
      has_script: v.script_key !== null,
      version: service.versions.toVersion(v, baseUrl),
      asset: {
        asset_id: a.asset_id,
        name: a.name,
        locale: a.locale,
        duration: a.duration,
        source_video_url: a.source_video_key ? media(a.asset_id, 'source') : null,
        thumbnail_url: a.thumbnail_key ? media(a.asset_id, 'thumbnail') : null,
      },
    };
  }

  /**
   * The shell. With access, the boot data carry the context and script (first render without a
   * round trip); without, the page asks for the API key (401); a refused link shows its reason.
   */
  async function sendPage(req: FastifyRequest, reply: FastifyReply, kind: StudioAccess, access: Access | undefined, refused?: { status: number; detail: string }): Promise<FastifyReply> {
    const versionId = (req.params as { version_id: string }).version_id;
    const baseUrl = baseUrlOf(req);
    const loaded = await build.load();
    const boot: StudioBoot = { v: 1, api_base: baseUrl, version_id: versionId, access: kind };
    let status = 200;
    let title = 'Studio';
    let message = 'Loading the studio\u2026';
    if (refused) boot.error = refused;
    else if (!access) {
      status = 401;
      message = 'This studio page needs the API key of the version\u2019s organization.';
      reply.header('www-authenticate', 'Bearer');
    } else {
      try {
        const q = req.query as Record<string, string | undefined>;
        boot.context = await studioContext(access, versionId, baseUrl, q.expires);
        boot.script = boot.context.has_script ? await service.scripts.getScript(access, versionId).then((s) => ({ script: s.script, etag: s.etag })) : null;
        title = `${boot.context.version.name} - ${boot.context.asset.name} - Studio`;
        message = `Loading ${boot.context.version.name} (${boot.context.version.status})\u2026`;
      } catch (e) {
        if (!isDubError(e) || e.status >= 500) throw e;
        boot.error = { status: e.status, detail: e.message };
      }
    }
    if (boot.error) {
      status = boot.error.status;
      message = boot.error.detail;
    }
    return reply.status(status).headers(studioPageHeaders(baseUrl)).send(studioPage(loaded, { baseUrl, title, message, boot }));
  }

  const keyAccess = (req: FastifyRequest): Access | undefined => {
    const p = ctx.keys.authenticate(req.headers.authorization);
    return p ? { org: p.org } : undefined;
  };

  // The signed link: the signature is checked here so that a refused link still gets a page.
  app.get('/studio/:version_id', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const q = req.query as Record<string, string | undefined>;
    if (q.sig === undefined) return sendPage(req, reply, 'key', keyAccess(req));
    try {
      return await sendPage(req, reply, 'link', service.links.checkStudioToken((req.params as { version_id: string }).version_id, q.expires, q.sig));
    } catch (e) {
      if (!isDubError(e) || e.status !== 403) throw e;
      return sendPage(req, reply, 'link', undefined, { status: 403, detail: `${e.message}. Ask the owner of the version for a new studio link.` });
    }
  });

  // The plain studio_url: a browser cannot send the key with a navigation, so the page answers
  // 401 with the shell, which asks for the key and sends it as a header on every call.
  app.get('/v1/versions/:version_id/studio', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => sendPage(req, reply, 'key', keyAccess(req)));

  app.get(
    '/v1/versions/:version_id/studio/context',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: 'What the studio page shows of one version: the version and its asset\'s name, locale, duration and signed source video (API key or the signed studio link of this version).',
        tags: ['studio'],
        security: [{ api_key: [] as string[] }],
        params: Type.Object({ version_id: Type.String() }),
        querystring: Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) }),
        response: { 200: StudioContextSchema, 401: { $ref: 'ErrorBody#' }, 403: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' }, 500: { $ref: 'ErrorBody#' } },
      },
    },
    async (req) => studioContext(req.access!, (req.params as { version_id: string }).version_id, baseUrlOf(req), (req.query as { expires?: string }).expires),
  );

  // The source audio's waveform for the timeline (one body per asset, computed on first request).
  app.get(
    '/v1/versions/:version_id/waveform',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary:
          "The waveform of the version's source audio for the studio's timeline: the peak and RMS level of every 20 ms (rate 50 per second), one byte each (dBFS = floor_db * (1 - byte/255)), base64. Computed with ffmpeg on the first request for the asset (which can take seconds for a long video), then stored and reused by every version of the asset. API key or the signed studio link of this version.",
        tags: ['studio'],
        security: [{ api_key: [] as string[] }],
        params: Type.Object({ version_id: Type.String() }),
        querystring: Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) }),
        response: { 200: WaveformSchema, 304: Type.Null({ description: 'Not modified (If-None-Match)' }), 400: { $ref: 'ErrorBody#' }, 401: { $ref: 'ErrorBody#' }, 403: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' }, 500: { $ref: 'ErrorBody#' } },
      },
    },
    async (req, reply) => {
      const w = await service.assets.waveform(req.access!, (req.params as { version_id: string }).version_id);
      // The source of an asset never changes, so neither does its waveform.
      const etag = `"${w.assetId}-waveform-v${WAVEFORM_FORMAT}"`;
      reply.header('etag', etag).header('cache-control', 'private, max-age=86400');
      if (req.headers['if-none-match'] === etag) return reply.status(304).send();
      return reply.type('application/json; charset=utf-8').send(w.body);
    },
  );

  // The page's CSS and modules, under the hash of the build: cached for a year, immutable.
  app.get('/studio-assets/:build/:file', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    const p = req.params as { build: string; file: string };
    const loaded = await build.load();
    const f = p.build === loaded.hash ? loaded.files.get(p.file) : undefined;
    if (!f) return reply.status(404).header('cache-control', 'no-store').send({ detail: `no studio file ${p.build}/${p.file}` });
    reply.header('etag', f.etag).header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=31536000, immutable');
    if (req.headers['if-none-match'] === f.etag) return reply.status(304).send();
    return reply.type(f.contentType).send(f.body);
  });
}
