#!/usr/bin/env node
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
