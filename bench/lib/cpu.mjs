// The CPU as the benchmarks' headers name it: cores, model and what onnxruntime's int8 kernels
// depend on. Without VNNI (x86 AVX2 or AVX-512 without it) Kokoro's and HTDemucs's int8 layers run
// on uint8 weights (@dub/onnx int8GemmExact, which decides it; needs `npm run build`): the same
// job took about twice the wall time on a 2-core AVX2 EPYC as on the 2-core machine of the
// README's table.
import fs from 'node:fs';
import os from 'node:os';
import { int8GemmExact } from '../../packages/onnx/dist/conv-integer.js';

export function cpuWords() {
  const cpus = os.cpus();
  let simd = '';
  try {
    const flags = /^flags\s*:(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(/\s+/) ?? [];
    simd = flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : flags.length ? 'no AVX2' : '';
  } catch {
    /* not Linux: the model name alone */
  }
  return `${cpus.length} cores (${cpus[0]?.model ?? '?'}${simd ? `, ${simd}, ${int8GemmExact() ? 'VNNI' : 'no VNNI'}` : ''})`;
}
