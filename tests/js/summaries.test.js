// summaries.test.js: run options heads and summaries through the module (src/attention/tiled.h). On the bundled
// english (GPT-2-style blocks) and english-rope (RoPE, grouped K/V heads) models: the tiled run (no layer keeps
// [H, n, n]) equals the materialised run within 1e-5 of the values' scale, the listed maps equal the materialised
// ones, and the summaries of both runs equal float64 sums over the materialised weights computed here. Also the
// options' errors. Runs against either build: ATTNSCOPE_SIMD=false selects the scalar one.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';

const as = await loadAs();

// float64 summaries of weights [H, n, n] over every row (tiled.h's definitions)
function want(w, H, n) {
  const out = { entropy: [], distance: [], sink: [] };
  for (let h = 0; h < H; h++) {
    let e = 0; let d = 0; let s = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const p = w[(h * n + i) * n + j];
        if (p > 0) e -= p * Math.log(p);
        d += p * Math.abs(i - j);
      }
      s += w[(h * n + i) * n];
    }
    out.entropy.push(e / n); out.distance.push(d / n); out.sink.push(s / n);
  }
  return out;
}

function maxScaled(got, ref) {
  let scale = 1; let err = 0;
  for (const v of ref) scale = Math.max(scale, Math.abs(v));
  for (let i = 0; i < ref.length; i++) err = Math.max(err, Math.abs(got[i] - ref[i]));
  return err / scale;
}

function checkSummary(s, w, H, n, what) {
  const ref = want(w, H, n);
  let worst = 0;
  for (const key of ['entropy', 'distance', 'sink']) {
    assert.equal(s[key].length, H);
    for (let h = 0; h < H; h++) {
      const err = Math.abs(s[key][h] - ref[key][h]);
      worst = Math.max(worst, err);
      assert.ok(err <= 1e-5 * Math.max(1, Math.abs(ref[key][h])), `${what} ${key}[${h}]: ${s[key][h]} vs ${ref[key][h]}`);
    }
  }
  const k = s.topK;
  assert.equal(s.topIds.length, H * n * k);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < n; i++) {
      const row = w.subarray((h * n + i) * n, (h * n + i + 1) * n);
      const sorted = Array.from(row).sort((a, b) => b - a);
      for (let t = 0; t < k; t++) {
        const id = s.topIds[(h * n + i) * k + t];
        const weight = s.topWeights[(h * n + i) * k + t];
        if (sorted[t] > 0) {
          assert.ok(id >= 0 && id <= i, `${what}: row ${i} top ${t} is key ${id}`);
          assert.ok(Math.abs(row[id] - weight) < 1e-5 && Math.abs(sorted[t] - weight) < 1e-5,
            `${what}: head ${h} row ${i} top ${t}: ${weight} vs the row's ${sorted[t]}`);
        } else {
          assert.equal(id, -1);
        }
      }
    }
  }
  return worst;
}

for (const name of ['english', 'english-rope']) {
  test(`run heads/summaries: ${name}'s tiled run equals the materialised one; summaries equal float64 sums`, async (t) => {
    const model = await as.loadBundled(name);
    try {
      const text = 'a tightly knit group of people who share a common interest, the act of moving something from one place to another';
      const full = model.run(text, { trace: 'weights', summaries: { topK: 3 } });
      const list = [{ layer: 2, head: 1 }, { layer: 0, head: 3 }];
      const tiled = model.run(text, { heads: list, summaries: { topK: 3 }, layerOutputs: true });
      const n = full.ids.length;
      const H = full.numHeads;
      let out = 0; let sums = 0;
      full.layers.forEach((l, i) => {
        assert.equal(tiled.layers[i].attention.weights, undefined);
        out = Math.max(out, maxScaled(tiled.layers[i].output, l.output));
        sums = Math.max(sums, checkSummary(l.attention.summary, l.attention.weights, H, n, `${name} full L${i}`));
        sums = Math.max(sums, checkSummary(tiled.layers[i].attention.summary, l.attention.weights, H, n, `${name} tiled L${i}`));
      });
      out = Math.max(out, maxScaled(tiled.output, full.output));
      assert.ok(out <= 1e-5, `${name}: tiled vs materialised ${out}`);
      assert.deepEqual(tiled.heads.map(({ layer, head }) => ({ layer, head })), list);
      for (const { layer, head, weights } of tiled.heads) {
        const ref = full.layers[layer].attention.weights.subarray(head * n * n, (head + 1) * n * n);
        assert.ok(maxScaled(weights, ref) <= 1e-5, `${name}: map L${layer} H${head} ${maxScaled(weights, ref)}`);
      }
      assert.deepEqual(Array.from(tiled.next.ids), Array.from(full.next.ids));
      t.diagnostic(`${name} n=${n}: tiled vs materialised ${out.toExponential(2)} of the scale; summaries vs float64 ${sums.toExponential(2)}`);
    } finally {
      model.delete();
    }
  });
}

test('run heads/summaries: errors name the option; the model keeps working', async () => {
  const model = await as.loadBundled('english');
  try {
    assert.throws(() => model.run('abc', { heads: 'some' }), { name: 'RangeError', message: "run: heads (\"some\") must be 'all', 'none' or an array of { layer, head }" });
    assert.throws(() => model.run('abc', { heads: 3 }), { name: 'TypeError', message: "run: heads must be 'all', 'none' or an array of { layer, head }, got number" });
    assert.throws(() => model.run('abc', { heads: [{ layer: 3, head: 0 }] }), { name: 'RangeError', message: 'run: heads[0].layer (3) must be an integer from 0 to 2' });
    assert.throws(() => model.run('abc', { heads: 'none', trace: 'weights' }), /run: heads \(a list or 'none'\) needs trace 'none'/);
    assert.throws(() => model.run('abc', { summaries: { k: 2 } }), { name: 'TypeError', message: "run: unknown option 'summaries.k'" });
    assert.throws(() => model.run('abc', { summaries: 'yes' }), { name: 'TypeError', message: 'run: summaries must be a boolean or { topK }, got string' });
    const r = model.run('abc', { heads: 'none', summaries: true });
    assert.equal(r.heads, undefined);
    assert.equal(r.layers[0].attention.summary.topK, 5);
    assert.equal(model.run('abc', { heads: 'all' }).layers[0].attention.weights.length, 4 * 9);
  } finally {
    model.delete();
  }
});
