/**
 * The `dub` command. Each sub-command lives in src/commands/<name>.ts and exports
 * `run(argv: string[]): Promise<number>` and `summary`; it is imported only when used.
 */
export interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  models: () => import('./commands/models.js'),
  worker: () => import('./commands/worker.js'),
  serve: () => import('./commands/serve.js'),
  keys: () => import('./commands/keys.js'),
  run: () => import('./commands/run.js'),
};

function usage(): string {
  const lines = ['usage: dub <command> [options]', '', 'commands:'];
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const out = [usage()];
    for (const [n, load] of Object.entries(COMMANDS)) out.push(`  ${n.padEnd(10)} ${(await load()).summary}`);
    process.stdout.write(out.join('\n') + '\n');
    return name ? 0 : 1;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`dub: unknown command "${name}"\n${usage()}\n  ${Object.keys(COMMANDS).join(', ')}\n`);
    return 2;
  }
  return (await load()).run(rest);
}
