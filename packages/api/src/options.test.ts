import { describe, expect, it } from 'vitest';
import { apiOptionsFromEnv, parseApiKeys, resolveApiOptions } from './options.js';

describe('options from the environment', () => {
  it('parses keys, balances, limits and e-mails', () => {
    const o = apiOptionsFromEnv(
      {
        DUB_API_KEYS: 'key1:org1, key2:org2',
        DUB_ORG_BALANCES: 'org2=0,org3=120.5',
        DUB_RATE_LIMIT_PER_MIN: '60',
        DUB_ALLOW_PRIVATE_URLS: '1',
        DUB_MAX_VIDEO_SECONDS: '600',
        DUB_MAX_MEDIA_BYTES: '1000000',
        DUB_ORG_MAX_VIDEO_SECONDS: 'org1=30',
        DUB_ORG_EMAILS: 'org1=ops@example.com',
        DUB_SMTP_URL: 'smtp://127.0.0.1:2525',
        DUB_CALLBACK_MAX_ATTEMPTS: '3',
      },
      '/tmp/x',
    );
    expect(o.keys).toEqual([
      { key: 'key1', org: 'org1' },
      { key: 'key2', org: 'org2' },
    ]);
    expect(o.orgBalances).toEqual({ org2: 0, org3: 120.5 });
    expect(o.orgLimits).toEqual({ org1: { maxVideoSeconds: 30 } });
    const r = resolveApiOptions(o);
    expect(r).toMatchObject({ rateLimitPerMin: 60, allowPrivateUrls: true, allowInsecureCallbacks: true, maxVideoSeconds: 600, maxMediaBytes: 1_000_000, callbackMaxAttempts: 3, callbackTimeoutMs: 10_000, resultUrlTtlSeconds: 432_000 });
    expect(r.orgEmails).toEqual({ org1: 'ops@example.com' });
    expect(r.callbackKeyFile).toBe('/tmp/x/callback-key.pem');
  });
  it('refuses malformed values naming the variable', () => {
    expect(() => parseApiKeys('justakey')).toThrow(/DUB_API_KEYS: "justakey"/);
    expect(() => apiOptionsFromEnv({ DUB_RATE_LIMIT_PER_MIN: 'lots' }, '.')).toThrow(/DUB_RATE_LIMIT_PER_MIN/);
    expect(() => apiOptionsFromEnv({ DUB_ORG_BALANCES: 'org1=many' }, '.')).toThrow(/DUB_ORG_BALANCES/);
  });
  it('caps the callback timeout at 10 s', () => {
    expect(resolveApiOptions({ dataDir: '.', callbackTimeoutMs: 60_000 }).callbackTimeoutMs).toBe(10_000);
  });
});
