// "Looking inside" (issue 27) through the public API: headScores, repeatedTokens, attentionFlow and qkMap against the
// float64 numpy references of tests/fixtures/analysis (SVD, Edmonds-Karp, direct loops), an Edmonds-Karp written
// here on random layered graphs, hand-built heads, and the errors (each names the function and the argument).
// Runs against either build: ATTNSCOPE_SIMD=true|false.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assertClose, fixturesDir, loadAs, randomF32 } from './helpers.js';

const as = await loadAs();
const doc = JSON.parse(readFileSync(path.join(fixturesDir, 'analysis', 'analysis.json'), 'utf8'));
const cases = (fn) => doc.cases.filter((c) => c.function === fn);
const F = (a) => Float32Array.from(a);
const nums = (a) => a.map((x) => (x === null ? NaN : x));

test('fixture header', () => {
  assert.equal(doc.format, 'attnscope-fixture');
  assert.equal(doc.version, 1);
});

test('qkMap equals numpy SVD of the normalised joint set', () => {
  assert.equal(cases('qkMap').length, 4);
  for (const c of cases('qkMap')) {
    const a = c.args;
    const r = as.qkMap({ ...a, q: F(a.q), k: F(a.k) });
    const o = { atol: c.atol, rtol: c.rtol };
    assertClose(r.queries, c.expected.queries, { ...o, what: `${c.case} queries` });
    assertClose(r.keys, c.expected.keys, { ...o, what: `${c.case} keys` });
    assertClose(r.explainedVariance, c.expected.explainedVariance, { atol: 1e-6, rtol: 1e-5, what: `${c.case} explainedVariance` });
    assertClose(r.components, c.expected.components, { ...o, what: `${c.case} components` });
  }
});

test('attentionFlow equals Edmonds-Karp (numpy fixture)', () => {
  assert.equal(cases('attentionFlow').length, 5);
  for (const c of cases('attentionFlow')) {
    const r = as.attentionFlow({ ...c.args, layers: c.args.layers.map(F) });
    assertClose(r.flow, c.expected.flow, { atol: c.atol, rtol: c.rtol, what: c.case });
  }
});

// ---- an Edmonds-Karp of its own (dense capacities, BFS shortest augmenting paths) on random layered graphs

function edmondsKarp(capIn, s, t) {
  const cap = capIn.map((row) => row.slice());
  const N = cap.length;
  let total = 0;
  for (;;) {
    const parent = new Array(N).fill(-1);
    parent[s] = s;
    const queue = [s];
    while (queue.length && parent[t] < 0) {
      const u = queue.shift();
      for (let v = 0; v < N; v++) if (parent[v] < 0 && cap[u][v] > 1e-12) { parent[v] = u; queue.push(v); }
    }
    if (parent[t] < 0) return total;
    let f = Infinity;
    for (let v = t; v !== s; v = parent[v]) f = Math.min(f, cap[parent[v]][v]);
    for (let v = t; v !== s; v = parent[v]) { cap[parent[v]][v] -= f; cap[v][parent[v]] += f; }
    total += f;
  }
}

function randomLayers(L, H, n, seed, causal) {
  const out = [];
  for (let l = 0; l < L; l++) {
    const x = randomF32(H * n * n, seed + l, 3);
    for (let r = 0; r < H * n; r++) {
      const i = r % n;
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const v = causal && j > i ? 0 : Math.exp(x[r * n + j]);
        x[r * n + j] = v;
        sum += v;
      }
      for (let j = 0; j < n; j++) x[r * n + j] /= sum;
    }
    out.push(x);
  }
  return out;
}

test('attentionFlow equals a JS Edmonds-Karp on random layered graphs', () => {
  let pairs = 0;
  for (const [L, H, n, causal, seed] of [[3, 2, 7, false, 11], [5, 3, 6, true, 23], [2, 4, 9, false, 37]]) {
    const layers = randomLayers(L, H, n, seed, causal);
    const N = (L + 1) * n;
    const cap = Array.from({ length: N }, () => new Array(N).fill(0));
    for (let l = 0; l < L; l++) {
      for (let i = 0; i < n; i++) {
        const row = [];
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let h = 0; h < H; h++) s += layers[l][(h * n + i) * n + j];
          row.push(s / H + (i === j ? 1 : 0));
        }
        const sum = row.reduce((p, x) => p + x, 0);
        for (let j = 0; j < n; j++) cap[(l + 1) * n + i][l * n + j] = row[j] / sum;
      }
    }
    const { flow } = as.attentionFlow({ layers, numHeads: H, n });
    assert.equal(flow.length, n * n);
    const want = [];
    for (let o = 0; o < n; o++) for (let v = 0; v < n; v++) want.push(edmondsKarp(cap, L * n + o, v));
    assertClose(flow, want, { atol: 1e-5, rtol: 1e-5, what: `L${L} H${H} n${n}` });
    const one = as.attentionFlow({ layers, numHeads: H, n, output: n - 1 }).flow;
    assertClose(one, want.slice((n - 1) * n), { atol: 1e-5, rtol: 1e-5, what: 'output n-1' });
    pairs += n * n;
  }
  assert.equal(pairs, 49 + 36 + 81);
});

test('headScores equals direct loops (numpy fixture); one layer or a list of layers', () => {
  assert.equal(cases('headScores').length, 3);
  for (const c of cases('headScores')) {
    const r = as.headScores({ ...c.args, weights: c.args.weights.map(F) });
    assert.equal(r.numLayers, c.args.weights.length);
    assert.equal(r.numHeads, c.args.numHeads);
    const o = { atol: c.atol, rtol: c.rtol };
    for (const key of ['previousToken', 'sinkShare', 'induction']) {
      if (c.expected[key] === undefined) assert.equal(r[key], undefined, `${c.case} ${key}`);
      else assertClose(r[key], c.expected[key], { ...o, what: `${c.case} ${key}` });
    }
    const dup = nums(c.expected.duplicateToken);
    dup.forEach((x, i) => {
      if (Number.isNaN(x)) assert.ok(Number.isNaN(r.duplicateToken[i]), `${c.case} duplicateToken[${i}] NaN`);
      else assert.ok(Math.abs(r.duplicateToken[i] - x) <= c.atol + c.rtol * Math.abs(x), `${c.case} duplicateToken[${i}]`);
    });
    const H = c.args.numHeads;
    const one = as.headScores({ weights: F(c.args.weights[0]), numHeads: H, n: c.args.n });
    assert.equal(one.numLayers, 1);
    assertClose(one.previousToken, c.expected.previousToken.slice(0, H), { ...o, what: `${c.case} one layer` });
    assert.equal(one.duplicateToken, undefined);
  }
});

test('headScores: previous-token diagonal = 1, uniform = 1/n, induction stripe >= 0.9', () => {
  const T = 6;
  const { ids, period } = as.repeatedTokens({ vocabSize: 500, length: T, seed: 3, bos: 0 });
  const n = ids.length;
  assert.equal(n, 2 * T + 1);
  assert.equal(period, T);
  const w = new Float32Array(3 * n * n);
  const set = (h, i, j, v) => { w[(h * n + i) * n + j] = v; };
  set(0, 0, 0, 1);
  for (let i = 1; i < n; i++) set(0, i, i - 1, 1);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) set(1, i, j, 1 / n);
  for (let i = 0; i < n - T; i++) set(2, i, 0, 1);
  for (let i = n - T; i < n; i++) { set(2, i, 0, 0.08); set(2, i, i - T + 1, 0.92); }
  const s = as.headScores({ weights: w, numHeads: 3, n, ids, period });
  assert.equal(s.previousToken[0], 1);
  assert.ok(Math.abs(s.previousToken[1] - 1 / n) < 1e-7, `uniform: ${s.previousToken[1]}`);
  assert.ok(s.induction[2] >= 0.9, `induction ${s.induction[2]}`);
  assert.ok(s.induction[0] === 0 && s.induction[1] < 0.1);
});

test('repeatedTokens: deterministic, [bos] + R + R, in range', () => {
  const a = as.repeatedTokens({ vocabSize: 50257, length: 32, seed: 1234 });
  const b = as.repeatedTokens({ vocabSize: 50257, length: 32, seed: 1234 });
  assert.deepEqual(a, b);
  assert.ok(a.ids instanceof Int32Array);
  assert.equal(a.ids.length, 64);
  for (let t = 0; t < 32; t++) {
    assert.equal(a.ids[t], a.ids[t + 32]);
    assert.ok(a.ids[t] >= 0 && a.ids[t] < 50257);
  }
  assert.notDeepEqual(as.repeatedTokens({ vocabSize: 50257, length: 32, seed: 1235 }).ids, a.ids);
});

const ERRORS = [
  [() => as.headScores({ weights: new Float32Array(8), numHeads: 2, n: 3 }), RangeError,
    'headScores: weights must have length 18 (numHeads*n*n = 2*3*3), got 8'],
  [() => as.headScores({ weights: [new Float32Array(18), new Float32Array(9)], numHeads: 2, n: 3 }), RangeError,
    'headScores: weights[1] must have length 18 (numHeads*n*n = 2*3*3), got 9'],
  [() => as.headScores({ weights: new Float32Array(18), numHeads: 2, n: 3, ids: [1, 2] }), RangeError,
    'headScores: ids must have length 3 (n), got 2'],
  [() => as.headScores({ weights: new Float32Array(18), numHeads: 2, n: 3, period: 2 }), RangeError,
    'headScores: period (2) must be at most n/2 (n = 3): the input is [BOS?] + R + R with R of length period'],
  [() => as.headScores({ weights: new Float32Array(18).fill(NaN), numHeads: 2, n: 3 }), RangeError,
    'headScores: weights[0] (NaN) must be finite'],
  [() => as.headScores({ weights: new Float32Array(18), numHeads: 2, n: 3, foo: 1 }), TypeError,
    "headScores: unknown option 'foo'"],
  [() => as.attentionFlow({ layers: new Float32Array(18), numHeads: 2, n: 3 }), TypeError,
    'attentionFlow: layers must be an array of Float32Array (one [H, n, n] per layer), got Float32Array'],
  [() => as.attentionFlow({ layers: [], numHeads: 2, n: 3 }), RangeError, 'attentionFlow: layers must not be empty'],
  [() => as.attentionFlow({ layers: [new Float32Array(18)], numHeads: 2, n: 3, output: 3 }), RangeError,
    'attentionFlow: output (3) must be a position from 0 to n-1 = 2'],
  [() => as.repeatedTokens({ vocabSize: 10, length: 4, seed: 1, bos: 10 }), RangeError,
    'repeatedTokens: bos (10) must be less than vocabSize (10)'],
  [() => as.repeatedTokens({ vocabSize: 10, length: 0, seed: 1 }), RangeError,
    'repeatedTokens: length (0) must be a positive integer'],
  [() => as.repeatedTokens({ vocabSize: 10, length: 4 }), TypeError, 'repeatedTokens: seed is required'],
  [() => as.qkMap({ q: new Float32Array(4), k: new Float32Array(4), nq: 4, nk: 4, d: 1 }), RangeError,
    'qkMap: d (1) must be at least 2'],
  [() => as.qkMap({ q: new Float32Array(5), k: new Float32Array(4), nq: 2, nk: 2, d: 2 }), RangeError,
    'qkMap: q must have length 4 (nq*d = 2*2), got 5'],
  [() => as.qkMap({ q: F([0, 0, 0, Infinity]), k: new Float32Array(4), nq: 2, nk: 2, d: 2 }), RangeError,
    'qkMap: q[3] (Infinity) must be finite'],
];

test('errors name the function and the argument; the module keeps working', () => {
  for (const [call, Kind, message] of ERRORS) {
    assert.throws(call, (e) => e instanceof Kind && e.message === message, message);
  }
  const s = as.headScores({ weights: F([1, 0, 1, 0]), numHeads: 1, n: 2 });
  assert.equal(s.previousToken[0], 1);
  assert.equal(s.sinkShare[0], 1);
});

test('attentionFlow: a two-token, two-layer example worked by hand, where flow and rollout differ', () => {
  // each layer, both heads: A = [[1, 0], [0.5, 0.5]]; with the residual, rows renormalised: M = [[1, 0], [0.25, 0.75]].
  // Graph (layer, position): (l+1, 0) -> (l, 0) capacity 1; (l+1, 1) -> (l, 0) 0.25; (l+1, 1) -> (l, 1) 0.75.
  // From (2, 1) to (0, 0): via (1, 0) min(0.25, 1) = 0.25, via (1, 1) min(0.75, 0.25) = 0.25, total 0.5.
  // From (2, 1) to (0, 1): only via (1, 1): min(0.75, 0.75) = 0.75. From (2, 0): 1 to (0, 0), 0 to (0, 1).
  // Rollout's row 1 is M·M's: [0.25 + 0.75·0.25, 0.75·0.75] = [0.4375, 0.5625]; flow's, normalised: [0.4, 0.6].
  const layer = F([1, 0, 0.5, 0.5, 1, 0, 0.5, 0.5]); // [H = 2, 2, 2]
  const { flow } = as.attentionFlow({ layers: [layer, layer], numHeads: 2, n: 2 });
  assertClose(flow, [1, 0, 0.5, 0.75], { atol: 1e-7, rtol: 0, what: 'hand-worked flow' });
  assertClose(as.attentionFlow({ layers: [layer, layer], numHeads: 2, n: 2, output: 1 }).flow, [0.5, 0.75], { atol: 1e-7, rtol: 0, what: 'output 1' });
});
