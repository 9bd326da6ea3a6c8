// gemm-ukernel.test.js: the relaxed-SIMD (fused multiply-add) GEMM micro-kernel, dist/attnscope.relaxed.wasm, called
// directly against its contract (src/kernels/kernels.h GemmUkernel4x8Fn; kernels-relaxed/): for each of `panels` 4x8
// tiles side by side, rows r < mr of tile t + 8q become (accumulate ? t : bias + 8q | 0) + Σ_p a[4p + r]·w[8kc·q + 8p
// + j], a packed [kc][4] (rows past mr repeating row mr − 1, as pack_a packs them), w packed [panels][kc][8]. Shapes
// at the edges: mr = 1..4, kc = 1, 7, 256, 1500, panels = 1..3, bias or not, accumulate or not, a row stride wider
// than the tiles. Checked against float64 within 1e-6 + 2e-6·√kc·Σ|a·w| (one rounding per multiply-add or two), and
// every float the contract does not name (rows ≥ mr, the columns past the panels) left as it was. Runs in a child
// `node --experimental-wasm-relaxed-simd` (plain Node 20 rejects the module); the SIMD128 kernel and the whole GEMMs
// at awkward shapes are checked by tests/cpp/gemm_tiles_test.cpp, the kernel inside MHA and models by relaxed.test.js.
import test from 'node:test';
import assert from 'node:assert/strict';
import { runRelaxedChild } from './helpers.js';

const scalarOnly = process.env.ATTNSCOPE_SIMD === 'false';

const CHILD = `
import { readFileSync } from 'node:fs';
const bytes = readFileSync('./dist/attnscope.relaxed.wasm');
const memory = new WebAssembly.Memory({ initial: 64 });
const { instance } = await WebAssembly.instantiate(bytes, { env: { memory } });
const kernel = instance.exports.f32_gemm_ukernel_4x8__wasmrelaxedsimd;
const f32 = new Float32Array(memory.buffer);
let s = 12345;
const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return ((s >>> 8) / 16777216) * 2 - 1; };
const SENT = -7777;
const results = [];
for (const mr of [1, 2, 3, 4]) for (const kc of [1, 7, 256, 1500]) for (const panels of [1, 2, 3]) for (const mode of ['zero', 'bias', 'accumulate']) {
  // float offsets in the memory: a, w, bias, t (each 64-byte aligned)
  const A = 16, W = A + 4 * kc + 16, B = W + 8 * kc * panels + 16, T = B + 8 * panels + 16;
  const ldt = 8 * panels + 5;
  const a = [];
  for (let p = 0; p < kc; p++) { const row = [rnd(), rnd(), rnd(), rnd()]; for (let r = mr; r < 4; r++) row[r] = row[mr - 1]; a.push(...row); }
  f32.set(a, A);
  for (let i = 0; i < 8 * kc * panels; i++) f32[W + i] = rnd();
  for (let i = 0; i < 8 * panels; i++) f32[B + i] = rnd();
  const t0 = new Float32Array(4 * ldt).fill(SENT);
  if (mode === 'accumulate') for (let r = 0; r < mr; r++) for (let j = 0; j < 8 * panels; j++) t0[r * ldt + j] = rnd();
  f32.set(t0, T);
  kernel(mr, kc, panels, 4 * A, 4 * W, mode === 'bias' ? 4 * B : 0, mode === 'accumulate' ? 1 : 0, 4 * T, ldt);
  let worst = 0, untouched = true;
  for (let r = 0; r < 4; r++) for (let j = 0; j < ldt; j++) {
    const got = f32[T + r * ldt + j];
    if (r >= mr || j >= 8 * panels) { if (got !== t0[r * ldt + j]) untouched = false; continue; }
    const q = j >> 3, jj = j & 7;
    let sum = mode === 'accumulate' ? t0[r * ldt + j] : mode === 'bias' ? f32[B + j] : 0, mag = 0;
    for (let p = 0; p < kc; p++) { const prod = a[4 * p + r] * f32[W + 8 * kc * q + 8 * p + jj]; sum += prod; mag += Math.abs(prod); }
    const tol = 1e-6 + 2e-6 * Math.sqrt(kc) * mag;
    worst = Math.max(worst, Math.abs(got - sum) / tol);
  }
  results.push({ mr, kc, panels, mode, worst, untouched });
}
process.stdout.write(JSON.stringify(results));
`;

test('relaxed-SIMD GEMM micro-kernel: its contract at awkward tiles (mr 1..4, kc 1..1500, 1..3 panels) against float64',
  { skip: scalarOnly && 'the fused multiply-add kernel is for the SIMD128 build' }, () => {
    const results = runRelaxedChild(CHILD);
    assert.equal(results.length, 4 * 4 * 3 * 3);
    for (const r of results) {
      const what = `mr ${r.mr} kc ${r.kc} panels ${r.panels} ${r.mode}`;
      assert.ok(r.worst <= 1, `${what}: worst error / tolerance ${r.worst}`);
      assert.ok(r.untouched, `${what}: wrote outside rows < mr and the panels' columns`);
    }
  });
