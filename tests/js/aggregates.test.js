// web/aggregates.js (pure, no DOM) against small examples worked by hand; each expected number is
// derived in the comment above it. The page shows these aggregates; tests/browser/family.test.js checks
// that what it shows equals a plain JS computation on the same trace.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  meanOverHeads, maxOverHeads, rollout, headEntropy, headDistance, filterLinks,
} from '../../web/aggregates.js';

const close = (got, want, tol = 1e-6, what = 'value') => {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]} ≠ ${want[i]}`);
  }
};

// two heads over two tokens: head 0 = [[1, 0], [.5, .5]], head 1 = [[0, 1], [.5, .5]]
const TWO = Float32Array.from([1, 0, 0.5, 0.5, 0, 1, 0.5, 0.5]);

test('meanOverHeads: averages each cell over the heads', () => {
  // (1+0)/2, (0+1)/2, (.5+.5)/2, (.5+.5)/2
  close(meanOverHeads(TWO, 2, 2), [0.5, 0.5, 0.5, 0.5]);
  // one head: unchanged; a non-square [1, 2, 3] map keeps its shape
  close(meanOverHeads(Float32Array.from([0.2, 0.3, 0.5, 1, 0, 0]), 1, 2, 3), [0.2, 0.3, 0.5, 1, 0, 0]);
});

test('maxOverHeads: the largest weight of each cell over the heads', () => {
  close(maxOverHeads(TWO, 2, 2), [1, 1, 0.5, 0.5]);
});

test('rollout: one layer is (mean + I) with rows renormalised', () => {
  // mean = [[.5, .5], [.5, .5]]; + I = [[1.5, .5], [.5, 1.5]]; rows sum to 2 → [[.75, .25], [.25, .75]]
  const [r1] = rollout([TWO], 2, 2);
  close(r1, [0.75, 0.25, 0.25, 0.75]);
});

test('rollout: multiplies through the layers, later layer on the left', () => {
  // two equal layers: A·A = [[.75²+.25², 2·.75·.25], …] = [[.625, .375], [.375, .625]]
  const rs = rollout([TWO, TWO], 2, 2);
  assert.equal(rs.length, 2);
  close(rs[1], [0.625, 0.375, 0.375, 0.625]);
  // causal, one head, three tokens: W = [[1,0,0],[.5,.5,0],[.2,.3,.5]] → (W + I)/2 =
  // A = [[1,0,0],[.25,.75,0],[.1,.15,.75]]. Layer 2 is I → Â₂ = I, so R₂ = A; layer 2 = W → R₂ = A·A:
  // row 1 = [.25 + .75·.25, .75·.75, 0] = [.4375, .5625, 0]
  // row 2 = [.1 + .15·.25 + .75·.1, .15·.75 + .75·.15, .75²] = [.2125, .225, .5625]
  const W = Float32Array.from([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
  const I = Float32Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  close(rollout([W, I], 1, 3)[1], [1, 0, 0, 0.25, 0.75, 0, 0.1, 0.15, 0.75]);
  close(rollout([W, W], 1, 3)[1], [1, 0, 0, 0.4375, 0.5625, 0, 0.2125, 0.225, 0.5625]);
  // the order matters: R₂ = Â₂·Â₁, not Â₁·Â₂. With Â₁ = A (from W) and Â₂ from V = [[0,1,0],[0,1,0],[0,1,0]]
  // (+I, /2: B = [[.5,.5,0],[0,1,0],[0,.5,.5]]): B·A row 0 = [.5·1 + .5·.25, .5·.75, 0] = [.625, .375, 0]
  const V = Float32Array.from([0, 1, 0, 0, 1, 0, 0, 1, 0]);
  close(rollout([W, V], 1, 3)[1].subarray(0, 3), [0.625, 0.375, 0]);
});

test('rollout: a fully blocked row keeps only its own token', () => {
  // row 1 all zero (every key blocked) → W + I row = [0, 1], already sums to 1
  const [r] = rollout([Float32Array.from([0.5, 0.5, 0, 0])], 1, 2);
  close(r, [0.75, 0.25, 0, 1]);
});

test('headEntropy: −Σ w ln w per row, averaged over the rows', () => {
  // head 0: row 0 one-hot → 0; row 1 uniform over 2 → ln 2; mean ln2/2. Head 1 the same.
  close(headEntropy(TWO, 2, 2), [Math.LN2 / 2, Math.LN2 / 2], 1e-7);
  // uniform over 4 keys → ln 4
  close(headEntropy(new Float32Array(8).fill(0.25), 1, 2, 4), [Math.log(4)], 1e-7);
  // a blocked (all-zero) row is skipped, not counted as 0: rows [.5,.5] and [0,0] → ln 2
  close(headEntropy(Float32Array.from([0.5, 0.5, 0, 0]), 1, 2), [Math.LN2], 1e-7);
});

test('headDistance: Σ w·|i − j| per row, averaged over the rows', () => {
  // head 0: row 0 → 1·0 = 0, row 1 → .5·1 + .5·0 = .5; mean .25
  // head 1: row 0 → 1·1 = 1, row 1 → .5; mean .75
  close(headDistance(TWO, 2, 2), [0.25, 0.75]);
  // one row looking three tokens back: query 3 → key 0 → distance 3 (other rows on the diagonal: 0)
  const w = new Float32Array(16);
  w[0] = 1; w[5] = 1; w[10] = 1; w[12] = 1;
  close(headDistance(w, 1, 4), [3 / 4]);
});

test('filterLinks: threshold zeroes cells below it and counts them', () => {
  const v = Float32Array.from([0.1, 0.4, 0.4, 0.1, 0.7, 0.3, 0, 0]);
  const r = filterLinks(v, 2, 4, { threshold: 0.35 });
  close(r.values, [0, 0.4, 0.4, 0, 0.7, 0, 0, 0]);
  assert.equal(r.hidden, 3, 'two 0.1s and the 0.3; zeros are not counted');
  assert.notEqual(r.values, v, 'the input is not changed');
  assert.equal(v[0], Math.fround(0.1));
});

test('filterLinks: top-k keeps the k largest per row, ties to the lower key', () => {
  const v = Float32Array.from([0.1, 0.4, 0.4, 0.1, 0.7, 0.3, 0, 0]);
  close(filterLinks(v, 2, 4, { topK: 2 }).values, [0, 0.4, 0.4, 0, 0.7, 0.3, 0, 0]);
  close(filterLinks(v, 2, 4, { topK: 1 }).values, [0, 0.4, 0, 0, 0.7, 0, 0, 0]);
  // both: top 2 and ≥ .35
  close(filterLinks(v, 2, 4, { topK: 2, threshold: 0.35 }).values, [0, 0.4, 0.4, 0, 0.7, 0, 0, 0]);
  // k ≥ cols and threshold 0 keep everything
  close(filterLinks(v, 2, 4, { topK: 4 }).values, v);
  assert.equal(filterLinks(v, 2, 4).hidden, 0);
});

test('aggregates: bad shapes and options name the function and the argument', () => {
  assert.throws(() => meanOverHeads(new Float32Array(7), 2, 2), { message: 'meanOverHeads: weights length (7) must be H·n·m (8)' });
  assert.throws(() => maxOverHeads(TWO, 0, 2), { message: 'maxOverHeads: H (0) must be a positive integer' });
  assert.throws(() => rollout([], 1, 2), { message: 'rollout: layers (0) must be a non-empty array of [H, n, n] weights' });
  assert.throws(() => rollout([TWO, new Float32Array(3)], 2, 2), { message: 'rollout: layers[1] length (3) must be H·n·m (8)' });
  assert.throws(() => filterLinks(TWO, 2, 4, { topK: -1 }), { message: 'filterLinks: topK (-1) must be a non-negative integer' });
  assert.throws(() => filterLinks(TWO, 2, 4, { threshold: NaN }), { message: 'filterLinks: threshold (NaN) must be a finite number' });
});
