/**
 * Secrets kept in the data directory so a restart keeps them: the EC P-256 callback signing key
 * (PEM, PKCS#8) and the HMAC secret of signed URLs. Created on first start with mode 0600.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

function writeNew(file: string, data: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, data, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** Load the callback signing key, generating it when the file does not exist. */
export function loadOrCreateCallbackKey(file: string): crypto.KeyObject {
  if (!fs.existsSync(file)) {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeNew(file, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  }
  const key = crypto.createPrivateKey(fs.readFileSync(file));
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`${file} must hold an EC P-256 private key (ES256)`);
  }
  return key;
}

export function publicKeyPem(privateKey: crypto.KeyObject): string {
  return crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

/** The URL-signing secret: the given one, or one generated into <dataDir>/url-secret. */
export function loadOrCreateUrlSecret(dataDir: string, given: string | undefined): Buffer {
  if (given) return Buffer.from(given, 'utf8');
  const file = path.join(dataDir, 'url-secret');
  if (!fs.existsSync(file)) writeNew(file, crypto.randomBytes(32).toString('hex'));
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
}
