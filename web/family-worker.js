// The attention-family worker (layer: web): additive (Bahdanau) attention and Nadaraya–Watson kernel
// regression for the page's live views, off the main thread and apart from the model worker (./worker.js),
// so dragging the bandwidth slider never waits for a model run. Imports only ../bindings/js/index.js and ./rng.js.
// Messages in: { id, kind: 'additive' | 'regression', params }. Out: { type: 'ready', simd } once, then
// { id, kind, ok: true, result, ms } or { id, kind, ok: false, error: { name, message } }.
// The seeded inputs are made here (./rng.js's mulberry32 + Box–Muller: data, not attention math); every
// attention number comes from the module.
import { createAttnScope } from '../bindings/js/index.js';
import { mulberry32 } from './rng.js';

let ready = null;
function load() {
  if (!ready) {
    // relaxedSimd false: the page shows bit for bit what the attnscope package computes in Node (where relaxed
    // SIMD needs a flag), so numbers copied from it, and its exports, reproduce exactly
    ready = createAttnScope({ relaxedSimd: false }).then((as) => {
      self.postMessage({ type: 'ready', simd: as.simd, version: as.version });
      return as;
    });
    ready.catch(() => { ready = null; });
  }
  return ready;
}

const fill = (rand, len, lo = -1, hi = 1) => Float32Array.from({ length: len }, () => lo + (hi - lo) * rand());

/**
 * Bahdanau attention on seeded inputs: { nq, nk, hidden, validLen, seed } with dq = 2, dk = 3, dv = 2.
 * The tanh features are read from the module too: with wv = e_h (the h-th unit vector) the score is
 * exactly tanh(q_i Wq + k_j Wk)_h, so `hidden` extra calls give the [nq, nk, hidden] features.
 */
function additive(as, p) {
  const dq = 2;
  const dk = 3;
  const dv = 2;
  const { nq, nk, hidden, validLen } = p;
  const rand = mulberry32(p.seed);
  const queries = fill(rand, nq * dq);
  const keys = fill(rand, nk * dk);
  const values = fill(rand, nk * dv);
  const wq = fill(rand, dq * hidden);
  const wk = fill(rand, dk * hidden);
  const wv = fill(rand, hidden);
  const args = { queries, keys, values, nq, nk, dq, dk, dv, hidden, wq, wk, wv, validLen };
  const r = as.additiveAttention(args);
  const features = new Float32Array(nq * nk * hidden);
  const unit = new Float32Array(hidden);
  for (let hh = 0; hh < hidden; hh++) {
    unit.fill(0);
    unit[hh] = 1;
    const f = as.additiveAttention({ ...args, wv: unit, validLen: nk });
    for (let c = 0; c < nq * nk; c++) features[c * hidden + hh] = f.scores[c];
  }
  return { ...args, ...r, features };
}

/**
 * Nadaraya–Watson regression on d2l's toy data: 50 sorted x ~ U(0, 5), y = 2 sin x + x^0.8 + ε,
 * ε ~ N(0, 0.5²) (seeded); queries x = 0, 0.1, …, 4.9 with the noise-free truth; kernel bandwidth w.
 */
let data = null;
function trainingData(seed) {
  if (data?.seed === seed) return data;
  const rand = mulberry32(seed);
  const f = (x) => 2 * Math.sin(x) + x ** 0.8;
  const xTrain = Float32Array.from({ length: 50 }, () => 5 * rand()).sort();
  const noise = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const yTrain = xTrain.map((x) => f(x) + 0.5 * noise());
  const xQuery = Float32Array.from({ length: 50 }, (_, i) => i / 10);
  const yTruth = xQuery.map(f);
  data = { seed, xTrain, yTrain, xQuery, yTruth };
  return data;
}

function regression(as, p) {
  const { xTrain, yTrain, xQuery, yTruth } = trainingData(p.seed);
  const r = as.kernelRegression({ xTrain, yTrain, xQuery, w: p.w });
  return { w: p.w, seed: p.seed, xTrain, yTrain, xQuery, yTruth, weights: r.weights, yPred: r.yPred };
}

self.onmessage = async (e) => {
  const { id, kind, params } = e.data;
  try {
    const as = await load();
    const t0 = performance.now();
    const result = kind === 'additive' ? additive(as, params) : regression(as, params);
    self.postMessage({ id, kind, ok: true, result, ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id, kind, ok: false, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
};
load();
