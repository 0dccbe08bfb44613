import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Absolute path of executable `cmd` (a path, or a name looked up on PATH), or undefined. */
export function findExecutable(cmd: string, envPath = process.env.PATH ?? ''): string | undefined {
  const candidates = cmd.includes('/') ? [cmd] : envPath.split(path.delimiter).filter(Boolean).map((d) => path.join(d, cmd));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return path.resolve(c);
    } catch {
      // not here
    }
  }
  return undefined;
}
