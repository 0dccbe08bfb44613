/**
 * Signatures: HMAC-SHA256 tokens for signed URLs (results, studio links) and ES256 signatures of
 * callback bodies (DER-encoded ECDSA, hex in X-Signature).
 */
import crypto from 'node:crypto';

export type SignedPurpose = 'result-video' | 'result-audio' | 'studio' | 'source-video' | 'thumbnail';

export interface SignedClaims {
  purpose: SignedPurpose;
  /** Version id (results, studio) or asset id (source video, thumbnail). */
  versionId: string;
  /** Generation for result URLs; 0 for studio links. */
  generation: number;
  /** Unix seconds. */
  expires: number;
}

export type TokenCheck = { ok: true } | { ok: false; reason: 'expired' | 'bad_signature' };

export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(c: SignedClaims): string {
    return crypto.createHmac('sha256', this.secret).update(`${c.purpose}\n${c.versionId}\n${c.generation}\n${c.expires}`).digest('base64url');
  }

  verify(c: SignedClaims, sig: string, nowSeconds = Math.floor(Date.now() / 1000)): TokenCheck {
    const want = Buffer.from(this.sign(c));
    const got = Buffer.from(String(sig));
    if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return { ok: false, reason: 'bad_signature' };
    if (!Number.isFinite(c.expires) || c.expires < nowSeconds) return { ok: false, reason: 'expired' };
    return { ok: true };
  }
}

/** ES256 over the raw body, DER-encoded, lowercase hex. */
export function signCallbackBody(body: string | Buffer, key: crypto.KeyObject): string {
  return crypto.sign('sha256', typeof body === 'string' ? Buffer.from(body) : body, key).toString('hex');
}

export function verifyCallbackBody(body: string | Buffer, signatureHex: string, publicKey: crypto.KeyObject | string): boolean {
  return crypto.verify('sha256', typeof body === 'string' ? Buffer.from(body) : body, publicKey, Buffer.from(signatureHex, 'hex'));
}
