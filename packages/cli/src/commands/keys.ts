/**
 * `dub keys public [--data-dir DIR]`: print the PEM public key that verifies callback signatures
 * (the key pair is DUB_CALLBACK_KEY_FILE, or generated into the data dir on first use, as
 * `dub serve` does). `dub keys new-api-key`: print a random API key for DUB_API_KEYS.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { parseCommand, UsageError } from '../cli-args.js';
import { loadConfig } from '@dub/core';
import { loadOrCreateCallbackKey, publicKeyPem } from '@dub/api';

export const summary = 'print the callback public key (public) or a new API key (new-api-key)';

const KEYS_USAGE = `usage: dub keys public [--data-dir DIR] | dub keys new-api-key

  public        print the PEM public key that verifies callback signatures (created in the data dir on first use)
  new-api-key   print a new random API key (add it to DUB_API_KEYS as KEY:ORG)
`;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommand('keys', KEYS_USAGE, argv, { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, { positionals: true });
  if (!args) return 0;
  const { positionals, values } = args;
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
  throw new UsageError(action ? `unknown action "${action}": public or new-api-key (see dub keys --help)` : 'an action is needed: public or new-api-key (see dub keys --help)');
}
