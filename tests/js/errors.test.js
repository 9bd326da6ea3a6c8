// Bad arguments: each throws the documented error class and message naming the function and the
// argument (API.md "Conventions"), and the module keeps computing correctly afterwards (sql.js's
// "previous errors should not have spoiled" check). A loop of failing calls must not grow the heap.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';

const as = await loadAs();
const f32 = (n, v = 0.5) => new Float32Array(n).fill(v);

// A valid call whose numbers are checked after every error.
function stillWorks() {
  const y = as.softmax({ x: Float32Array.from([0, Math.log(3)]), rows: 1, cols: 2 });
  assert.ok(Math.abs(y[0] - 0.25) < 1e-6 && Math.abs(y[1] - 0.75) < 1e-6, `module spoiled: ${y}`);
}

function mha(over = {}) {
  const d = 4;
  return { query: f32(3 * d), nq: 3, dModel: d, numHeads: 2, wq: f32(d * d), wk: f32(d * d), wv: f32(d * d), wo: f32(d * d), ...over };
}

const CASES = [
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ dModel: 10, numHeads: 3, query: f32(30), wq: f32(100), wk: f32(100), wv: f32(100), wo: f32(100) })),
    RangeError, 'multiHeadAttention: dModel (10) must be divisible by numHeads (3)'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: f32(4), k: f32(4), nq: 2, nk: 2, dk: 2, dv: 2 }),
    TypeError, 'scaledDotProductAttention: v is required'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: f32(5), k: f32(4), v: f32(4), nq: 2, nk: 2, dk: 2, dv: 2 }),
    RangeError, 'scaledDotProductAttention: q must have length 4 (nq*dk = 2*2), got 5'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: 'abc', k: f32(4), v: f32(4), nq: 2, nk: 2, dk: 2, dv: 2 }),
    TypeError, 'scaledDotProductAttention: q must be a Float32Array, got string'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: f32(4), k: f32(4), v: f32(4), nq: 2, nk: 2, dk: 2, dv: 2, mask: new Uint8Array(3) }),
    RangeError, 'scaledDotProductAttention: mask must have length 4 (nq*nk = 2*2), got 3'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: Float32Array.from([1, NaN, 0, 0]), k: f32(4), v: f32(4), nq: 2, nk: 2, dk: 2, dv: 2 }),
    RangeError, 'scaledDotProductAttention: q[1] (NaN) must be finite'],
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: f32(4), k: f32(4), v: f32(4), nq: 2, nk: 2, dk: 2, dv: 2, scale: Infinity }),
    RangeError, 'scaledDotProductAttention: scale (Infinity) must be a finite number'],
  // finite inputs whose product overflows float32 (found by fuzz/fuzz_attention): an error, never NaN
  ['scaledDotProductAttention', () => as.scaledDotProductAttention({ q: [3e38], k: [3e38], v: [1], nq: 1, nk: 1, dk: 1, dv: 1 }),
    RangeError, 'scaledDotProductAttention: scores is not finite: an intermediate value overflowed float32 (inputs too large)'],
  ['softmax', () => as.softmax({ x: f32(6), rows: 2.5, cols: 3 }), RangeError, 'softmax: rows (2.5) must be an integer'],
  // a built-in object is not an argument object: a Map's entries are not its keys, so it would read as {}
  ['softmax', () => as.softmax(new Map([['x', f32(6)], ['rows', 2], ['cols', 3]])), TypeError, 'softmax: expected one argument object, got Map'],
  ['softmax', () => as.softmax(f32(6)), TypeError, 'softmax: expected one argument object, got Float32Array'],
  ['softmax', () => as.softmax({ x: f32(6), rows: -2, cols: 3 }), RangeError, 'softmax: rows (-2) must be a positive integer'],
  ['softmax', () => as.softmax({ x: f32(6), rows: '2', cols: 3 }), TypeError, 'softmax: rows must be a number, got string'],
  ['softmax', () => as.softmax({ x: f32(6), rows: 2, cols: 3, axis: 1 }), TypeError, "softmax: unknown option 'axis'"],
  ['softmax', () => as.softmax({ x: Float32Array.from([1, Infinity]), rows: 1, cols: 2 }), RangeError, 'softmax: x[1] (Infinity) must be finite or -Infinity'],
  ['softmax', () => as.softmax(), TypeError, 'softmax: expected one argument object, got undefined'],
  ['layerNorm', () => as.layerNorm({ x: f32(6), n: 2, d: 3, gamma: f32(2) }), RangeError, 'layerNorm: gamma must have length 3 (d = 3), got 2'],
  ['layerNorm', () => as.layerNorm({ x: f32(6), n: 2, d: 3, eps: 0 }), RangeError, 'layerNorm: eps (0) must be a positive finite number'],
  ['positionalEncoding', () => as.positionalEncoding({ n: 0, d: 4 }), RangeError, 'positionalEncoding: n (0) must be a positive integer'],
  ['positionalEncoding', () => as.positionalEncoding({ n: 4 }), TypeError, 'positionalEncoding: d is required'],
  ['simpleSelfAttention', () => as.simpleSelfAttention({ x: f32(5), n: 2, d: 3 }), RangeError, 'simpleSelfAttention: x must have length 6 (n*d = 2*3), got 5'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ wo: undefined })), TypeError, 'multiHeadAttention: wo is required'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ bq: f32(3) })), RangeError, 'multiHeadAttention: bq must have length 4 (dModel = 4), got 3'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ needWeights: 1 })), TypeError, 'multiHeadAttention: needWeights must be a boolean, got number'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ numHeads: 0 })), RangeError, 'multiHeadAttention: numHeads (0) must be a positive integer'],
  // finiteness of tensors is the core's check (validate.js: one policy), vectorized
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ wk: Float32Array.from({ length: 16 }, (_, i) => (i === 3 ? NaN : 0)) })),
    RangeError, 'multiHeadAttention: wk[3] (NaN) must be finite'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ query: [0, 0, 0, 0, 0, -Infinity, 0, 0, 0, 0, 0, 0] })),
    RangeError, 'multiHeadAttention: query[5] (-Infinity) must be finite'],
  ['multiHeadAttention', () => as.multiHeadAttention(mha({ key: f32(12), value: Float32Array.from([1, 2, 1e39, 0, 0, 0, 0, 0, 0, 0, 0, 0]) })),
    RangeError, 'multiHeadAttention: value[2] (Infinity) must be finite'],
  ['softmax', () => as.softmax({ x: Float32Array.from([-Infinity, NaN]), rows: 1, cols: 2 }), RangeError, 'softmax: x[1] (NaN) must be finite or -Infinity'],
  ['additiveAttention', () => as.additiveAttention({ queries: f32(2), keys: f32(4), values: f32(4), nq: 1, nk: 2, dq: 2, dk: 2, dv: 2, hidden: 3, wq: f32(6), wk: f32(6), wv: f32(3), validLen: 3 }),
    RangeError, 'additiveAttention: validLen (3) must be an integer from 0 to nk (2)'],
  ['kernelRegression', () => as.kernelRegression({ xTrain: f32(3), yTrain: f32(2), xQuery: f32(1) }),
    RangeError, 'kernelRegression: yTrain must have length 3 (nTrain = 3, the length of xTrain), got 2'],
  ['kernelRegression', () => as.kernelRegression({ xTrain: f32(0), yTrain: f32(0), xQuery: f32(1) }),
    RangeError, 'kernelRegression: xTrain must not be empty'],
  // One policy (validate.js): JS checks types and lengths, the core checks values. A value rule is
  // reported by the core even where a JS length check could have fired first on a non-positive dimension.
  ['additiveAttention', () => as.additiveAttention({ queries: f32(2), keys: f32(4), values: f32(4), nq: 1, nk: 2, dq: 2, dk: 2, dv: 2, hidden: 3, wq: f32(6), wk: f32(6), wv: f32(3), validLen: -1 }),
    RangeError, 'additiveAttention: validLen (-1) must be an integer from 0 to nk (2)'],
  ['layerNorm', () => as.layerNorm({ x: f32(6), n: -2, d: -3 }), RangeError, 'layerNorm: n (-2) must be a positive integer'],
  ['layerNorm', () => as.layerNorm({ x: Float32Array.from([0, 1, Infinity, 0, 0, 0]), n: 2, d: 3 }),
    RangeError, 'layerNorm: x[2] (Infinity) must be finite'],
  ['positionalEncoding', () => as.positionalEncoding({ n: 2, d: 4, base: -1 }), RangeError, 'positionalEncoding: base (-1) must be a positive finite number'],
  ['kernelRegression', () => as.kernelRegression({ xTrain: f32(2), yTrain: f32(2), xQuery: f32(1), w: NaN }),
    RangeError, 'kernelRegression: w (NaN) must be a finite number'],
  ['transformerEncoderLayer', () => as.transformerEncoderLayer({ x: f32(8), n: 2, dModel: 4, numHeads: 2, dFF: 8, params: {} }),
    TypeError, 'transformerEncoderLayer: params.wq is required'],
  ['transformerEncoderLayer', () => as.transformerEncoderLayer({ x: f32(8), n: 2, dModel: 4, numHeads: 2, dFF: 8, params: {}, activation: 'tanh' }),
    RangeError, "transformerEncoderLayer: activation (\"tanh\") must be one of 'relu', 'gelu'"],
  ['tokenize', () => as.tokenize(42), TypeError, 'tokenize: text must be a string, got number'],
  ['tokenize', () => as.tokenize('hi', { kind: 'byte' }), RangeError, "tokenize: kind (\"byte\") must be one of 'word', 'char'"],
  ['createBpeTokenizer', () => as.createBpeTokenizer({ merges: '' }), TypeError, 'createBpeTokenizer: vocab is required'],
];

for (const [fn, call, Kind, message] of CASES) {
  test(`${fn}: rejects with "${message}" and keeps working`, () => {
    assert.throws(call, (e) => {
      assert.equal(e.constructor, Kind, `expected ${Kind.name}, got ${e.constructor.name}: ${e.message}`);
      assert.equal(e.message, message);
      return true;
    });
    stillWorks();
  });
}

test('createAttnScope: rejects unknown options and bad simd values', async () => {
  const { createAttnScope } = await import('attnscope');
  await assert.rejects(createAttnScope({ colour: 1 }), { name: 'TypeError', message: "createAttnScope: unknown option 'colour'" });
  await assert.rejects(createAttnScope({ simd: 'yes' }), { name: 'TypeError', message: "createAttnScope: simd (yes) must be 'auto', true or false" });
});

test('errors: a loop of failing calls does not grow the wasm heap', () => {
  const big = f32(64 * 64);
  // Warm up, then measure: errors found in C++ (after the arrays were copied in) must free everything.
  const bad = () => as.multiHeadAttention(mha({ query: big, nq: 1024, numHeads: 3 }));
  assert.throws(bad);
  const before = as.memoryStats();
  for (let i = 0; i < 2000; i++) {
    assert.throws(bad);
    assert.throws(() => as.softmax({ x: Float32Array.from([NaN]), rows: 1, cols: 1 }));
  }
  const after = as.memoryStats();
  assert.equal(after.heapSize, before.heapSize);
  assert.ok(after.allocated <= before.allocated + 1024, `allocated grew from ${before.allocated} to ${after.allocated}`);
  stillWorks();
});
