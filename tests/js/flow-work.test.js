// web/flow-work.js, the page's worker side of panel 9b, in Node: attention flow from head means (numHeads 1, one
// call per output above 64 tokens) equals the core's flow from every head; the Q/K map of a grouped-query head
// (tests/fixtures/modern's Llama with 4 query heads sharing 2 K/V heads, whose trace holds K per query head) equals
// qkMap on the head's q and k sliced here by hand, not the other K/V group's, and over two texts joins both texts'
// vectors.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadAs, assertClose, randomF32 } from './helpers.js';
import { flowWork, qkWork, FLOW_MAX_TOKENS } from '../../web/flow-work.js';
import { meanOverHeads } from '../../web/aggregates.js';

const as = await loadAs();
const DIR = new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url);

function softmaxRows(x, rows, n) {
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let j = 0; j < n; j++) { x[r * n + j] = Math.exp(x[r * n + j]); s += x[r * n + j]; }
    for (let j = 0; j < n; j++) x[r * n + j] /= s;
  }
  return x;
}

test('flowWork: head means in, per-row calls above 64 tokens, equal to the core on every head', async () => {
  for (const n of [9, 70]) {
    const H = 3;
    const layers = [0, 1].map((l) => softmaxRows(randomF32(H * n * n, 5 + l, 2), H * n, n));
    const want = as.attentionFlow({ layers, numHeads: H, n }).flow;
    const seen = [];
    const { flow } = await flowWork(as, { layers: layers.map((w) => meanOverHeads(w, H, n)), n }, (f) => seen.push(f));
    assertClose(flow, want, { atol: 1e-5, rtol: 1e-5, what: `n ${n}` });
    assert.equal(seen.length, n > 64 ? n : 0, 'progress once per row above 64 tokens');
  }
  const big = FLOW_MAX_TOKENS + 1;
  await assert.rejects(flowWork(as, { layers: [new Float32Array(big * big)], n: big }, () => {}),
    { name: 'RangeError', message: `attention flow: the text has ${big} tokens; at most ${FLOW_MAX_TOKENS}` });
  const ac = new AbortController();
  ac.abort();
  const n = 70;
  await assert.rejects(flowWork(as, { layers: [new Float32Array(n * n).fill(1 / n)], n }, () => {}, ac.signal), { name: 'AbortError' });
});

test('qkWork: a grouped-query head reads its K/V head; two texts are one map', async () => {
  const read = (f) => readFileSync(new URL(f, DIR));
  const model = await as.loadPretrained({ config: read('config.json').toString(), weights: read('model.safetensors'), tokenizer: read('tokenizer.json').toString() });
  try {
    const { numHeads: H, numKeyValueHeads: kv, headDim: d } = model.config;
    assert.ok(kv < H, `a grouped-query fixture (${H} heads, ${kv} K/V heads)`);
    const texts = ['hello world', 'the cat'];
    for (const head of [0, H - 1]) {
      const got = qkWork(as, model, texts[0], { layer: 1, head, texts: [texts[1], '  '] });
      const g = Math.floor(head / (H / kv));
      const q = [];
      const k = [];
      const wrongK = [];
      const w = [];
      for (const x of texts) {
        const r = model.run(x, { full: [1] });
        const a = r.layers[1].attention;
        const { n } = r;
        assert.equal(a.q.length, n * H * d);
        // the trace holds K per query head (repeat_kv'ed): heads of one group carry the same keys, other groups not
        assert.equal(a.k.length, n * H * d);
        const cols = (h) => Array.from({ length: n }, (_, i) => Array.from(a.k.slice(i * H * d + h * d, i * H * d + (h + 1) * d))).flat();
        assert.deepEqual(cols(head), cols(g * (H / kv)), 'same K/V group, same keys');
        assert.notDeepEqual(cols(head), cols(((g + 1) % kv) * (H / kv)), 'another group, other keys');
        for (let i = 0; i < n; i++) {
          q.push(...a.q.slice(i * H * d + head * d, i * H * d + (head + 1) * d));
          const other = ((g + 1) % kv) * (H / kv); // a query head of the other K/V group
          k.push(...a.k.slice(i * H * d + head * d, i * H * d + (head + 1) * d));
          wrongK.push(...a.k.slice(i * H * d + other * d, i * H * d + (other + 1) * d));
        }
        w.push(a.weights.slice(head * n * n, (head + 1) * n * n));
      }
      const N = q.length / d;
      assert.equal(got.points.length, N, 'the blank third text adds nothing');
      const want = as.qkMap({ q: Float32Array.from(q), k: Float32Array.from(k), nq: N, nk: N, d });
      assertClose(got.queries, want.queries, { atol: 1e-6, rtol: 1e-6, what: `head ${head} queries` });
      assertClose(got.keys, want.keys, { atol: 1e-6, rtol: 1e-6, what: `head ${head} keys` });
      const wrong = as.qkMap({ q: Float32Array.from(q), k: Float32Array.from(wrongK), nq: N, nk: N, d });
      assert.ok(Math.max(...Array.from(wrong.keys, (v, i) => Math.abs(Math.abs(v) - Math.abs(want.keys[i])))) > 1e-3, 'the other K/V head gives another map');
      got.weights.forEach((x, t) => assertClose(x, w[t], { atol: 0, rtol: 0, what: `weights ${t}` }));
      assert.deepEqual(got.points.filter((p) => p.text === 1).map((p) => p.position), [...Array(Math.round(Math.sqrt(w[1].length))).keys()]);
    }
    assert.throws(() => qkWork(as, model, 'hi', { layer: 9, head: 0, texts: [] }), /Q\/K map: layer 9 must be an integer from 0 to/);
    assert.throws(() => qkWork(as, model, 'hi', { layer: 0, head: H, texts: [] }), new RegExp(`Q/K map: head ${H} must be an integer from 0 to ${H - 1}`));
    assert.throws(() => qkWork(as, model, 'hi', { layer: 0, head: 0.5, texts: [] }), /Q\/K map: head 0.5 must be an integer from 0 to/);
  } finally {
    model.delete();
  }
});
