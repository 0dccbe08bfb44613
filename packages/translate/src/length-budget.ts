/**
 * How long a dubbed line may be. A translation is spoken in the source segment's time, so each
 * segment gets a character budget from its duration and the target language's usual speaking
 * rate (characters per second of natural speech), never below a floor so short interjections
 * stay translatable. Without a duration the budget follows the source length.
 */
import { getLocale } from '@dub/core';

/** Typical characters per second of conversational speech. */
export function speakingRate(locale: string): number {
  const l = getLocale(locale);
  if (!l) return 14;
  if (l.script === 'Hans' || l.script === 'Hant') return 5;
  if (l.script === 'Jpan') return 8;
  if (l.script === 'Kore') return 7;
  if (l.script === 'Thai') return 11;
  return 14;
}

const FLOOR = 6;

export function charBudget(targetLocale: string, duration: number | undefined, sourceText: string): number {
  if (duration !== undefined && Number.isFinite(duration) && duration > 0) return Math.max(FLOOR, Math.round(duration * speakingRate(targetLocale)));
  return Math.max(FLOOR, Math.round(sourceText.length * 1.1));
}
