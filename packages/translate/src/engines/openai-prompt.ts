/**
 * The chat prompt of the openai-compatible engine and the check of its reply. The model gets the
 * segments as JSON with id, speaker, speaking time and a character budget each, and must answer
 * with exactly `{"translations":[{"id":"...","text":"..."}]}`: one entry per id, no merging or
 * splitting of segments, so segment boundaries and speaker turns survive translation.
 */
import { getLocale } from '@dub/core';
import type { TranslateBatch } from '../base-translator.js';
import { malformedReply } from '../http.js';
import { charBudget } from '../length-budget.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

function languageName(locale: string): string {
  const l = getLocale(locale);
  return l ? `${l.name} (${locale})` : locale;
}

export function buildMessages(batch: TranslateBatch): ChatMessage[] {
  const src = languageName(batch.sourceLocale);
  const tgt = languageName(batch.targetLocale);
  const system = [
    `You translate the script of a video for dubbing from ${src} to ${tgt}.`,
    'Each input segment is one spoken line with an id, the speaker who says it, its speaking time in seconds and a character budget.',
    'Rules:',
    '- Translate every segment separately: exactly one translation per id, never merge, split, drop or reorder segments.',
    '- Keep each speaker\'s voice and register; the speaker labels tell you who talks to whom. Do not add speaker names to the text.',
    '- The translation is spoken in the same time as the original: keep it natural and close to the character budget (max_chars), shorter rather than longer.',
    '- Output only text to be spoken: no notes, no quotes around lines, no stage directions.',
    ...(batch.glossary?.length
      ? ['- Glossary: where a segment contains a term of "glossary", write exactly its "translation"; a term with "keep": true stays exactly as written (a name or brand). Match terms as whole words.']
      : []),
    '- Reply with a JSON object and nothing else: {"translations":[{"id":"<id>","text":"<translation>"}]}.',
  ].join('\n');
  const payload = {
    source_language: src,
    target_language: tgt,
    ...(batch.context ? { context: batch.context } : {}),
    ...(batch.glossary?.length ? { glossary: batch.glossary.map((e) => (e.keep ? { term: e.term, keep: true } : { term: e.term, translation: e.translation })) } : {}),
    ...(batch.preceding.length ? { preceding_lines: batch.preceding.map((s) => ({ speaker: s.speaker ?? 'unknown', text: s.text })) } : {}),
    segments: batch.segments.map((s) => ({
      id: s.id,
      speaker: s.speaker ?? 'unknown',
      ...(s.duration !== undefined ? { seconds: Number(s.duration.toFixed(2)) } : {}),
      max_chars: s.maxChars ?? charBudget(batch.targetLocale, s.duration, s.text),
      text: s.text,
    })),
  };
  return [
    { role: 'system', content: system },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

/** The `translations` list of a chat reply's content (a JSON object, possibly in a ``` fence). */
export function parseTranslations(engine: string, content: unknown): unknown[] {
  if (typeof content !== 'string' || content.trim() === '') throw malformedReply(engine, 'empty message content');
  let text = content.trim();
  const fence = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fence) text = fence[1]!;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw malformedReply(engine, `message content is not JSON: ${text.slice(0, 200)}`, e);
  }
  const list = (parsed as { translations?: unknown })?.translations;
  if (!Array.isArray(list)) throw malformedReply(engine, 'message content has no "translations" list');
  return list;
}
