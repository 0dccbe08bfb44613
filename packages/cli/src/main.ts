/**
 * The `dub` command. Each sub-command lives in src/commands/<name>.ts and exports
 * `run(argv: string[]): Promise<number>` and `summary`; it is imported only when used.
 * Options are parsed strictly by ./cli-args.ts (unknown flags exit 2).
 */
import fs from 'node:fs';
import { isDubError, ValidationError } from '@dub/core';
import { UsageError } from './cli-args.js';

export { UsageError } from './cli-args.js';

export interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  run: () => import('./commands/run.js'),
  serve: () => import('./commands/serve.js'),
  worker: () => import('./commands/worker.js'),
  models: () => import('./commands/models.js'),
  keys: () => import('./commands/keys.js'),
  doctor: () => import('./commands/doctor.js'),
};

export function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function usage(): Promise<string> {
  const out = ['usage: dub <command> [options]        dub <command> --help for its options', '', 'commands:'];
  for (const [n, load] of Object.entries(COMMANDS)) out.push(`  ${n.padEnd(10)} ${(await load()).summary}`);
  out.push('', 'options: --version, --help');
  return out.join('\n') + '\n';
}

/** Exit code for an error thrown by a command: 2 for usage and input errors, 1 otherwise. */
export function exitCodeOf(err: unknown): number {
  return err instanceof UsageError || err instanceof ValidationError ? 2 : 1;
}

/** The one line printed for an error: `dub <command>: message`, with the error code of a processing failure. */
export function errorLine(err: unknown, command = currentCommand): string {
  const prefix = command ? `dub ${command}` : 'dub';
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split('\n')[0];
  if (err instanceof UsageError || err instanceof ValidationError) return `${prefix}: ${first}`;
  return `${prefix}: ${isDubError(err) ? `${err.code}: ` : ''}${first}`;
}

let currentCommand: string | undefined;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    process.stdout.write(`dub ${version()}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    if (name === 'help' && rest[0] && COMMANDS[rest[0]]) return (await COMMANDS[rest[0]]!()).run(['--help']);
    if (name) process.stdout.write(await usage());
    else process.stderr.write(await usage());
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`dub: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')}; see dub --help)\n`);
    return 2;
  }
  currentCommand = name;
  return (await load()).run(rest);
}
