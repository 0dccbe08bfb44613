/**
 * Disk faults for tests, injected where the process does its file I/O: node:fs (callback API,
 * used by streams) and node:fs/promises. Tests may run as root, where a read-only chmod does not
 * stop writes, and a full disk cannot be made without mounting one; this wraps the calls instead
 * and throws the errors the kernel would (same `code`, `syscall`, `path`).
 *
 * A fault spec: { under: [absolute dirs], code: 'ENOSPC' | 'EROFS' | 'EIO' | 'EACCES', ops?: [names] }
 * - ENOSPC (full disk): calls that allocate fail: writeFile, appendFile, copyFile, open for writing,
 *   mkdir of a directory that does not exist yet. Reads, renames and removals still work.
 * - EROFS (read-only): every call that changes the disk fails (the above plus rename, rm, unlink, rmdir).
 * - EIO / EACCES: every call under the dirs fails, reads included.
 * `ops` narrows the faults to those call names (e.g. ['rm']).
 *
 * In process: `const faults = installDiskFaults(); faults.set(spec); ... faults.clear(); faults.uninstall();`
 * As a preload (`node --import <this file>`, e.g. through NODE_OPTIONS), when DUB_TEST_DISK_FAULTS
 * names a file: that file holds the spec as JSON (absent or empty: no faults); it is read again at
 * most every 50 ms, so a test switches faults on and off by writing it.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';

const ERRNO = { ENOSPC: -28, EROFS: -30, EIO: -5, EACCES: -13 };
const MESSAGES = { ENOSPC: 'no space left on device', EROFS: 'read-only file system', EIO: 'i/o error', EACCES: 'permission denied' };
const ALLOCATING = new Set(['writeFile', 'appendFile', 'copyFile', 'open', 'mkdir']);
const CHANGING = new Set([...ALLOCATING, 'rename', 'rm', 'unlink', 'rmdir']);

/** Path arguments of each wrapped call that a fault looks at (indexes into its arguments). */
const PROMISE_OPS = {
  writeFile: [0],
  appendFile: [0],
  copyFile: [0, 1],
  open: [0],
  mkdir: [0],
  rename: [0, 1],
  rm: [0],
  unlink: [0],
  rmdir: [0],
  stat: [0],
  lstat: [0],
  readFile: [0],
  readdir: [0],
  access: [0],
};
const CALLBACK_OPS = { open: [0], mkdir: [0], rename: [0, 1], unlink: [0], writeFile: [0], stat: [0], readFile: [0] };

function asPath(p) {
  if (typeof p === 'string') return path.resolve(p);
  if (p instanceof URL) return fileURLToPath(p);
  if (Buffer.isBuffer(p)) return path.resolve(p.toString());
  return undefined;
}

function writesFlags(flags) {
  if (flags === undefined || flags === null) return false;
  if (typeof flags === 'number') return (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT)) !== 0;
  return /[wa+]/.test(String(flags));
}

function makeError(code, op, p) {
  const e = new Error(`${code}: ${MESSAGES[code] ?? 'disk fault'}, ${op} '${p}'`);
  return Object.assign(e, { code, errno: ERRNO[code] ?? -5, syscall: op, path: p });
}

/** The fault a call meets under `spec`, or undefined. */
function faultFor(spec, op, args, indexes) {
  if (!spec || !Array.isArray(spec.under) || spec.under.length === 0) return undefined;
  if (spec.ops && !spec.ops.includes(op)) return undefined;
  const code = spec.code ?? 'EIO';
  if (code === 'ENOSPC' && !ALLOCATING.has(op)) return undefined;
  if (code === 'EROFS' && !CHANGING.has(op)) return undefined;
  if (op === 'open' && (code === 'ENOSPC' || code === 'EROFS') && !writesFlags(args[1])) return undefined;
  for (const i of indexes) {
    const p = asPath(args[i]);
    if (p === undefined) continue;
    if (!spec.under.some((d) => p === d || p.startsWith(d.endsWith(path.sep) ? d : d + path.sep))) continue;
    if (op === 'mkdir' && code !== 'EIO' && code !== 'EACCES' && original.existsSync(p)) return undefined;
    // copyFile: a full or read-only disk fails on the destination only.
    if (op === 'copyFile' && (code === 'ENOSPC' || code === 'EROFS') && i === 0) continue;
    return makeError(code, op, p);
  }
  return undefined;
}

const original = { existsSync: fs.existsSync, readFileSync: fs.readFileSync, promises: {}, callbacks: {} };
let installed;

/**
 * Wrap node:fs and node:fs/promises once; `spec()` says what fails now. Returns the controller
 * (set, clear, uninstall, hits: faults thrown so far).
 */
export function installDiskFaults(specSource) {
  if (installed) return installed;
  let current;
  const spec = specSource ?? (() => current);
  const state = { hits: 0 };
  for (const [op, idx] of Object.entries(PROMISE_OPS)) {
    const fn = fsp[op];
    original.promises[op] = fn;
    fsp[op] = function (...args) {
      const e = faultFor(spec(), op, args, idx);
      if (e) {
        state.hits++;
        return Promise.reject(e);
      }
      return fn.apply(this, args);
    };
  }
  for (const [op, idx] of Object.entries(CALLBACK_OPS)) {
    const fn = fs[op];
    original.callbacks[op] = fn;
    fs[op] = function (...args) {
      const e = faultFor(spec(), op, args, idx);
      if (e) {
        state.hits++;
        const cb = args[args.length - 1];
        if (typeof cb === 'function') process.nextTick(cb, e);
        return undefined;
      }
      return fn.apply(this, args);
    };
  }
  syncBuiltinESMExports();
  installed = {
    set(s) {
      current = { ...s, under: s.under.map((d) => path.resolve(d)) };
    },
    clear() {
      current = undefined;
    },
    get hits() {
      return state.hits;
    },
    uninstall() {
      for (const [op, fn] of Object.entries(original.promises)) fsp[op] = fn;
      for (const [op, fn] of Object.entries(original.callbacks)) fs[op] = fn;
      syncBuiltinESMExports();
      installed = undefined;
    },
  };
  return installed;
}

// Preload: faults steered by the file named in DUB_TEST_DISK_FAULTS.
const control = process.env.DUB_TEST_DISK_FAULTS;
if (control) {
  let cached;
  let readAt = 0;
  installDiskFaults(() => {
    const now = Date.now();
    if (now - readAt < 50) return cached;
    readAt = now;
    try {
      const text = original.readFileSync.call(fs, control, 'utf8').trim();
      cached = text ? JSON.parse(text) : undefined;
      if (cached) cached = { ...cached, under: cached.under.map((d) => path.resolve(d)) };
    } catch {
      cached = undefined;
    }
    return cached;
  });
}
