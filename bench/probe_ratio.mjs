// probe_ratio.mjs: issue 30's ceiling check in one short run — one-thread multi-head self-attention GFLOP/s (the
// prepared module, createMultiHeadAttention().forward, at the four shapes of bench/attention_bench.mjs) divided by
// this machine's SIMD128 mul+add probe, and the fused (relaxed-SIMD) kernel's by the relaxed_madd probe
// (bench/probes.mjs), probes taken before every shape. Layer: bench (never asserts time). Timings are process CPU
// time (process.cpuUsage; one thread), so a loaded shared machine still gives comparable ratios; wall-clock medians
// are printed beside them. Run: `node --experimental-wasm-relaxed-simd bench/probe_ratio.mjs` (attention_bench.mjs
// reports the same ratios from its own wall-clock medians).
import os from 'node:os';
import { createAttnScope } from 'attnscope';
import { simdPeak } from './probes.mjs';

const SHAPES = [[64, 256, 4], [128, 512, 8], [512, 768, 12], [1024, 768, 12]];
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function rand(n, seed, scale = 1) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    a[i] = ((s >>> 8) / 16777216 - 0.5) * 2 * scale;
  }
  return a;
}

function timeMha(as, n, d, h) {
  const s = 1 / Math.sqrt(d);
  const w = { wq: rand(d * d, 1, s), wk: rand(d * d, 2, s), wv: rand(d * d, 3, s), wo: rand(d * d, 4, s),
    bq: rand(d, 5, 0.1), bk: rand(d, 6, 0.1), bv: rand(d, 7, 0.1), bo: rand(d, 8, 0.1) };
  const mha = as.createMultiHeadAttention({ dModel: d, numHeads: h, ...w });
  const args = { query: rand(n * d, 9), nq: n, needWeights: false };
  try {
    const reps = n >= 512 ? 5 : 15;
    mha.forward(args);
    const cpu = [], wall = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now(), c0 = cpuMs();
      mha.forward(args);
      cpu.push(cpuMs() - c0);
      wall.push(performance.now() - t0);
    }
    return { cpu: median(cpu), wall: median(wall) };
  } finally {
    mha.delete();
  }
}

const simd = await createAttnScope({ simd: true, threads: 1, relaxedSimd: false });
let fma = null;
try {
  fma = await createAttnScope({ simd: true, threads: 1, relaxedSimd: true });
} catch (e) {
  console.error(`fused kernel not measured: ${e.message} (run node with --experimental-wasm-relaxed-simd)`);
}
const lines = [`## One-thread MHA ÷ SIMD128 probes (${new Date().toISOString()}, ${os.cpus()[0].model}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`, '',
  '| (n, d, h) | mul+add probe GFLOP/s | SIMD MHA GFLOP/s | ratio (≥ 0.90) | relaxed probe | FMA MHA GFLOP/s | ratio (≥ 0.85) | SIMD wall ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|'];
for (const [n, d, h] of SHAPES) {
  const flop = 8 * n * d * d + 4 * n * n * d;
  const pm = await simdPeak('muladd', 9, cpuMs);
  const pr = fma ? await simdPeak('relaxed', 9, cpuMs) : null;
  const a = timeMha(simd, n, d, h);
  const b = fma ? timeMha(fma, n, d, h) : null;
  const ga = flop / (a.cpu / 1e3) / 1e9, gb = b ? flop / (b.cpu / 1e3) / 1e9 : null;
  const f = (x) => (x == null ? '—' : x.toFixed(1));
  lines.push(`| ${n}, ${d}, ${h} | ${f(pm)} | ${f(ga)} | ${(ga / pm).toFixed(2)} | ${f(pr)} | ${f(gb)} | ${gb && pr ? (gb / pr).toFixed(2) : '—'} | ${a.wall.toFixed(1)} |`);
  console.error(lines.at(-1));
}
console.log(lines.join('\n'));
process.exit(0);
