export { createApi, openDb, type CreateApiOptions, type DubApi } from './app.js';
export { apiOptionsFromEnv, parseApiKeys, resolveApiOptions, type ApiKey, type ApiOptions, type OrgLimits, type ResolvedApiOptions } from './options.js';
export { DubService, type Access, DEFAULT_STUDIO_MINUTES, MAX_STUDIO_MINUTES } from './service.js';
export { MemoryTransport } from './memory-transport.js';
export { type Db, type Queryable, type QueryResult } from './db/db.js';
export { openPgliteDb } from './db/pglite-db.js';
export { openPostgresDb, type PostgresDbOptions } from './db/postgres-db.js';
export { migrate, MIGRATIONS, type Migration } from './db/migrations.js';
export { loadOrCreateCallbackKey, publicKeyPem } from './keys.js';
export { signCallbackBody, verifyCallbackBody, UrlSigner } from './signing.js';
export { KeyRing, RateLimiter } from './auth.js';
export { checkPairs, parseCreateAsset, parseAddLanguages, type CreateAssetInput, type PairCapability } from './validation.js';
export { VoiceCatalog, type LibraryVoice } from './voices.js';
export { OutboxDispatcher } from './dispatcher.js';
export { parseRange } from './blob-response.js';
export {
  CONDITIONS,
  conditionOf,
  ApiError,
  ConcurrentUpdateError,
  GoneError,
  InsufficientBalanceError,
  InvalidStateError,
  LinkExpiredError,
  LinkInvalidError,
  LinkNotAllowedError,
  MediaSizeLimitError,
  NotReadyError,
  NotSupportedError,
  NotVisibleError,
  PayloadTooLargeError,
  PreconditionFailedError,
  RateLimitedError,
  ShuttingDownError,
  UnauthorizedError,
  UnavailableError,
  UriTooLongError,
  type Condition,
  type ConditionName,
} from './errors.js';
