// Memory of a process tree, read from /proc (Linux): the benchmarks sample it every 100 ms.
import fs from 'node:fs';

/** The pids of `pid`'s tree (itself first), from /proc. */
function treePids(pid) {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/**
 * Memory (bytes) of `pid` and all its descendants, now: the sum of their proportional set sizes
 * (Pss of /proc/PID/smaps_rollup: a page shared by n processes counts 1/n in each), else VmRSS
 * where smaps_rollup cannot be read. Summing VmRSS counted a child that the 1.4 GB `dub run`
 * process had forked but not yet exec'd (ffmpeg, espeak-ng) with all of its parent's pages: a
 * sample landing there read 2.6 GB for 1.35 GB in use (issue #27).
 */
export function treeRss(pid) {
  let total = 0;
  for (const p of treePids(pid)) {
    try {
      total += pssOf(p);
    } catch {
      // gone
    }
  }
  return total;
}

/**
 * CPU seconds (user + system) spent so far by `pid`'s tree: each process's own and that of its
 * children that have exited and were waited for (utime, stime, cutime, cstime of /proc/PID/stat;
 * clock ticks of 1/100 s). Sampled until the process ends, the last sample misses at most the
 * interval's work.
 */
export function treeCpuSeconds(pid) {
  let ticks = 0;
  for (const p of treePids(pid)) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields 14-17 of stat(5), counted from the state (field 3) here
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}

/** Pss of one process (bytes), else its VmRSS; 0 when it is gone. */
function pssOf(p) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // no smaps_rollup (kernel < 4.14) or gone: VmRSS below
  }
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}
