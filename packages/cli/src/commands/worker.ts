/**
 * `dub worker --nats nats://HOST:4222 [--concurrency N] [--device cpu|cuda|cuda:N] [--data-dir DIR]
 * [--blobs nats|fs:PATH|s3://BUCKET/PREFIX] [--handlers MODULE] [--metrics-port P]`: the NATS worker daemon
 * (@dub/worker). Exits 0 after a graceful SIGTERM drain.
 */
import { runWorkerCommand, WORKER_USAGE } from '@dub/worker';
import { ENGINE_FLAGS_HELP, takeEngineFlags } from '../cli-args.js';

export const summary = 'run the NATS JetStream worker daemon (jobs from any API front)';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${WORKER_USAGE}\n${ENGINE_FLAGS_HELP}\n`);
    return 0;
  }
  const rest = takeEngineFlags('worker', argv);
  const { engineChoiceFromEnv } = await import('@dub/pipeline');
  engineChoiceFromEnv(process.env); // an unknown engine is a usage error, before the daemon starts
  return runWorkerCommand(rest);
}
