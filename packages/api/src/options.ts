/**
 * API options: partial public options (from flags, the environment or a test) resolved once into
 * a complete internal form. Every environment variable is documented in the package README.
 */
import path from 'node:path';
import { ValidationError } from '@dub/core';

export interface ApiKey {
  key: string;
  org: string;
}

export interface OrgLimits {
  maxVideoSeconds?: number;
  maxMediaBytes?: number;
}

export interface ApiOptions {
  /** Data directory: database (PGlite), blobs, callback key, URL secret. */
  dataDir: string;
  /** API keys and their organizations. */
  keys?: ApiKey[];
  /** Remaining generation balance in minutes per organization; an org not listed is unlimited. */
  orgBalances?: Record<string, number>;
  /** Requests per key per minute; 0 or undefined disables the limit. */
  rateLimitPerMin?: number;
  /** Allow loopback/private URLs for media and callbacks (development and tests). */
  allowPrivateUrls?: boolean;
  /** Allow http:// callback URLs (development and tests); on by default with allowPrivateUrls. */
  allowInsecureCallbacks?: boolean;
  /** Account limits (all organizations) and per-organization overrides. */
  maxVideoSeconds?: number;
  maxMediaBytes?: number;
  orgLimits?: Record<string, OrgLimits>;
  /** E-mail notifications. */
  smtpUrl?: string;
  smtpFrom?: string;
  orgEmails?: Record<string, string>;
  /** PEM file of the EC P-256 callback signing key; default <dataDir>/callback-key.pem (generated). */
  callbackKeyFile?: string;
  /** HMAC secret for signed URLs; default generated into <dataDir>/url-secret. */
  urlSecret?: string;
  /** Base URL put in links (result_url, studio_url); default from each request's Host header. */
  publicUrl?: string;
  /** Callback delivery: attempts before giving up, first backoff, per-request timeout. */
  callbackMaxAttempts?: number;
  callbackBackoffMs?: number;
  callbackTimeoutMs?: number;
  /** How often the outbox dispatcher polls for due deliveries (it is also woken on each new one). */
  outboxPollMs?: number;
  /** How long a worker event whose asset or version is not visible yet is delivered again before it is dropped. Default 30 s. */
  eventRetryMs?: number;
  /** Lifetime of signed result URLs (default 5 days). */
  resultUrlTtlSeconds?: number;
}

export interface ResolvedApiOptions {
  dataDir: string;
  keys: ApiKey[];
  orgBalances: Record<string, number>;
  rateLimitPerMin: number;
  allowPrivateUrls: boolean;
  allowInsecureCallbacks: boolean;
  maxVideoSeconds: number | undefined;
  maxMediaBytes: number | undefined;
  orgLimits: Record<string, OrgLimits>;
  smtpUrl: string | undefined;
  smtpFrom: string;
  orgEmails: Record<string, string>;
  callbackKeyFile: string;
  urlSecret: string | undefined;
  publicUrl: string | undefined;
  callbackMaxAttempts: number;
  callbackBackoffMs: number;
  callbackTimeoutMs: number;
  outboxPollMs: number;
  eventRetryMs: number;
  resultUrlTtlSeconds: number;
}

export function resolveApiOptions(o: ApiOptions): ResolvedApiOptions {
  const dataDir = path.resolve(o.dataDir);
  const allowPrivate = o.allowPrivateUrls ?? false;
  return {
    dataDir,
    keys: o.keys ?? [],
    orgBalances: o.orgBalances ?? {},
    rateLimitPerMin: o.rateLimitPerMin ?? 0,
    allowPrivateUrls: allowPrivate,
    allowInsecureCallbacks: o.allowInsecureCallbacks ?? allowPrivate,
    maxVideoSeconds: o.maxVideoSeconds,
    maxMediaBytes: o.maxMediaBytes,
    orgLimits: o.orgLimits ?? {},
    smtpUrl: o.smtpUrl,
    smtpFrom: o.smtpFrom ?? 'dub@localhost',
    orgEmails: o.orgEmails ?? {},
    callbackKeyFile: o.callbackKeyFile ? path.resolve(o.callbackKeyFile) : path.join(dataDir, 'callback-key.pem'),
    urlSecret: o.urlSecret,
    publicUrl: o.publicUrl?.replace(/\/+$/, ''),
    callbackMaxAttempts: o.callbackMaxAttempts ?? 10,
    callbackBackoffMs: o.callbackBackoffMs ?? 3_500,
    callbackTimeoutMs: Math.min(o.callbackTimeoutMs ?? 10_000, 10_000),
    outboxPollMs: o.outboxPollMs ?? 1_000,
    eventRetryMs: o.eventRetryMs ?? 30_000,
    resultUrlTtlSeconds: o.resultUrlTtlSeconds ?? 5 * 24 * 3600,
  };
}

type Env = Record<string, string | undefined>;

function num(env: Env, name: string, opts: { integer?: boolean; min?: number } = {}): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min)) {
    throw new ValidationError(`${name} must be a${opts.integer ? 'n integer' : ' number'}${opts.min !== undefined ? ` >= ${opts.min}` : ''}, got "${raw}"`, { field: name });
  }
  return n;
}

/** "a=1,b=2" -> { a: "1", b: "2" } */
function pairs(env: Env, name: string, sep = '='): Record<string, string> {
  const raw = env[name];
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const item of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const i = item.lastIndexOf(sep);
    if (i <= 0 || i === item.length - 1) throw new ValidationError(`${name}: "${item}" is not of the form name${sep}value`, { field: name });
    out[item.slice(0, i).trim()] = item.slice(i + 1).trim();
  }
  return out;
}

function numberPairs(env: Env, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(pairs(env, name))) {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new ValidationError(`${name}: "${k}=${v}" is not a number`, { field: name });
    out[k] = n;
  }
  return out;
}

/** Parse `DUB_API_KEYS="key1:org1,key2:org2"`. */
export function parseApiKeys(raw: string | undefined): ApiKey[] {
  const env = { DUB_API_KEYS: raw };
  return Object.entries(pairs(env, 'DUB_API_KEYS', ':')).map(([key, org]) => ({ key, org }));
}

/** Options from the environment (the flags of `dub serve` override dataDir and publicUrl). */
export function apiOptionsFromEnv(env: Env, dataDir: string): ApiOptions {
  const orgLimits: Record<string, OrgLimits> = {};
  for (const [org, v] of Object.entries(numberPairs(env, 'DUB_ORG_MAX_VIDEO_SECONDS'))) orgLimits[org] = { ...orgLimits[org], maxVideoSeconds: v };
  for (const [org, v] of Object.entries(numberPairs(env, 'DUB_ORG_MAX_MEDIA_BYTES'))) orgLimits[org] = { ...orgLimits[org], maxMediaBytes: v };
  const flag = (name: string) => env[name] === '1' || env[name] === 'true';
  const o: ApiOptions = {
    dataDir,
    keys: parseApiKeys(env.DUB_API_KEYS),
    orgBalances: numberPairs(env, 'DUB_ORG_BALANCES'),
    rateLimitPerMin: num(env, 'DUB_RATE_LIMIT_PER_MIN', { integer: true, min: 0 }) ?? 0,
    allowPrivateUrls: flag('DUB_ALLOW_PRIVATE_URLS'),
    orgLimits,
    orgEmails: pairs(env, 'DUB_ORG_EMAILS'),
  };
  const set = <K extends keyof ApiOptions>(k: K, v: ApiOptions[K] | undefined) => {
    if (v !== undefined) o[k] = v;
  };
  set('maxVideoSeconds', num(env, 'DUB_MAX_VIDEO_SECONDS', { min: 0 }));
  set('maxMediaBytes', num(env, 'DUB_MAX_MEDIA_BYTES', { integer: true, min: 0 }));
  set('smtpUrl', env.DUB_SMTP_URL || undefined);
  set('smtpFrom', env.DUB_SMTP_FROM || undefined);
  set('callbackKeyFile', env.DUB_CALLBACK_KEY_FILE || undefined);
  set('urlSecret', env.DUB_URL_SECRET || undefined);
  set('publicUrl', env.DUB_PUBLIC_URL || undefined);
  set('callbackMaxAttempts', num(env, 'DUB_CALLBACK_MAX_ATTEMPTS', { integer: true, min: 1 }));
  set('callbackBackoffMs', num(env, 'DUB_CALLBACK_BACKOFF_MS', { integer: true, min: 1 }));
  set('callbackTimeoutMs', num(env, 'DUB_CALLBACK_TIMEOUT_MS', { integer: true, min: 1 }));
  set('eventRetryMs', num(env, 'DUB_EVENT_RETRY_MS', { integer: true, min: 0 }));
  if (env.DUB_ALLOW_INSECURE_CALLBACKS !== undefined) o.allowInsecureCallbacks = flag('DUB_ALLOW_INSECURE_CALLBACKS');
  return o;
}
