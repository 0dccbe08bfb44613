import { pino, type Logger as PinoLogger, type LoggerOptions } from 'pino';

export type Logger = PinoLogger;

/** A pino logger writing JSON lines to stderr (stdout stays free for command output). */
export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  const options: LoggerOptions = { level: opts.level ?? process.env.DUB_LOG_LEVEL ?? 'info' };
  if (opts.name) options.name = opts.name;
  return pino(options, pino.destination(2));
}

/** A logger that discards everything: the default inside stages when the caller passes none. */
export const silentLogger: Logger = pino({ level: 'silent' });
