#!/usr/bin/env node
// The worker daemon alone (same as `dub worker`): node packages/worker/bin/dub-worker.js --nats nats://HOST:4222
import { runWorkerCommand } from '../dist/command.js';

process.exitCode = await runWorkerCommand(process.argv.slice(2));
