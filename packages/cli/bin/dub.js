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
import { main, exitCodeOf, errorLine } from '../dist/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`${errorLine(err)}\n`);
    process.exitCode = exitCodeOf(err);
  },
);
