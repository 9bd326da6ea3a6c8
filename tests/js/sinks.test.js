// sinks.test.js: web/sinks.js — the page's sink share equals the core's (as.headScores sinkShare) on a model's
// real weights; hiding the sink renormalises rows to 1 without key 0; the K/V head of a query head and the KV-cache
// sizes against hand-worked numbers (Llama 3.2 1B: 16 layers, 32 query heads, 8 K/V heads, head_dim 64).
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import { headSink, withoutSink, kvHeadOf, kvCacheBytes } from '../../web/sinks.js';

const as = await loadAs();

test('headSink equals the core headScores sinkShare; withoutSink rows sum to 1 with key 0 at 0', () => {
  const model = as.createModel({ dModel: 16, numHeads: 4, numLayers: 2, seed: 3 });
  try {
    const run = model.run('the cat sat on the mat because it was tired');
    const n = run.tokens.length;
    const core = as.headScores({ weights: run.layers.map((l) => l.attention.weights), numHeads: 4, n }).sinkShare;
    let worst = 0;
    run.layers.forEach((L, l) => {
      const mine = headSink(L.attention.weights, 4, n, n);
      for (let h = 0; h < 4; h++) worst = Math.max(worst, Math.abs(mine[h] - core[l * 4 + h]));
      const hidden = withoutSink(L.attention.weights, 4, n, n);
      for (let r = 0; r < 4 * n; r++) {
        assert.equal(hidden[r * n], 0);
        let s = 0;
        for (let j = 0; j < n; j++) s += hidden[r * n + j];
        assert.ok(Math.abs(s - 1) < 1e-5, `row ${r} sums to ${s}`);
      }
    });
    assert.ok(worst < 1e-6, `sink share differs from the core's by ${worst}`);
  } finally {
    model.delete();
  }
});

test('kvHeadOf and kvCacheBytes (Llama 3.2 1B, 2,048 tokens, BF16)', () => {
  assert.deepEqual([0, 3, 4, 31].map((h) => kvHeadOf(h, 32, 8)), [0, 0, 1, 7]);
  assert.deepEqual([0, 5].map((h) => kvHeadOf(h, 8, 1)), [0, 0]); // MQA
  const c = kvCacheBytes({ numLayers: 16, numHeads: 32, numKeyValueHeads: 8, headDim: 64 }, 2048);
  assert.equal(c.shared, 2 * 16 * 8 * 64 * 2048 * 2); // 64 MiB
  assert.equal(c.shared, 64 * 2 ** 20);
  assert.equal(c.full, 256 * 2 ** 20);
});
