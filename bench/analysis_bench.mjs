// analysis_bench.mjs: how long attentionFlow (Dinic max-flow per output/input pair), headScores and qkMap take at
// model-sized shapes (issue 27). Layer: bench (public `attnscope` entry only; reports, never asserts time).
// Run: `node bench/analysis_bench.mjs [--all] [--simd true|false]` after a build (dist/). The all-outputs flow at
// 12 x 128 is n^2 = 16384 max-flows: minutes, so it runs only with --all; without it, the time is estimated from
// 16 output rows.
import { createAttnScope } from 'attnscope';

const argv = process.argv.slice(2);
const all = argv.includes('--all');
const simdArg = argv.includes('--simd') ? argv[argv.indexOf('--simd') + 1] : 'auto';
const simd = simdArg === 'true' ? true : simdArg === 'false' ? false : 'auto';
const as = await createAttnScope({ simd, threads: 1 });

// seeded attention weights: causal softmax rows of uniform logits times 4 (SplitMix-like LCG, plain JS)
let state = 12345;
const rand = () => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return state / 2147483648;
};
function layer(H, n) {
  const w = new Float32Array(H * n * n);
  for (let r = 0; r < H * n; r++) {
    const i = r % n;
    let s = 0;
    for (let j = 0; j <= i; j++) { w[r * n + j] = Math.exp(4 * rand()); s += w[r * n + j]; }
    for (let j = 0; j <= i; j++) w[r * n + j] /= s;
  }
  return w;
}

function time(fn, reps = 3) {
  const times = [];
  let out;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    out = fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], out };
}

const L = 12, H = 12, n = 128;
const layers = Array.from({ length: L }, () => layer(H, n));
console.log(`attnscope ${as.version}, ${as.simd ? 'SIMD128' : 'scalar'} build, 1 thread, Node ${process.version}`);
console.log(`| what | shape | median ms |\n|---|---|---|`);
const one = time(() => as.attentionFlow({ layers, numHeads: H, n, output: n - 1 }));
console.log(`| attentionFlow, one output position (${n} max-flows) | ${L} layers x ${H} heads x ${n} tokens | ${one.ms.toFixed(1)} |`);
if (all) {
  const every = time(() => as.attentionFlow({ layers, numHeads: H, n }), 1);
  console.log(`| attentionFlow, every output position (${n * n} max-flows) | ${L} x ${H} x ${n} | ${every.ms.toFixed(0)} |`);
} else {
  // 16 rows spread over the positions (later rows see more keys in a causal model, so spread, not the first 16)
  const rows = Array.from({ length: 16 }, (_, k) => Math.floor(((k + 0.5) * n) / 16));
  const t0 = performance.now();
  for (const o of rows) as.attentionFlow({ layers, numHeads: H, n, output: o });
  const per = (performance.now() - t0) / rows.length;
  console.log(`| attentionFlow, every output position (estimated: ${n} x the mean of 16 rows, ${per.toFixed(1)} ms) | ${L} x ${H} x ${n} | ~${(per * n).toFixed(0)} |`);
}
const { ids, period } = as.repeatedTokens({ vocabSize: 50257, length: n / 2, seed: 1 });  // n ids
const hs = time(() => as.headScores({ weights: layers, numHeads: H, n, ids, period }));
console.log(`| headScores (all four scores) | ${L} x ${H} x ${n} | ${hs.ms.toFixed(1)} |`);
for (const d of [64, 256]) {
  const q = new Float32Array(n * d).map(() => rand() * 2 - 1);
  const k = new Float32Array(n * d).map(() => rand() * 2 - 1);
  const m = time(() => as.qkMap({ q, k, nq: n, nk: n, d }));
  console.log(`| qkMap (Jacobi PCA, float64) | nq = nk = ${n}, d = ${d} | ${m.ms.toFixed(1)} |`);
}
