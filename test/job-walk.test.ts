/**
 * scripts/job-walk.mjs (issue 28's "re-enters a file already visited" measure) on a four-file
 * fixture whose walk is counted by hand below, under each rule the script offers.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from './support/media.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'job-walk.mjs');

const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], noEmit: true }, include: ['*.ts'] }),
  'a.ts': `import { helper, Box, run } from './b.js';
import { leaf, type Sink } from './c.js';
import { rec } from './d.js';
export interface Job { id: string; opts: { n: number } }
export function same(j: Job): number { return j.opts.n; }
export function start(job: Job, other: number, sink: Sink): void {
  const { opts } = job;
  helper(job.id, job);
  leaf(opts.n);
  same(job);
  Math.max(other, 1);
  JSON.stringify(job);
  new Box({ id: job.id });
  [1, 2].forEach(() => leaf(job.opts.n));
  sink.put(job);
  run(() => same(job));
  rec(job, 3);
}
export function back(j: Job): void { same(j); }
`,
  'b.ts': `import { leaf } from './c.js';
import { back, type Job } from './a.js';
export function helper(id: string, j: Job): void { leaf(id); back(j); }
export class Box { id: string; constructor(o: { id: string }) { this.id = o.id; } }
export function run(cb: () => void): void { cb(); }
`,
  'c.ts': `export function leaf(x: unknown): void { void x; }
export interface Sink { put(x: unknown): void }
`,
  'd.ts': `import type { Job } from './a.js';
export function rec(j: Job, n: number): void { if (n > 0) rec(j, n - 1); }
`,
};

/** A job as a list of stages: the stages' `run` and `when` are reached through the interface, from the list. */
const STAGE_FILES: Record<string, string> = {
  'tsconfig.json': FILES['tsconfig.json']!,
  'util.ts': `export interface Job { id: string }
export interface St { job: Job; n?: number }
export function size(j: Job): number { return j.id.length; }
`,
  'run.ts': `export interface Stage<S> { name: string; when?: (s: S) => boolean; run(state: S): Promise<Partial<S>> }
export async function runStages<S extends object>(stages: readonly Stage<S>[], state: S): Promise<S> {
  let at: S = state;
  for (const s of stages) {
    if (s.when && !s.when(at)) continue;
    at = { ...at, ...(await s.run(at)) };
  }
  return at;
}
`,
  'one.ts': `import type { Stage } from './run.js';
import { size, type St } from './util.js';
export const one: Stage<St> = { name: 'one', async run(state) { return { n: size(state.job) }; } };
`,
  'two.ts': `import type { Stage } from './run.js';
import { size, type St } from './util.js';
async function runTwo(state: St): Promise<Partial<St>> { size(state.job); return {}; }
export const two = { name: 'two', when: (s: St) => s.job.id !== '', run: runTwo } satisfies Stage<St>;
`,
  'main.ts': `import { runStages } from './run.js';
import { one } from './one.js';
import { two } from './two.js';
import type { Job } from './util.js';
const STAGES = Object.freeze([one, two]);
export async function start(job: Job): Promise<void> { await runStages(STAGES, { job }); }
`,
};

let dir: string;
let stagesDir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-job-walk-'));
  for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(dir, name), text);
  stagesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-job-walk-stages-'));
  for (const [name, text] of Object.entries(STAGE_FILES)) fs.writeFileSync(path.join(stagesDir, name), text);
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(stagesDir, { recursive: true, force: true });
});

interface Walk {
  files: { file: string; entries: number }[];
  followed: number;
  stops: { at: string; callee: string; reason: string }[];
  reentries: number;
  returns: number;
  reentriesBeyondLeaves: number;
  reentryList: { file: string; via: string; leaf: boolean }[];
  entries: { file: string }[];
  error?: string;
}

// the walks run in this process (one load of typescript); the command line is run once, below
async function walk(rule: { closures?: 'inline' | 'follow'; scalars?: boolean } = {}): Promise<Walk> {
  const { walk: run } = (await import(pathToFileURL(SCRIPT).href)) as { walk: (o: object) => Walk };
  return run({ file: path.join(dir, 'a.ts'), fn: 'start', param: 'job', root: dir, ...rule });
}

it('inline closures, scalars counted (the default): 4 re-entries, counted by hand', async () => {
  const r = await walk();
  // a.start -> b.helper -> c.leaf(id) ; b -> a.back (re-entry 1) -> same (same file)
  // leaf(opts.n): a -> c (2); same(job): same file; JSON.stringify: stop (outside)
  // new Box({ id: job.id }): a -> b (3); forEach's closure read inline: leaf -> c (4)
  // sink.put: stop (no body: an interface); run(() => same(job)): run takes no carrier, same(job) inline
  // rec(job, 3): a -> d (new); rec's own call: stop (recursive)
  expect(r.entries.map((e) => e.file)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts', 'c.ts', 'b.ts', 'c.ts', 'd.ts']);
  expect(r.reentries).toBe(4);
  expect(r.reentryList.map((e) => e.file)).toEqual(['a.ts', 'c.ts', 'b.ts', 'c.ts']);
  // a.back follows same(j); leaf, the Box constructor and leaf again follow nothing
  expect(r.reentryList.map((e) => e.leaf)).toEqual([false, true, true, true]);
  expect(r.reentriesBeyondLeaves).toBe(1);
  expect(r.files).toEqual([
    { file: 'a.ts', entries: 2 },
    { file: 'b.ts', entries: 2 },
    { file: 'c.ts', entries: 3 },
    { file: 'd.ts', entries: 1 },
  ]);
  expect(r.followed).toBe(10);
  expect(r.stops.map((s) => `${s.callee} ${s.reason}`)).toEqual(['stringify outside', 'put no-body', 'rec recursive']);
  expect(r.returns).toBe(7);
});

it('--no-scalars: only the job object and its object parts are followed', async () => {
  const r = await walk({ scalars: false });
  // helper(job.id, job) still gets job; in helper, leaf(id) carries a string: not followed
  // leaf(opts.n), new Box({ id }), the closure's leaf(job.opts.n): strings and numbers, not followed
  expect(r.entries.map((e) => e.file)).toEqual(['a.ts', 'b.ts', 'a.ts', 'd.ts']);
  expect(r.reentries).toBe(1);
  expect(r.followed).toBe(6); // helper, back, same (in back), same(job), same (inline closure), rec
  expect(r.stops.map((s) => `${s.callee} ${s.reason}`)).toEqual(['stringify outside', 'put no-body', 'rec recursive']);
});

it('--closures follow: a closure is walked where it is called, so a callback is a re-entry', async () => {
  const r = await walk({ closures: 'follow' });
  // as the default up to forEach: forEach (outside) is a stop and runs the closure there -> leaf in c (4)
  // run(() => same(job)): a -> b (5), run calls cb: b -> a (6), same(job) in a
  expect(r.entries.map((e) => e.file)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts', 'c.ts', 'b.ts', 'c.ts', 'b.ts', 'a.ts', 'd.ts']);
  expect(r.reentries).toBe(6);
  expect(r.reentryList.at(-1)!.via).toMatch(/^b\.ts:5 \(closure at a\.ts:16\)$/);
  expect(r.stops.map((s) => `${s.callee} ${s.reason}`)).toEqual(['stringify outside', 'forEach outside', 'put no-body', 'rec recursive']);
  expect(r.followed).toBe(12);
});

it('a list of stages: the walk reaches each stage’s run and when through the interface, from the list', async () => {
  const { walk: run } = (await import(pathToFileURL(SCRIPT).href)) as { walk: (o: object) => Walk };
  const r = run({ file: path.join(stagesDir, 'main.ts'), fn: 'start', param: 'job', root: stagesDir });
  // main -> run.runStages({ job }); s.when(at): two's arrow (two.ts); s.run(at): one's run (one.ts) -> size (util.ts),
  // then two's runTwo (two.ts again: re-entry 1) -> size (util.ts again: re-entry 2)
  expect(r.entries.map((e) => e.file)).toEqual(['main.ts', 'run.ts', 'two.ts', 'one.ts', 'util.ts', 'two.ts', 'util.ts']);
  expect(r.reentries).toBe(2);
  expect(r.reentryList.map((e) => e.leaf)).toEqual([false, true]); // runTwo follows size; size follows nothing
  expect(r.followed).toBe(6);
  expect(r.stops).toEqual([]);
});

it('on the command line: the text report ends with the figures; a missing function is said, exit 0', () => {
  const text = execFileSync(process.execPath, [SCRIPT, 'a.ts', 'start', 'job', '--root', dir], { encoding: 'utf8' });
  expect(text.trim().split('\n').slice(-5)).toEqual(['calls followed: 10', 'stops: 3', 'returns to a caller in another file: 7', 're-entries into a function that follows no call of its own (leaf): 3', 're-entries: 4']);
  const out = execFileSync(process.execPath, [SCRIPT, 'a.ts', 'nowhere', 'job', '--root', dir, '--json'], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual({ error: 'a.ts has no function nowhere' });
});
