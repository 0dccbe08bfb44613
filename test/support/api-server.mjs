// A `dub serve`-like API process for tests that must see the process survive: the API of
// @dub/api with its embedded defaults (PGlite and blobs in the data dir given as argv[2]), API keys
// and limits from the DUB_* environment, JSON logs on stderr, and an in-memory queue (no worker).
// Prints {"url": ...} on stdout once listening; SIGTERM closes it.
import { apiOptionsFromEnv, createApi, MemoryTransport } from '@dub/api';
import { createLogger } from '@dub/core';

const dataDir = process.argv[2];
const transport = new MemoryTransport();
const logger = createLogger({ level: process.env.DUB_LOG_LEVEL ?? 'info', name: 'dub-api' });
const api = await createApi({ ...apiOptionsFromEnv(process.env, dataDir), logger, transport: { queue: transport, events: transport } });
const url = await api.listen(0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.once('SIGTERM', () => {
  api.close().then(() => process.exit(0), () => process.exit(1));
});
