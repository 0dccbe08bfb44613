/** Library voices: the list (usable as voice_library_id) and a WAV preview of each. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sendBlob } from '../blob-response.js';
import { VoiceSchema } from '../schemas.js';
import { baseUrlOf, errors, security, type ServerContext } from './context.js';

export function registerVoiceRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get(
    '/v1/voices',
    { schema: { summary: 'Library voices (usable as voice_library_id); each narrates every target language.', tags: ['voices'], security, response: { 200: Type.Object({ voices: Type.Array(VoiceSchema) }), ...errors(401, 429, 500) } } },
    async (req) => {
      const base = baseUrlOf(req, ctx.options);
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
}
