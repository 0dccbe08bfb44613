import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, EngineUnavailableError, ProcessError, TimeoutError, type Progress } from '@dub/core';
import { runFfmpeg, runProcess } from './index.js';
import { tempDir } from '../test-support/media-fixtures.js';

const node = process.execPath;
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp.cleanup();
});

function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie waiting for a reaper has stopped running too.
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

describe('runProcess', () => {
  it('captures stdout and passes arguments without a shell', async () => {
    const res = await runProcess(node, ['-e', 'process.stdout.write(process.argv.slice(1).join("|"))', '$HOME', 'a b', '; rm -rf /']);
    expect(res.exitCode).toBe(0);
    expect(res.stdout.toString()).toBe('$HOME|a b|; rm -rf /');
  });

  it('feeds stdin from a Buffer and from a stream', async () => {
    const cat = ['-e', 'process.stdin.pipe(process.stdout)'];
    const a = await runProcess(node, cat, { input: Buffer.from('hello bytes') });
    expect(a.stdout.toString()).toBe('hello bytes');
    const b = await runProcess(node, cat, { input: Readable.from([Buffer.from('one '), Buffer.from('two')]) });
    expect(b.stdout.toString()).toBe('one two');
  });

  it('streams stdout into a Writable and reports lines', async () => {
    const out = tmp.file('stdout.txt');
    const lines: string[] = [];
    await runProcess(node, ['-e', 'for (let i = 0; i < 3; i++) console.log("line " + i)'], { stdout: createWriteStream(out), onStdoutLine: (l) => lines.push(l) });
    expect(await readFile(out, 'utf8')).toBe('line 0\nline 1\nline 2\n');
    expect(lines).toEqual(['line 0', 'line 1', 'line 2']);
  });

  it('fails with ProcessError carrying exit code and the last 4 KB of stderr', async () => {
    const script = 'process.stderr.write("FIRST" + "x".repeat(10000) + "\\nthe real reason\\n"); process.exit(3)';
    const err = await runProcess(node, ['-e', script]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessError);
    const pe = err as ProcessError;
    expect(pe.code).toBe('process_failed');
    expect(pe.exitCode).toBe(3);
    expect(pe.signal).toBeNull();
    expect(pe.stderrTail.length).toBeLessThanOrEqual(4096);
    expect(pe.stderrTail.length).toBeGreaterThan(4000);
    expect(pe.stderrTail).toContain('the real reason');
    expect(pe.stderrTail).not.toContain('FIRST');
    expect(pe.message).toContain('the real reason');
  });

  it('accepts other exit codes when told to', async () => {
    const res = await runProcess(node, ['-e', 'process.exit(2)'], { okExitCodes: [0, 2] });
    expect(res.exitCode).toBe(2);
  });

  it('reports a missing binary as EngineUnavailableError', async () => {
    await expect(runProcess('/nonexistent/dub-tool', [])).rejects.toBeInstanceOf(EngineUnavailableError);
  });

  it('kills the whole process group on abort', async () => {
    const ac = new AbortController();
    let grandchild = 0;
    const p = runProcess('sh', ['-c', 'sleep 30 & echo $!; wait'], {
      signal: ac.signal,
      onStdoutLine: (l) => {
        grandchild = Number(l);
        ac.abort('cancelled by test');
      },
    });
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortedError);
    expect(grandchild).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(gone(grandchild)).toBe(true);
  });

  it('rejects at once when the signal already fired', async () => {
    await expect(runProcess(node, ['-e', ''], { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortedError);
  });

  it('times out', async () => {
    const t0 = Date.now();
    await expect(runProcess('sleep', ['30'], { timeoutMs: 200 })).rejects.toBeInstanceOf(TimeoutError);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('runFfmpeg', () => {
  it('reports progress fractions from -progress pipe:1', async () => {
    const seen: Progress[] = [];
    await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000:duration=20', '-f', 'null', '-'], { durationSec: 20, stage: 'tone' }, { onProgress: (p) => seen.push(p) });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.stage === 'tone')).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.fraction).toBeGreaterThan(seen[i - 1]!.fraction);
    expect(seen[seen.length - 1]!.fraction).toBe(1);
  });

  it('an AbortSignal kills a long ffmpeg', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const run = runFfmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-f', 'null', '-'], { durationSec: 3600 }, {
      signal: ac.signal,
      onProgress: () => ac.abort(),
    });
    await expect(run).rejects.toBeInstanceOf(AbortedError);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('carries the stderr tail of a failing ffmpeg', async () => {
    const err = await runFfmpeg(['-i', tmp.file('does-not-exist.mp4'), '-f', 'null', '-']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessError);
    const pe = err as ProcessError;
    expect(pe.exitCode).not.toBe(0);
    expect(pe.stderrTail).toContain('No such file or directory');
  });

  it('uses the configured binary', async () => {
    await expect(runFfmpeg(['-version'], { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toBeInstanceOf(EngineUnavailableError);
    await expect(runFfmpeg(['-version'], { config: { ffmpegPath: '/nonexistent/ff', ffprobePath: 'ffprobe' } })).rejects.toBeInstanceOf(EngineUnavailableError);
    const res = await runFfmpeg(['-version'], { config: { ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe' }, logLevel: 'info' });
    expect(res.stdout.toString()).toContain('ffmpeg version');
  });
});
