/**
 * The real recordings the tests read (listed in scripts/fetch-test-media.sh with their sources and
 * sha256). They are not part of the repository: they live in DUB_TEST_MEDIA, by default
 * `../shared/media` beside the clone. A test that needs one that is absent is reported as skipped,
 * with the reason and the command that fetches them, never failed and never silently dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MEDIA_DIR = process.env.DUB_TEST_MEDIA ? path.resolve(process.env.DUB_TEST_MEDIA) : path.resolve(REPO_ROOT, '../shared/media');
export const FETCH_MEDIA_COMMAND = 'bash scripts/fetch-test-media.sh';

/** Path of a recording in the media folder (whether or not it is there). */
export function media(name: string): string {
  return path.join(MEDIA_DIR, name);
}

/** The named recordings that are not in the media folder. */
export function missingMedia(...names: string[]): string[] {
  return names.filter((n) => !fs.existsSync(media(n)));
}

export function hasMedia(...names: string[]): boolean {
  return missingMedia(...names).length === 0;
}

/** Why a test that needs these recordings is skipped, or undefined when they are all present. */
export function mediaSkipReason(...names: string[]): string | undefined {
  const missing = missingMedia(...names);
  if (missing.length === 0) return undefined;
  return `skipped: needs the real recording${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, absent from ${MEDIA_DIR} (get them with \`${FETCH_MEDIA_COMMAND}\`, or set DUB_TEST_MEDIA)`;
}

/**
 * `describe(title, body)` when every named recording is present; otherwise one skipped test whose
 * name is the title and the reason, so the run lists it. Hooks inside the body never run then.
 */
export function describeWithMedia(names: string[], title: string, body: () => void): void {
  const reason = mediaSkipReason(...names);
  if (!reason) describe(title, body);
  else describe(title, () => it.skip(reason, () => undefined));
}

/** `it(title, fn, timeout)` when every named recording is present; otherwise skipped with the reason in its name. */
export function itWithMedia(names: string[], title: string, fn: () => unknown, timeout?: number): void {
  const reason = mediaSkipReason(...names);
  if (!reason) it(title, fn, timeout);
  else it.skip(`${title} (${reason})`, () => undefined);
}
