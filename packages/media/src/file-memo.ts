/**
 * What ffprobe said about a file, kept for the process while the file is the same one: same
 * device, inode, size, modification and change times (nanoseconds). A job asks about the same
 * source video and tracks several times (probe: source stage, video stage, quality report;
 * stream starts: extract, trim, mux), and each ffprobe costs ~0.2 CPU s on a 2-core machine
 * (issue #27). A rewritten or replaced file has another identity and is asked again.
 */
import { stat } from 'node:fs/promises';

/** The file's identity now, or undefined when it cannot be read. */
export async function fileIdentity(file: string): Promise<string | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    if (!st.isFile()) return undefined;
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** Answers by key (the caller puts the file's identity and the question in it), the last `max` kept; each read is a copy. */
export class FileMemo<T> {
  private readonly entries = new Map<string, T>();
  constructor(private readonly max = 64) {}
  get(key: string): T | undefined {
    const v = this.entries.get(key);
    if (v === undefined) return undefined;
    // most recently used last
    this.entries.delete(key);
    this.entries.set(key, v);
    return structuredClone(v);
  }
  set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, structuredClone(value));
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
  clear(): void {
    this.entries.clear();
  }
}
