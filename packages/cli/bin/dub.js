#!/usr/bin/env -S sh -c 'MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-1048576}" exec node "$0" "$@"'
// The line above runs node with glibc's malloc handing every block of 1 MiB or more straight back
// to the system when it is freed (unless MALLOC_MMAP_THRESHOLD_ is already set): without it the
// C heap keeps the freed tensors of one model run (HTDemucs: ~0.8 GB) for the rest of the process.
// `dub run` on speech over music peaks at ~0.9 GB with it, ~1.65 GB without (bench/e2e.mjs).
// Same process (sh execs node); `node bin/dub.js` skips it.
// Exit codes: 0 done; 2 a usage or input error (one line on stderr); 1 a failure while processing.
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
