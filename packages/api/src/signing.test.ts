import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateCallbackKey, loadOrCreateUrlSecret, publicKeyPem } from './keys.js';
import { signCallbackBody, UrlSigner, verifyCallbackBody } from './signing.js';

describe('UrlSigner', () => {
  const s = new UrlSigner(Buffer.from('secret'));
  const c = { purpose: 'result-video' as const, versionId: 'ver_a', generation: 2, expires: 2_000 };
  it('verifies its own signatures and rejects any changed claim', () => {
    const sig = s.sign(c);
    expect(s.verify(c, sig, 1_000)).toEqual({ ok: true });
    expect(s.verify({ ...c, generation: 3 }, sig, 1_000).ok).toBe(false);
    expect(s.verify({ ...c, versionId: 'ver_b' }, sig, 1_000).ok).toBe(false);
    expect(s.verify({ ...c, purpose: 'result-audio' }, sig, 1_000).ok).toBe(false);
    expect(s.verify({ ...c, expires: 2_001 }, sig, 1_000)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(s.verify(c, sig, 2_001)).toEqual({ ok: false, reason: 'expired' });
    expect(new UrlSigner(Buffer.from('other')).verify(c, sig, 1_000).ok).toBe(false);
  });
});

describe('callback keys', () => {
  it('generates a P-256 key once, keeps it, and signs DER ES256 verifiable by Node', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-keys-'));
    const file = path.join(dir, 'k.pem');
    const k1 = loadOrCreateCallbackKey(file);
    const k2 = loadOrCreateCallbackKey(file);
    expect(publicKeyPem(k1)).toBe(publicKeyPem(k2));
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    const body = '{"event":"version_ready"}';
    const sig = signCallbackBody(body, k1);
    expect(verifyCallbackBody(body, sig, publicKeyPem(k1))).toBe(true);
    expect(verifyCallbackBody(body + ' ', sig, publicKeyPem(k1))).toBe(false);
    // DER: SEQUENCE tag 0x30; the raw r||s form (ieee-p1363) verifies after conversion
    expect(sig.slice(0, 2)).toBe('30');
    const raw = crypto.sign('sha256', Buffer.from(body), { key: k1, dsaEncoding: 'ieee-p1363' });
    expect(raw.length).toBe(64);
    expect(crypto.verify('sha256', Buffer.from(body), { key: publicKeyPem(k1), dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    expect(loadOrCreateUrlSecret(dir, undefined).equals(loadOrCreateUrlSecret(dir, undefined))).toBe(true);
    fs.rmSync(dir, { recursive: true });
  });
  it('refuses a key that is not EC P-256', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-keys-'));
    const file = path.join(dir, 'rsa.pem');
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
    fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => loadOrCreateCallbackKey(file)).toThrow(/EC P-256/);
    fs.rmSync(dir, { recursive: true });
  });
});
