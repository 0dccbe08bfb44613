/** Splits a byte stream into text lines (\n or \r\n, and bare \r for progress-style output). */
export class LineSplitter {
  private rest = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    const text = this.rest + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const parts = text.split(/\r\n|\n|\r/);
    this.rest = parts.pop() ?? '';
    for (const p of parts) this.onLine(p);
  }

  end(): void {
    if (this.rest !== '') this.onLine(this.rest);
    this.rest = '';
  }
}

/** Keeps the last `limit` bytes written to it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.limit * 2) this.compact();
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const kept = all.subarray(Math.max(0, all.length - this.limit));
    this.chunks = [Buffer.from(kept)];
    this.size = kept.length;
  }

  toString(): string {
    this.compact();
    return this.chunks[0]?.toString('utf8') ?? '';
  }
}
