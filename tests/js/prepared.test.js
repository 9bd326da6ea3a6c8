// createMultiHeadAttention: a multi-head attention whose weights stay in wasm memory. forward() must be
// bit-identical to the stateless multiHeadAttention with the same arguments, raise the same errors (named
// createMultiHeadAttention / forward), refuse a deleted handle and not leak across many calls.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fixtures, loadAs, toTyped } from './helpers.js';

const as = await loadAs();

const WEIGHT_KEYS = ['dModel', 'numHeads', 'kdim', 'vdim', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo'];
const CALL_KEYS = ['query', 'key', 'value', 'nq', 'nk', 'mask', 'causal', 'needWeights'];
const pick = (obj, keys) => Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));

/** Splits multiHeadAttention arguments into (construction, call) arguments. */
function split(args) {
  return [pick(args, WEIGHT_KEYS), pick(args, CALL_KEYS)];
}

function assertBitIdentical(got, want, what) {
  assert.ok(got instanceof Float32Array, `${what}: not a Float32Array`);
  assert.equal(got.length, want.length, `${what}: length`);
  // Compare the bit patterns (distinguishes -0 from 0 and any NaN payload).
  assert.deepEqual(new Uint32Array(got.buffer, got.byteOffset, got.length),
    new Uint32Array(want.buffer, want.byteOffset, want.length), `${what}: not bit-identical`);
}

for (const c of fixtures('multiHeadAttention')) {
  test(`prepared: forward is bit-identical to multiHeadAttention on ${c.name}`, () => {
    const args = toTyped(c.args);
    const [ctor, call] = split(args);
    const mha = as.createMultiHeadAttention(ctor);
    try {
      for (const extra of [{}, { needWeights: false }, { needWeights: true }]) {
        const want = as.multiHeadAttention({ ...args, ...extra });
        const got = mha.forward({ ...call, ...extra });
        assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort());
        assertBitIdentical(got.output, want.output, `${c.name} output ${JSON.stringify(extra)}`);
        if (want.weights) assertBitIdentical(got.weights, want.weights, `${c.name} weights`);
      }
      // Repeated forwards on the same handle give the same result (the stored weights are not modified).
      const again = mha.forward(call);
      assertBitIdentical(again.output, as.multiHeadAttention(args).output, `${c.name} second forward`);
    } finally {
      mha.delete();
    }
  });
}

// A small, valid configuration: nq=4 queries of dModel=8, numHeads=2.
const f32 = (n, v = 0.1) => Float32Array.from({ length: n }, (_, i) => v * ((i % 7) - 3));
const W = () => ({ dModel: 8, numHeads: 2, wq: f32(64), wk: f32(64), wv: f32(64), wo: f32(64) });

const CREATE_ERRORS = [
  [() => as.createMultiHeadAttention({ ...W(), dModel: 10, numHeads: 3, wq: f32(100), wk: f32(100), wv: f32(100), wo: f32(100) }),
    RangeError, 'createMultiHeadAttention: dModel (10) must be divisible by numHeads (3)'],
  [() => as.createMultiHeadAttention({ ...W(), wo: undefined }), TypeError, 'createMultiHeadAttention: wo is required'],
  [() => as.createMultiHeadAttention({ ...W(), bq: f32(3) }), RangeError,
    'createMultiHeadAttention: bq must have length 8 (dModel = 8), got 3'],
  [() => as.createMultiHeadAttention({ ...W(), numHeads: 0 }), RangeError,
    'createMultiHeadAttention: numHeads (0) must be a positive integer'],
  [() => as.createMultiHeadAttention({ ...W(), wk: Float32Array.from({ length: 64 }, (_, i) => (i === 3 ? NaN : 0)) }),
    RangeError, 'createMultiHeadAttention: wk[3] (NaN) must be finite'],
  [() => as.createMultiHeadAttention({ ...W(), bo: Float32Array.from({ length: 8 }, (_, i) => (i === 5 ? -Infinity : 0)) }),
    RangeError, 'createMultiHeadAttention: bo[5] (-Infinity) must be finite'],
  [() => as.createMultiHeadAttention({ ...W(), kdim: 4 }), RangeError,
    'createMultiHeadAttention: wk must have length 32 (kdim*dModel = 4*8), got 64'],
  [() => as.createMultiHeadAttention({ ...W(), query: f32(32) }), TypeError, "createMultiHeadAttention: unknown option 'query'"],
  [() => as.createMultiHeadAttention(null), TypeError, 'createMultiHeadAttention: expected one argument object, got null'],
];

test('prepared: createMultiHeadAttention errors match multiHeadAttention (named createMultiHeadAttention)', () => {
  for (const [fn, kind, message] of CREATE_ERRORS) assert.throws(fn, (e) => e instanceof kind && e.message === message, message);
});

test('prepared: forward errors match multiHeadAttention (named forward)', () => {
  const mha = as.createMultiHeadAttention(W());
  const ok = { query: f32(32), nq: 4 };
  const cases = [
    [{ query: f32(31), nq: 4 }, RangeError, 'forward: query must have length 32 (nq*dModel = 4*8), got 31'],
    [{ nq: 4 }, TypeError, 'forward: query is required'],
    [{ ...ok, nk: 3 }, TypeError, 'forward: key is required when nk (3) or kdim (8) differ from nq/dModel'],
    [{ ...ok, key: f32(24), nk: 3, value: f32(16) }, RangeError, 'forward: value must have length 24 (nk*vdim = 3*8), got 16'],
    [{ ...ok, mask: new Uint8Array(15) }, RangeError, 'forward: mask must have length 16 (nq*nk = 4*4), got 15'],
    [{ ...ok, needWeights: 1 }, TypeError, 'forward: needWeights must be a boolean, got number'],
    [{ ...ok, dModel: 8 }, TypeError, "forward: unknown option 'dModel'"],
    [{ ...ok, wq: f32(64) }, TypeError, "forward: unknown option 'wq'"],
    [{ ...ok, query: Float32Array.from({ length: 32 }, (_, i) => (i === 5 ? -Infinity : 0)) }, RangeError,
      'forward: query[5] (-Infinity) must be finite'],
    [{ ...ok, key: f32(32), value: Float32Array.from({ length: 32 }, (_, i) => (i === 2 ? 1e39 : 0)) }, RangeError,
      'forward: value[2] (Infinity) must be finite'],
  ];
  try {
    for (const [args, kind, message] of cases) {
      assert.throws(() => mha.forward(args), (e) => e instanceof kind && e.message === message, message);
      // The same mistake in the stateless call gives the same message under its own name.
      const stateless = { ...W(), ...args };
      if (!('dModel' in args) && !('wq' in args)) {
        assert.throws(() => as.multiHeadAttention(stateless),
          (e) => e instanceof kind && e.message === message.replace(/^forward:/, 'multiHeadAttention:'));
      }
    }
    // The handle keeps working after errors.
    const want = as.multiHeadAttention({ ...W(), ...ok });
    assertBitIdentical(mha.forward(ok).output, want.output, 'after errors');
  } finally {
    mha.delete();
  }
});

test('prepared: the caller may modify its weight arrays after creation', () => {
  const w = W();
  const mha = as.createMultiHeadAttention(w);
  const want = as.multiHeadAttention({ ...W(), query: f32(32), nq: 4 });
  w.wq.fill(7);
  w.wo.fill(-1);
  assertBitIdentical(mha.forward({ query: f32(32), nq: 4 }).output, want.output, 'weights copied at creation');
  mha.delete();
});

test('prepared: a deleted handle throws; delete() twice is harmless', () => {
  const mha = as.createMultiHeadAttention(W());
  mha.delete();
  mha.delete();
  assert.throws(() => mha.forward({ query: f32(32), nq: 4 }),
    (e) => e instanceof Error && e.message === 'forward: this attention module has been deleted');
  // Also before any argument check.
  assert.throws(() => mha.forward(null), /forward: this attention module has been deleted/);
});

test('prepared: 1,000 forwards keep the wasm heap flat', (t) => {
  const c = fixtures('multiHeadAttention').find((f) => f.name.includes('cross_mask_causal')) ?? fixtures('multiHeadAttention')[0];
  const [ctor, call] = split(toTyped(c.args));
  const mha = as.createMultiHeadAttention(ctor);
  const first = mha.forward(call);
  const before = as.memoryStats();
  let last;
  for (let i = 0; i < 1000; i++) last = mha.forward(call);
  const after = as.memoryStats();
  t.diagnostic(`heapSize before ${before.heapSize}, after ${after.heapSize}; allocated before ${before.allocated}, after ${after.allocated}`);
  assert.equal(after.heapSize, before.heapSize);
  assert.ok(after.allocated <= before.allocated + 1024, `allocated grew from ${before.allocated} to ${after.allocated}`);
  assertBitIdentical(last.output, first.output, 'last vs first');
  mha.delete();
  // Creating and deleting handles does not leak either.
  const b2 = as.memoryStats();
  for (let i = 0; i < 200; i++) as.createMultiHeadAttention(ctor).delete();
  const a2 = as.memoryStats();
  assert.equal(a2.heapSize, b2.heapSize);
  assert.ok(a2.allocated <= b2.allocated + 1024, `create/delete: allocated grew from ${b2.allocated} to ${a2.allocated}`);
});
