/**
 * One line at a time for the studio (API key or the signed studio link of the version):
 *
 * - POST /v1/versions/{version_id}/segments/{segment_id}/redub: the segment re-synthesized with
 *   its current text (or `text`, not saved) and its speaker's voice, exactly as the next
 *   generation would make it, answered as a WAV; the line is stored in the cache generation
 *   reads, so that generation does not synthesize it again.
 * - POST /v1/versions/{version_id}/speakers/{speaker_id}/preview: a short line spoken with the
 *   voice a speaker gets under a voice choice (their own, a library voice, anonymized), as a WAV.
 *
 * The work runs in the API's line-synthesis thread (../line-synth.ts).
 */
import { blobKeys, NotFoundError, SpeakerVoiceSchema, ValidationError, type GenerateVersionJob, type SpeakerVoice, type VersionScript } from '@dub/core';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { LineSynth } from '../line-synth.js';
import type { ServerContext } from './context.js';
import type { Access } from '../service.js';
import { generateJobOf } from '../services/versions.js';

/** Longest text a re-dub or a preview speaks (@dub/pipeline's REDUB_MAX_TEXT). */
const MAX_TEXT = 2000;
/** A preview speaks at most this many characters of the speaker's first line. */
const PREVIEW_CHARS = 160;

const Err = { $ref: 'ErrorBody#' };
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, Err]));
const security = [{ api_key: [] as string[] }];
const studioQuery = Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) });
const wav = Type.String({ format: 'binary', description: 'audio/wav, 16-bit PCM mono' });

const RedubBodySchema = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT, description: "The line's text to speak (default: the saved script's). Not saved." })),
    speaker: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "The speaker whose voice speaks it (default: the segment's). Not saved." })),
    start: Type.Optional(Type.Number({ minimum: 0, description: "The segment's start in seconds (default: the saved one). Not saved." })),
    end: Type.Optional(Type.Number({ minimum: 0, description: "The segment's end in seconds, after start (default: the saved one). Not saved." })),
  },
  { additionalProperties: false },
);

const PreviewBodySchema = Type.Object(
  {
    voice: Type.Optional(Type.Union([SpeakerVoiceSchema, Type.Null()], { description: "The voice choice to hear (as in the script's speakers[].voice); null: none (the version's options); absent: the saved one." })),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT, description: "What to say (default: the start of the speaker's first line)." })),
  },
  { additionalProperties: false },
);

/** The generate-version job of the version as it stands (what POST generate would enqueue, less its generation number). */
async function jobOf(ctx: ServerContext, access: Access, versionId: string): Promise<{ job: GenerateVersionJob; script: VersionScript }> {
  const { script, version: v } = await ctx.service.scripts.getScript(access, versionId);
  const a = await ctx.service.assets.assetRow(v.asset_id);
  if (!a) throw new NotFoundError(`version ${versionId} not found`);
  const job = generateJobOf(a, v, { job_id: `job_line_${v.version_id}`, mode: 'no_lips', generation: Math.max(1, v.generation), script_key: v.script_key ?? blobKeys.script(v.version_id) });
  return { job, script };
}

const num = (x: number): string => x.toFixed(3);

export function registerSegmentRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const lines = new LineSynth(ctx.store, ctx.logger);
  app.addHook('onClose', async () => lines.close());

  app.post(
    '/v1/versions/:version_id/segments/:segment_id/redub',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary:
          "Re-dub one line: the segment re-synthesized with its current text (or `text`; `speaker`, `start` and `end` may be given too; none is saved) and its speaker's voice, exactly as the next generation would make it (same TTS engine, voice plan, placement and fitting), answered as a WAV of the line as placed. The line is kept in generation's cache, so the next generate of that text does not synthesize it again (its report shows it as not regenerated). Headers: X-Dub-Regenerated (true: synthesized now; false: already in the cache), X-Dub-Start/X-Dub-End (placed seconds), X-Dub-Speed-Factor, X-Dub-Resolution, X-Dub-Voice-Source, X-Dub-Tts-Engine, X-Dub-Others-Synthesized (other lines synthesized at speed 1 to place this one: 0 after a generation). Any status with a script. 400: empty or too long text, unknown speaker, end not after start, a segment with no time or past the end of the video; 404: unknown version or segment; 501: the API's blob store is not on a filesystem path. API key or the signed studio link of this version.",
        tags: ['studio'],
        security,
        params: Type.Object({ version_id: Type.String(), segment_id: Type.String({ maxLength: 200 }) }),
        querystring: studioQuery,
        body: RedubBodySchema,
        produces: ['audio/wav'],
        response: { 200: wav, ...errors(400, 401, 403, 404, 429, 500, 501) },
      },
    },
    async (req, reply) => {
      const p = req.params as { version_id: string; segment_id: string };
      const body = req.body as { text?: string; speaker?: string; start?: number; end?: number };
      if (body.text !== undefined && body.text.trim() === '') throw new ValidationError('text: the text to speak is empty', { field: 'text' });
      const { job, script } = await jobOf(ctx, req.access!, p.version_id);
      if (!script.segments.some((s) => s.id === p.segment_id)) throw new NotFoundError(`segment ${JSON.stringify(p.segment_id.slice(0, 80))} is not in the script of version ${p.version_id}`);
      const r = await lines.redub(job, { segmentId: p.segment_id, ...(body.text !== undefined ? { text: body.text } : {}), ...(body.speaker !== undefined ? { speaker: body.speaker } : {}), ...(body.start !== undefined ? { start: body.start } : {}), ...(body.end !== undefined ? { end: body.end } : {}) });
      return reply
        .type('audio/wav')
        .header('cache-control', 'no-store')
        .header('x-dub-regenerated', String(r.regenerated))
        .header('x-dub-start', num(r.start))
        .header('x-dub-end', num(r.end))
        .header('x-dub-duration', num(r.duration_seconds))
        .header('x-dub-speed-factor', r.speed_factor.toFixed(4))
        .header('x-dub-resolution', r.resolution)
        .header('x-dub-voice-source', r.voice_source)
        .header('x-dub-tts-engine', r.tts_engine)
        .header('x-dub-others-synthesized', String(r.others_synthesized))
        .header('x-dub-speaker', encodeURIComponent(r.speaker))
        .send(r.wav);
    },
  );

  // The library voices for the studio's voice picker (GET /v1/voices needs the API key; a studio link may read these).
  app.get(
    '/v1/versions/:version_id/voices',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary: "The library voices a speaker of this version can be given (as GET /v1/voices, with `speaks_locale`: whether the voice narrates the version's target locale). API key or the signed studio link of this version.",
        tags: ['studio'],
        security,
        params: Type.Object({ version_id: Type.String() }),
        querystring: studioQuery,
        response: {
          200: Type.Object({
            locale: Type.String(),
            voices: Type.Array(Type.Object({ voice_id: Type.String(), name: Type.String(), gender: Type.String(), description: Type.String(), languages: Type.Array(Type.String()), speaks_locale: Type.Boolean() })),
          }),
          ...errors(401, 403, 404, 429, 500),
        },
      },
    },
    async (req) => {
      const v = await ctx.service.versions.versionRow(req.access!, (req.params as { version_id: string }).version_id);
      return { locale: v.locale, voices: ctx.voices.voices.map((x) => ({ voice_id: x.id, name: x.name, gender: x.gender, description: x.description, languages: [...x.languages], speaks_locale: x.languages.includes(v.locale) })) };
    },
  );

  app.post(
    '/v1/versions/:version_id/speakers/:speaker_id/preview',
    {
      config: { auth: 'key-or-studio' },
      schema: {
        summary:
          "Hear a speaker's voice under a voice choice before saving it: `voice` as in the script's speakers[].voice (source speaker: their own voice, matched or converted; library: library_voice_id from GET /v1/voices; anonymized: moved away by anonymization, default 1), null for none, absent for the saved one. The voice is planned exactly as generation plans it (same TTS engine and voice plan) and speaks `text` (default: the start of the speaker's first line) at speed 1, answered as a WAV. Headers: X-Dub-Voice-Source (how the voice was made: matched, converted, timbre, library:<id>, default), X-Dub-Tts-Engine, X-Dub-Cached. 400: bad voice or text; 404: unknown version or speaker; 501: the API's blob store is not on a filesystem path. API key or the signed studio link of this version.",
        tags: ['studio'],
        security,
        params: Type.Object({ version_id: Type.String(), speaker_id: Type.String({ maxLength: 200 }) }),
        querystring: studioQuery,
        body: PreviewBodySchema,
        produces: ['audio/wav'],
        response: { 200: wav, ...errors(400, 401, 403, 404, 429, 500, 501) },
      },
    },
    async (req, reply) => {
      const p = req.params as { version_id: string; speaker_id: string };
      const body = req.body as { voice?: SpeakerVoice | null; text?: string };
      if (body.text !== undefined && body.text.trim() === '') throw new ValidationError('text: the text to speak is empty', { field: 'text' });
      if (body.voice?.source === 'library') {
        if (!body.voice.library_voice_id) throw new ValidationError('voice.library_voice_id: a library voice needs library_voice_id (GET /v1/voices lists them)', { field: 'voice.library_voice_id' });
        if (!ctx.voices.has(body.voice.library_voice_id)) throw new ValidationError(`voice.library_voice_id: unknown voice "${body.voice.library_voice_id.slice(0, 80)}" (GET /v1/voices lists them)`, { field: 'voice.library_voice_id' });
      }
      const { job, script } = await jobOf(ctx, req.access!, p.version_id);
      const said = script.segments.filter((s) => s.speaker === p.speaker_id);
      if (!script.speakers.some((s) => s.id === p.speaker_id) && said.length === 0) throw new NotFoundError(`speaker ${JSON.stringify(p.speaker_id.slice(0, 80))} is not in the script of version ${p.version_id}`);
      let text = body.text;
      if (text === undefined) {
        const first = said.find((s) => s.target_text.trim() !== '')?.target_text.trim();
        if (!first) throw new ValidationError(`text: speaker ${p.speaker_id} has no line to preview; give a text`, { field: 'text' });
        text = first.length <= PREVIEW_CHARS ? first : `${first.slice(0, first.lastIndexOf(' ', PREVIEW_CHARS) > 40 ? first.lastIndexOf(' ', PREVIEW_CHARS) : PREVIEW_CHARS)}`;
      }
      const r = await lines.preview(job, { speakerId: p.speaker_id, text, ...(body.voice !== undefined ? { voice: body.voice } : {}) });
      return reply
        .type('audio/wav')
        .header('cache-control', 'no-store')
        .header('x-dub-voice-source', r.voice_source)
        .header('x-dub-tts-engine', r.tts_engine)
        .header('x-dub-cached', String(r.cached))
        .header('x-dub-duration', num(r.duration_seconds))
        .send(r.wav);
    },
  );
}
