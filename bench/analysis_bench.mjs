// analysis_bench.mjs: how long attentionFlow (Dinic max-flow per output/input pair), headScores and qkMap take at
// model-sized shapes (issue 27), in the single-threaded SIMD128 module and (flow, every output) the threaded one,
// where the same serial code runs slower. Layer: bench (public `attnscope` entry only; reports, never asserts time).
// Run: `node bench/analysis_bench.mjs [--simd true|false]` after a build (dist/): about a minute. Flow is timed on
// causal (GPT-2-like) and full (BERT-like) attention: causal weights let the search skip the positions that cannot
// reach an input (the core prunes to them), full weights do not.
import { createAttnScope } from 'attnscope';

const argv = process.argv.slice(2);
const simdArg = argv.includes('--simd') ? argv[argv.indexOf('--simd') + 1] : 'auto';
const simd = simdArg === 'true' ? true : simdArg === 'false' ? false : 'auto';
const as = await createAttnScope({ simd, threads: 1 });

// seeded attention weights: causal softmax rows of uniform logits times 4 (SplitMix-like LCG, plain JS)
let state = 12345;
const rand = () => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return state / 2147483648;
};
function layer(H, n, causal) {
  const w = new Float32Array(H * n * n);
  for (let r = 0; r < H * n; r++) {
    const last = causal ? r % n : n - 1;
    let s = 0;
    for (let j = 0; j <= last; j++) { w[r * n + j] = Math.exp(4 * rand()); s += w[r * n + j]; }
    for (let j = 0; j <= last; j++) w[r * n + j] /= s;
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
const causal = Array.from({ length: L }, () => layer(H, n, true));
const full = Array.from({ length: L }, () => layer(H, n, false));
const layers = causal;
const threaded = as.simd ? await createAttnScope({ simd: true, threads: 2 }) : null;
console.log(`attnscope ${as.version}, ${as.simd ? 'SIMD128' : 'scalar'} build, Node ${process.version}`);
console.log(`| what | shape | module | median ms |\n|---|---|---|---|`);
for (const [name, ls] of [['causal', causal], ['full', full]]) {
  const one = time(() => as.attentionFlow({ layers: ls, numHeads: H, n, output: n - 1 }));
  console.log(`| attentionFlow, ${name}, one output position (${n} max-flows) | ${L} layers x ${H} heads x ${n} tokens | single-threaded | ${one.ms.toFixed(1)} |`);
  for (const [t, inst] of [[1, as], [2, threaded]]) {
    if (!inst) continue;
    const every = time(() => inst.attentionFlow({ layers: ls, numHeads: H, n }), 1);
    console.log(`| attentionFlow, ${name}, every output position (${n * n} max-flows) | ${L} x ${H} x ${n} | ${t === 1 ? "single-threaded" : "threaded (threads: 2)"} | ${every.ms.toFixed(0)} |`);
  }
}
const { ids, period } = as.repeatedTokens({ vocabSize: 50257, length: n / 2, seed: 1 });  // n ids
const hs = time(() => as.headScores({ weights: layers, numHeads: H, n, ids, period }));
console.log(`| headScores (all four scores) | ${L} x ${H} x ${n} | single-threaded | ${hs.ms.toFixed(1)} |`);
for (const d of [64, 256]) {
  const q = new Float32Array(n * d).map(() => rand() * 2 - 1);
  const k = new Float32Array(n * d).map(() => rand() * 2 - 1);
  const m = time(() => as.qkMap({ q, k, nq: n, nk: n, d }));
  console.log(`| qkMap (Jacobi PCA, float64) | nq = nk = ${n}, d = ${d} | single-threaded | ${m.ms.toFixed(1)} |`);
}
