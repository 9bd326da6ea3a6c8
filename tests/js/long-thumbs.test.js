// long-thumbs.test.js: the long input's model-view thumbnails (web/long.js topkTiles, drawn by web/panels/long.js)
// come from the module's per-head summaries (run option summaries: each row's top-k keys), never from n × n maps.
// Checked against the full weights of the same run (trace 'weights') of the bundled english-rope model: the summary's
// top-k are each row's heaviest weights; every thumbnail pixel is the largest listed weight of its block (a
// hand-written loop over the full map with the rows' other weights zeroed); it never exceeds the full map's block
// maximum, and equals it wherever that maximum is among its row's top k (counted). Plus a hand-worked case.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import { topkTiles, LONG_TILE } from '../../web/long.js';

test('topkTiles: a hand-worked summary (2 heads, 5 rows, k = 2) at stride 1', () => {
  // head 0: row i's keys i and i − 1; head 1: every row's key 0 only
  const topIds = Int32Array.from([0, -1, 1, 0, 2, 1, 3, 2, 4, 3, /* head 1 */ 0, -1, 0, -1, 0, -1, 0, -1, 0, -1]);
  const topWeights = Float32Array.from([1, 0, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9, 0.1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
  const { tiles, side, stride } = topkTiles({ entropy: new Float32Array(2), topK: 2, topIds, topWeights }, 5);
  assert.equal(stride, 1);
  assert.equal(side, 5);
  const want = [
    1, 0, 0, 0, 0, 0.4, 0.6, 0, 0, 0, 0, 0.3, 0.7, 0, 0, 0, 0, 0.2, 0.8, 0, 0, 0, 0, 0.1, 0.9,
    1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0,
  ];
  assert.deepEqual(Array.from(tiles, (v) => Math.round(v * 10) / 10), want);
});

test('topkTiles of english-rope at 127 tokens: every pixel is the block maximum of the rows\' top-k weights of the full map', async (t) => {
  const as = await loadAs();
  const model = await as.loadBundled('english-rope');
  try {
    const text = 'the cat sat on the mat because it was tired, and the dog ran to the door. '.repeat(2).slice(0, 127);
    const run = model.run(text, { trace: 'weights', summaries: { topK: 5 } });
    const n = run.n;
    assert.ok(n > LONG_TILE, `${n} tokens: pooled thumbnails`);
    let pixels = 0;
    let exact = 0;
    for (const layer of run.layers) {
      const sm = layer.attention.summary;
      const w = layer.attention.weights;
      const H = sm.entropy.length;
      const k = sm.topK;
      const { tiles, side, stride: s } = topkTiles(sm, n);
      assert.equal(s, Math.ceil(n / LONG_TILE));
      assert.equal(tiles.length, H * side * side);
      for (let hd = 0; hd < H; hd++) {
        // the summary's top k are the row's heaviest weights (the full map's), so the thumbnail reads the module's numbers
        const kept = new Float32Array(n * n);
        for (let i = 0; i < n; i++) {
          const row = w.subarray((hd * n + i) * n, (hd * n + i + 1) * n);
          const kth = Array.from(row).sort((a, b) => b - a)[k - 1];
          for (let r = 0; r < k; r++) {
            const j = sm.topIds[(hd * n + i) * k + r];
            if (j < 0) continue;
            assert.ok(Math.abs(row[j] - sm.topWeights[(hd * n + i) * k + r]) < 1e-6, `row ${i} key ${j}`);
            assert.ok(row[j] >= kth - 1e-6, `row ${i}: key ${j} is among the top ${k}`);
            kept[i * n + j] = row[j];
          }
        }
        for (let a = 0; a < side; a++) {
          for (let b = 0; b < side; b++) {
            let top = 0;
            let full = 0;
            let fullInTop = false;
            for (let i = a * s; i < Math.min(n, (a + 1) * s); i++) {
              for (let j = b * s; j < Math.min(n, (b + 1) * s); j++) {
                top = Math.max(top, kept[i * n + j]);
                const v = w[(hd * n + i) * n + j];
                if (v > full) { full = v; fullInTop = kept[i * n + j] > 0; }
              }
            }
            const got = tiles[(hd * side + a) * side + b];
            assert.ok(Math.abs(got - top) < 1e-6, `layer head ${hd} pixel (${a}, ${b}): ${got} vs ${top}`);
            assert.ok(got <= full + 1e-6, 'never above the full block maximum');
            if (fullInTop) assert.ok(Math.abs(got - full) < 1e-6, 'equal to it when that maximum is a top-k weight');
            pixels += 1;
            if (Math.abs(got - full) < 1e-6) exact += 1;
          }
        }
      }
    }
    // (causal maps: about half the pixels lie above the diagonal, 0 in both)
    t.diagnostic(`${exact} of ${pixels} pixels equal the full map's block maximum; the rest are lower bounds of it`);
  } finally {
    model.delete();
  }
});
