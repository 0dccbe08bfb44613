/**
 * `dub worker --nats nats://HOST:4222 [--concurrency N] [--device cpu|cuda|cuda:N] [--data-dir DIR]
 * [--blobs nats|fs:PATH] [--handlers MODULE] [--metrics-port P]`: the NATS worker daemon
 * (@dub/worker). Exits 0 after a graceful SIGTERM drain.
 */
import { runWorkerCommand } from '@dub/worker';

export const summary = 'run the NATS JetStream worker daemon (jobs from any API front)';

export function run(argv: string[]): Promise<number> {
  return runWorkerCommand(argv);
}
