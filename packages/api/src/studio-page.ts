/**
 * The studio page as the API serves it: the built files of @dub/studio (its dist/ folder), read
 * once per server, answered under a content-hashed path with long-lived caching, and the HTML
 * shell filled per request (boot data, asset base URL) with a strict Content-Security-Policy.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnavailableError } from './errors.js';
import { renderStudioShell, STUDIO_DIST_URL, STUDIO_SHELL_FILE, type ShellValues } from '@dub/studio';

/** The file types of the page that are served, by extension. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

export interface StudioAssetFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface LoadedStudio {
  /** Short hash over every served file: the versioned path segment of the assets. */
  hash: string;
  template: string;
  files: ReadonlyMap<string, StudioAssetFile>;
}

/** The built studio of one server (loaded on first use; a failed load is retried next time). */
export class StudioBuild {
  private loading: Promise<LoadedStudio> | undefined;

  constructor(private readonly dir: string = fileURLToPath(STUDIO_DIST_URL)) {}

  load(): Promise<LoadedStudio> {
    this.loading ??= this.read().catch((e: unknown) => {
      this.loading = undefined;
      throw e;
    });
    return this.loading;
  }

  private async read(): Promise<LoadedStudio> {
    let template: string;
    try {
      template = await fs.readFile(path.join(this.dir, STUDIO_SHELL_FILE), 'utf8');
    } catch (e) {
      throw new UnavailableError(`the studio page is not built (${path.join(this.dir, STUDIO_SHELL_FILE)} is missing): run \`npm run build\``, e);
    }
    const names = (await fs.readdir(this.dir)).filter((n) => CONTENT_TYPES[path.extname(n)] !== undefined).sort();
    const all = crypto.createHash('sha256');
    const files = new Map<string, StudioAssetFile>();
    for (const n of names) {
      const body = await fs.readFile(path.join(this.dir, n));
      const digest = crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16);
      all.update(`${n}\n${digest}\n`);
      files.set(n, { body, contentType: CONTENT_TYPES[path.extname(n)]!, etag: `"${digest}"` });
    }
    return { hash: all.digest('hex').slice(0, 12), template, files };
  }
}

/** Headers of every studio HTML response: no caching (signed links), no referrer, CSP. */
export function studioPageHeaders(baseUrl: string): Record<string, string> {
  const origin = new URL(baseUrl).origin;
  const self = `'self' ${origin}`;
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${self}`,
      `style-src ${self}`,
      `img-src ${self} data: blob:`,
      `media-src ${self} blob:`,
      `connect-src ${self}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}

/** The filled shell. */
export function studioPage(build: LoadedStudio, v: Omit<ShellValues, 'assetBase'> & { baseUrl: string }): string {
  return renderStudioShell(build.template, { title: v.title, boot: v.boot, message: v.message, assetBase: `${v.baseUrl}/studio-assets/${build.hash}/` });
}
