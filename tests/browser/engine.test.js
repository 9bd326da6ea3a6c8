// The module itself in Chromium (issue 16): the engines' features the loader picks from. Chromium validates
// relaxed SIMD without a flag, so createAttnScope() runs the fused multiply-add GEMM kernel
// (dist/attnscope.relaxed.wasm); the page served by `npm start` is cross-origin isolated, so threads: 'auto'
// loads the threaded module, whose pool threads install the kernel too (.relaxed.mt.wasm). Results are compared
// with the module in Node (SIMD128 mul + add, one thread) and with a float64 reference. Harness:
// tests/browser/harness.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAttnScope } from 'attnscope';
import { useBrowser, clean } from './harness.js';
import { assertClose, mhaReference, randomF32 } from '../js/helpers.js';

const open = useBrowser();

const n = 131, d = 256, h = 4; // projections of 17 MFLOP: split across threads (core/parallel.h)
const w = { wq: randomF32(d * d, 2, 0.1), wk: randomF32(d * d, 3, 0.1), wv: randomF32(d * d, 4, 0.1), wo: randomF32(d * d, 5, 0.1) };
const query = randomF32(n * d, 1);

test('Chromium: relaxedSimd auto runs the fused multiply-add kernel, on one thread and in the threaded module (threads auto); both agree with Node and float64', async () => {
  const { page, rec } = await open('');
  const got = await page.evaluate(async ({ n, d, h, arrays }) => {
    const { createAttnScope } = await import('/bindings/js/index.js');
    const f32 = (a) => new Float32Array(a);
    const args = { query: f32(arrays.query), nq: n, dModel: d, numHeads: h, wq: f32(arrays.wq), wk: f32(arrays.wk), wv: f32(arrays.wv), wo: f32(arrays.wo) };
    const out = {};
    for (const [name, options] of [['one', { threads: 1 }], ['plain', { threads: 1, relaxedSimd: false }], ['auto', {}], ['forced', { relaxedSimd: true }]]) {
      const as = await createAttnScope(options);
      const r = as.multiHeadAttention(args);
      out[name] = { relaxedSimd: as.relaxedSimd, threads: as.threads, output: Array.from(r.output), weights: Array.from(r.weights) };
    }
    out.isolated = globalThis.crossOriginIsolated;
    return out;
  }, { n, d, h, arrays: { query: Array.from(query), wq: Array.from(w.wq), wk: Array.from(w.wk), wv: Array.from(w.wv), wo: Array.from(w.wo) } });
  clean(rec);
  assert.equal(got.one.relaxedSimd, true, 'threads: 1 in Chromium installs the relaxed-SIMD kernel');
  assert.equal(got.forced.relaxedSimd, true);
  assert.equal(got.plain.relaxedSimd, false);
  assert.equal(got.isolated, true, 'the served page is cross-origin isolated (COOP + COEP)');
  assert.ok(got.auto.threads > 1, `threads 'auto' in an isolated page uses the threaded module (got ${got.auto.threads})`);
  assert.equal(got.auto.relaxedSimd, true, 'the threaded module runs the kernel too');
  const node = (await createAttnScope({ threads: 1 })).multiHeadAttention({ query, nq: n, dModel: d, numHeads: h, ...w });
  const ref = mhaReference(query, n, d, h, w);
  assertClose(got.plain.output, node.output, { atol: 0, rtol: 0, what: 'Chromium mul + add vs Node (same wasm, same kernel)' });
  assertClose(got.one.output, node.output, { atol: 2e-6, rtol: 2e-6, what: 'Chromium fused vs Node mul + add' });
  assertClose(got.one.weights, node.weights, { atol: 1e-6, rtol: 1e-5, what: 'weights, Chromium fused vs Node' });
  assert.ok(got.one.output.some((x, i) => x !== got.plain.output[i]), 'the fused kernel rounds differently somewhere');
  assertClose(got.auto.output, got.one.output, { atol: 0, rtol: 0, what: 'Chromium fused: threaded vs one thread, bit for bit' });
  assertClose(got.auto.output, node.output, { atol: 2e-6, rtol: 2e-6, what: 'Chromium threaded fused vs Node one thread' });
  for (const k of ['one', 'auto']) assertClose(got[k].output, ref, { atol: 1e-5, rtol: 1e-4, what: `Chromium ${k} vs float64` });
});
