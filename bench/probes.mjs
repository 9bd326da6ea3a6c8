// probes.mjs: the machine's own SIMD128 ceilings, measured in the bench that uses them (issue 30), so a kernel's
// GFLOP/s is divided by a rate taken on the same machine in the same run. Layer: bench. (And memCopyRate, at the end:
// the memory-copy rate a decoding step's weight reads are compared with.)
//  - simdPeak('muladd'): f32x4.mul + f32x4.add, the op mix of attnscope's SIMD128 GEMM micro-kernel;
//  - simdPeak('relaxed'): f32x4.relaxed_madd (fused on x64), the op mix of the relaxed-SIMD kernel (null where the
//    engine rejects relaxed SIMD: Node 20 needs --experimental-wasm-relaxed-simd).
// Each probe is the micro-kernel's inner loop without anything else: per iteration two v128 loads of B and one
// v128.load32_splat of A per row (all from one 32 KiB, L1-resident region), then rows x 2 accumulator updates; 4-row
// (8 accumulators, the 4x8 tile) and 6-row (12 accumulators) variants, the faster one is the probe. The loads keep
// the products inside the loop (TurboFan hoists loop-invariant arithmetic); the loop was checked in V8's code
// (--print-wasm-code): vbroadcastss/vmulps/vaddps only, no spills. The module is written here as WAT and assembled
// with wabt's wat2wasm (a toolchain package, scripts/setup.sh). Called many times after warm-up so that TurboFan's
// code runs (a long first call would stay in Liftoff: wasm has no on-stack replacement).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function wat(rows, fused) {
  const acc = [];
  for (let r = 0; r < rows; r++) for (let j = 0; j < 2; j++) acc.push(`$c${r}x${j}`);
  const L = ['(module (memory (export "mem") 1)', ' (func (export "run") (param $n i32) (result f32)',
    `  (local $i i32) (local $p i32) (local $b0 v128) (local $b1 v128) (local $a v128) ${acc.map((a) => `(local ${a} v128)`).join(' ')}`,
    '  (loop $l',
    '   (local.set $p (i32.and (i32.shl (local.get $i) (i32.const 5)) (i32.const 16383)))',
    '   (local.set $b0 (v128.load (local.get $p))) (local.set $b1 (v128.load offset=16 (local.get $p)))'];
  for (let r = 0; r < rows; r++) {
    L.push(`   (local.set $a (v128.load32_splat offset=${16384 + 4 * r} (i32.and (i32.shl (local.get $i) (i32.const 4)) (i32.const 16383))))`);
    for (let j = 0; j < 2; j++) {
      const c = `$c${r}x${j}`;
      L.push(fused ? `   (local.set ${c} (f32x4.relaxed_madd (local.get $a) (local.get $b${j}) (local.get ${c})))`
        : `   (local.set ${c} (f32x4.add (local.get ${c}) (f32x4.mul (local.get $a) (local.get $b${j}))))`);
    }
  }
  L.push('   (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))');
  let sum = `(local.get ${acc[0]})`;
  for (const a of acc.slice(1)) sum = `(f32x4.add ${sum} (local.get ${a}))`;
  L.push(`  (f32x4.extract_lane 0 ${sum})))`);
  return L.join('\n');
}

function assembleWat(text) {
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-probe-'));
  try {
    writeFileSync(join(dir, 'p.wat'), text);
    execFileSync('wat2wasm', ['--enable-relaxed-simd', join(dir, 'p.wat'), '-o', join(dir, 'p.wasm')]);
    return readFileSync(join(dir, 'p.wasm'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const assemble = (rows, fused) => assembleWat(wat(rows, fused));

const cache = new Map();
async function instance(rows, fused) {
  const key = `${rows}${fused}`;
  if (!cache.has(key)) {
    const bytes = assemble(rows, fused);
    if (!WebAssembly.validate(bytes)) return null;
    const { instance: inst } = await WebAssembly.instantiate(bytes);
    new Float32Array(inst.exports.mem.buffer).fill(1e-3);
    for (let w = 0; w < 300; w++) inst.exports.run(20000);  // tier up to TurboFan
    await new Promise((r) => setTimeout(r, 100));
    cache.set(key, inst);
  }
  return cache.get(key);
}

/**
 * GFLOP/s of the probe (median of `samples` timings of ~10 ms each, best of the 4- and 6-row loops), or null when
 * the engine rejects the module. kind: 'muladd' | 'relaxed'. clock: milliseconds (wall-clock by default; a benchmark
 * timing its kernels in process CPU time passes the same clock).
 */
export async function simdPeak(kind, samples = 9, clock = () => performance.now()) {
  let best = null;
  for (const rows of [4, 6]) {
    let inst;
    try {
      inst = await instance(rows, kind === 'relaxed');
    } catch {
      return null;
    }
    if (!inst) return null;
    const n = 200000, flop = rows * 2 * 4 * 2 * n;
    const rates = [];
    for (let s = 0; s < samples; s++) {
      const t0 = clock();
      inst.exports.run(n);
      rates.push(flop / ((clock() - t0) / 1e3) / 1e9);
    }
    rates.sort((a, b) => a - b);
    const med = rates[Math.floor(rates.length / 2)];
    if (best === null || med > best) best = med;
  }
  return best;
}

/**
 * The memory-copy probe (issue 30: decoding is bound by reading weights, so its bytes/s are compared with this):
 * GB/s of `memory.copy` (bulk memory; V8 copies with its native memmove) of `mb` MiB — larger than the L3 cache, so
 * it measures DRAM — counting the bytes copied (each read once and written once). Median of `samples` copies after
 * two warm-up ones; one thread, wall-clock unless `clock` is given.
 */
export async function memCopyRate(mb = 64, samples = 7, clock = () => performance.now()) {
  const pages = (2 * mb * 2 ** 20) / 65536;
  const bytes = assembleWat(`(module (memory (export "mem") ${pages})
 (func (export "copy") (param $len i32) (memory.copy (local.get $len) (i32.const 0) (local.get $len))))`);
  const { instance: inst } = await WebAssembly.instantiate(bytes);
  const len = mb * 2 ** 20;
  new Uint8Array(inst.exports.mem.buffer).fill(1);  // touch every page first
  const rates = [];
  for (let s = 0; s < samples + 2; s++) {
    const t0 = clock();
    inst.exports.copy(len);
    if (s >= 2) rates.push(len / ((clock() - t0) / 1e3) / 1e9);
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)];
}
