// Where one `dub run` (en-US -> es-ES, no_lips) spends CPU: the process tree sampled from /proc every
// 100 ms; prints the tree's CPU seconds, the children by command (count and CPU s, as last seen
// before each exited), the dub process's threads by name, and the tree's CPU at each "stage done"
// and model-load log line, so a phase's CPU is the difference between two lines (issue #27).
// The JSON log (debug level unless DUB_LOG_LEVEL says otherwise) is kept in OUT_DIR/log.jsonl.
//
// Usage (after `npm run build`): flock /tmp/bench.lock node bench/dub-cpu.mjs INPUT.mp4 OUT_DIR [dub run options]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
const [input, outDir, ...extra] = process.argv.slice(2);
const DUB = fileURLToPath(new URL('../packages/cli/bin/dub.js', import.meta.url));
if (!input || !outDir) {
  console.error('usage: node bench/dub-cpu.mjs INPUT.mp4 OUT_DIR [dub run options]');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const t0 = Date.now();
const child = spawn(DUB, ['run', '--input', input, '--from', 'en-US', '--to', 'es-ES', '--out', path.join(outDir, 'out'), '--mode', 'no_lips', '--log-format', 'json', ...extra], {
  env: { ...process.env, DUB_LOG_LEVEL: process.env.DUB_LOG_LEVEL ?? 'debug', DUB_TMP_DIR: outDir }, stdio: ['ignore', 'ignore', 'pipe'] });
const logf = fs.createWriteStream(path.join(outDir, 'log.jsonl'));
const tick = 100;
function stat(p) { const s = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return { comm, ppid: +f[1], self: (+f[11] + +f[12]) / 100, kids: (+f[13] + +f[14]) / 100 }; }
function tree(pid) { const ch = new Map(); for (const d of fs.readdirSync('/proc')) { if (!/^\d+$/.test(d)) continue; try { const s = stat(d); (ch.get(s.ppid) ?? ch.set(s.ppid, []).get(s.ppid)).push(+d); } catch {} } const out = []; const st = [pid]; while (st.length) { const p = st.pop(); out.push(p); st.push(...(ch.get(p) ?? [])); } return out; }
const lastSeen = new Map(); // pid -> {comm, cpu}
const samples = []; // [t, mainSelf, treeTotal]
let threads = new Map();
const timer = setInterval(() => {
  let total = 0; let main = 0;
  for (const p of tree(child.pid)) { try { const s = stat(p); if (p === child.pid) { main = s.self; total += s.self + s.kids; } else { total += s.self; lastSeen.set(p, { comm: s.comm, cpu: s.self }); } } catch {} }
  // exited children are in main's kids; use max of (sum lastSeen + main.self) and total
  let seen = main; for (const v of lastSeen.values()) seen += v.cpu;
  samples.push([Date.now() - t0, main, Math.max(total, seen)]);
  try { for (const t of fs.readdirSync(`/proc/${child.pid}/task`)) { const s = stat(`${child.pid}/task/${t}`); threads.set(t, { comm: s.comm, cpu: s.self }); } } catch {}
}, tick);
const events = [];
readline.createInterface({ input: child.stderr }).on('line', (l) => { logf.write(l + '\n'); try { const j = JSON.parse(l); events.push({ t: Date.now() - t0, msg: j.msg, stage: j.stage, j }); } catch {} });
const code = await new Promise((r) => child.on('close', r));
clearInterval(timer);
const wall = (Date.now() - t0) / 1000;
const total = samples.at(-1)[2];
console.log(`exit ${code} wall ${wall.toFixed(1)} s, tree CPU ${total.toFixed(1)} s, main self ${samples.at(-1)[1].toFixed(1)}`);
const byComm = {}; for (const v of lastSeen.values()) { byComm[v.comm] ??= { n: 0, cpu: 0 }; byComm[v.comm].n++; byComm[v.comm].cpu += v.cpu; }
console.log('children (last sample seen):', Object.entries(byComm).map(([k, v]) => `${k} x${v.n} ${v.cpu.toFixed(1)}s`).join(', '));
const byThr = {}; for (const v of threads.values()) { byThr[v.comm] ??= { n: 0, cpu: 0 }; byThr[v.comm].n++; byThr[v.comm].cpu += v.cpu; }
console.log('main threads:', Object.entries(byThr).map(([k, v]) => `${k} x${v.n} ${v.cpu.toFixed(1)}s`).join(', '));
// CPU between consecutive "stage done"/"stage start" style events: print a timeline of stage done with CPU since previous
const cpuAt = (t) => { let lo = 0; for (const s of samples) { if (s[0] <= t) lo = s[2]; else break; } return lo; };
let prevT = 0;
for (const e of events) {
  if (!/stage (done|start)|onnx session created|quality|whisper/.test(e.msg ?? '')) continue;
  console.log(`${(e.t / 1000).toFixed(1).padStart(6)}s cpu ${cpuAt(e.t).toFixed(1).padStart(6)} ${e.msg} ${e.stage ?? ''} ${e.j.seconds !== undefined ? e.j.seconds.toFixed?.(2) : ''} ${e.j.model ? path.basename(e.j.model) : ''}`);
}
fs.writeFileSync(path.join(outDir, 'samples.json'), JSON.stringify({ samples, events: events.map((e) => ({ t: e.t, msg: e.msg, stage: e.stage })) }));
