/**
 * `dub keys public [--data-dir DIR]`: print the PEM public key that verifies callback signatures
 * (the key pair is DUB_CALLBACK_KEY_FILE, or generated into the data dir on first use, as
 * `dub serve` does). `dub keys new-api-key`: print a random API key for DUB_API_KEYS.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '@dub/core';
import { loadOrCreateCallbackKey, publicKeyPem } from '@dub/api';

export const summary = 'print the callback public key (public) or a new API key (new-api-key)';

export async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { 'data-dir': { type: 'string' } } });
  const [action] = positionals;
  if (action === 'public') {
    const dataDir = path.resolve(values['data-dir'] ?? loadConfig().dataDir);
    const file = process.env.DUB_CALLBACK_KEY_FILE ? path.resolve(process.env.DUB_CALLBACK_KEY_FILE) : path.join(dataDir, 'callback-key.pem');
    process.stdout.write(publicKeyPem(loadOrCreateCallbackKey(file)));
    return 0;
  }
  if (action === 'new-api-key') {
    process.stdout.write(`${crypto.randomBytes(24).toString('base64url')}\n`);
    return 0;
  }
  process.stderr.write('usage: dub keys public [--data-dir DIR] | dub keys new-api-key\n');
  return 2;
}
