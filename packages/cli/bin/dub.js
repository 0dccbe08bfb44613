#!/usr/bin/env -S sh -c '[ -n "${MALLOC_MMAP_THRESHOLD_+x}" ] || export MALLOC_MMAP_THRESHOLD_=1048576 DUB_MALLOC_FROM_BIN=1; exec node "$0" "$@"'
// The line above runs node with glibc's malloc mapping every block of 1 MiB or more on its own,
// so that freed blocks go straight back to the system, unless MALLOC_MMAP_THRESHOLD_ is already
// set (an operator's value wins). Without it the C heap keeps the freed tensors of one model run
// and the next, differently sized ones grow it further: HTDemucs on CPU (split into parts) peaks
// at ~1.5 GB instead of ~0.9 GB per segment, `dub run` on speech over music at ~1.65 GB instead
// of ~0.9 GB; the cost is ~25% more separation time (bench/separation-fast.mjs). Hosts with
// memory to spare can set MALLOC_MMAP_THRESHOLD_=33554432 (glibc's own upper bound) instead.
// Same process (sh execs node); `node bin/dub.js` skips it. Child processes (ffmpeg,
// pocketsphinx, espeak-ng) get the environment as it was: they gain nothing from it.
if (process.env.DUB_MALLOC_FROM_BIN === '1') {
  delete process.env.MALLOC_MMAP_THRESHOLD_;
  delete process.env.DUB_MALLOC_FROM_BIN;
}
// Node's compile cache (22.1+): the compiled code of dub's modules is kept on disk and reused by
// the next start, not compiled again (a cold `dub run` compiles ~0.2 CPU s less on the 2-core
// machine). `$NODE_COMPILE_CACHE` when set, else `$XDG_CACHE_HOME/dub/compile-cache` (default
// ~/.cache/dub/compile-cache); NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node's own switch). The
// cache is keyed by each file's content and Node's version: it never changes what runs.
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

if (typeof module.enableCompileCache === 'function') {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  try {
    module.enableCompileCache(process.env.NODE_COMPILE_CACHE || path.join(base, 'dub', 'compile-cache'));
  } catch {
    // no cache: modules compile as before
  }
}
// imported after the cache is on (a static import would be loaded before it)
const { main, exitCodeOf, errorLine } = await import('../dist/main.js');

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`${errorLine(err)}\n`);
    process.exitCode = exitCodeOf(err);
  },
);
