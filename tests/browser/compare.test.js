// Real-browser test of the compare panel (issue 29; web/panels/compare.js, web/compare.js): two attention files
// pinned as A and B draw A, B and A − B. With the same tokens the difference drawn equals the elementwise difference
// of the weights the module reads from the two files (as.readAttentionFile in Node); with a GPT-2 and a BERT
// tokenization of one sentence it equals compareTraces on those weights (spans aligned by characters); two prompts
// through the page's own model are paired by position. Run: node --test --test-concurrency=1 tests/browser/compare.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, settled, clean, root,
} from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { compareTraces } from '../../web/compare.js';

const open = useBrowser();
const SHOTS = process.env.ATTNSCOPE_SHOTS ?? path.join(root, 'build', 'screenshots');
mkdirSync(SHOTS, { recursive: true });

/** Softmax rows of seeded logits (xorshift32), [heads, n, n], as float32. */
function probs(heads, n, seed) {
  let x = seed;
  const rnd = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 2 ** 32; };
  const out = new Float32Array(heads * n * n);
  for (let r = 0; r < heads * n; r++) {
    const row = Array.from({ length: n }, () => Math.exp(4 * rnd()));
    const s = row.reduce((p, q) => p + q, 0);
    row.forEach((v, j) => { out[r * n + j] = v / s; });
  }
  return out;
}

/** An attention file (API.md): one layer `attentions.0` [heads, n, n] F32 and the tokens. */
function attnFile(name, tokens, heads, seed) {
  const n = tokens.length;
  const w = probs(heads, n, seed);
  let json = Buffer.from(JSON.stringify({ __metadata__: { tokens: JSON.stringify(tokens), model: name }, 'attentions.0': { dtype: 'F32', shape: [heads, n, n], data_offsets: [0, w.byteLength] } }));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return { name: `${name}.safetensors`, mimeType: 'application/octet-stream', buffer: Buffer.concat([len, json, Buffer.from(w.buffer)]) };
}

async function choose(page, file) {
  const runs = await page.evaluate(() => window.__attnscope.runs);
  if (await page.locator('#attnfile-box').isHidden()) await page.selectOption('#model', 'file');
  await page.setInputFiles('#attnfile-input', file);
  await settled(page, runs);
}

const diffDrawn = (page) => page.evaluate(() => JSON.parse(document.querySelector('#compare-view canvas[data-kind="compare-diff"]').dataset.values));

test('two files: the difference drawn is the module\'s elementwise difference; GPT-2 vs BERT aligned by characters', async () => {
  const as = await createAttnScope();
  const { page, rec } = await open('#lang=en');
  // same tokens: head 2 of layer 1 of each
  const tokens = ['The', 'Ġanimal', 'Ġdidn', "'t", 'Ġcross'];
  const A = attnFile('clean', tokens, 3, 11);
  const B = attnFile('corrupted', tokens, 3, 12);
  // H1 toggled off: heads 2 and 3 shown, the first of them (index 1) pinned
  const secondHead = async () => {
    await page.click('#attention-view .head-chip[data-head="0"]');
    await page.waitForFunction(() => window.__attnscope.state.heads === '1,2');
  };
  await choose(page, A);
  await secondHead();
  await page.click('#compare-pin-a');
  await choose(page, B);
  await secondHead();
  await page.click('#compare-pin-b');
  await page.waitForSelector('#compare-view canvas[data-kind="compare-diff"]');
  const n = tokens.length;
  const wa = as.readAttentionFile(A.buffer).layers[0].attention.weights.subarray(n * n, 2 * n * n);
  const wb = as.readAttentionFile(B.buffer).layers[0].attention.weights.subarray(n * n, 2 * n * n);
  const got = await diffDrawn(page);
  assert.equal(got.length, n * n);
  let err = 0;
  for (let i = 0; i < n * n; i++) err = Math.max(err, Math.abs(got[i] - Math.fround(wa[i] - wb[i])));
  assert.equal(err, 0, 'the difference drawn is A − B element by element');
  assert.match(await page.textContent('[data-name="compare-alignment"]'), /Aligned by characters: 5 and 5 tokens → 5 spans/);
  await page.evaluate(() => document.getElementById('panel-compare').scrollIntoView());
  await page.screenshot({ path: path.join(SHOTS, 'compare-same-tokens.png') });

  // GPT-2 vs BERT tokens of one sentence: spans, and the merged difference equals compareTraces on the module's weights
  const G = attnFile('gpt2', ['I', 'Ġhave', 'Ġa', 'Ġnew', 'ĠGPU', '!'], 2, 21);
  const Bt = ['[CLS]', 'i', 'have', 'a', 'new', 'gp', '##u', '!', '[SEP]'];
  const R = attnFile('bert', Bt, 2, 22);
  await page.click('#compare-clear');
  await choose(page, G);
  await page.click('#compare-pin-a');
  await choose(page, R);
  await page.click('#compare-pin-b');
  await page.waitForSelector('#compare-view canvas[data-kind="compare-diff"]');
  const ga = as.readAttentionFile(G.buffer).layers[0].attention.weights.subarray(0, 36);
  const rb = as.readAttentionFile(R.buffer).layers[0].attention.weights.subarray(0, 81);
  const want = compareTraces({ tokens: ['I', 'Ġhave', 'Ġa', 'Ġnew', 'ĠGPU', '!'], weights: ga }, { tokens: Bt, weights: rb });
  assert.deepEqual(want.labels, ['I', 'have', 'a', 'new', 'GPU', '!']);
  const got2 = await diffDrawn(page);
  assert.deepEqual(got2, Array.from(want.diff));
  assert.match(await page.textContent('[data-name="compare-alignment"]'), /6 and 9 tokens → 6 spans/);
  await page.evaluate(() => document.getElementById('panel-compare').scrollIntoView());
  await page.screenshot({ path: path.join(SHOTS, 'compare-gpt2-bert.png') });
  clean(rec);
  await page.close();
});

test('two prompts through the page\'s model: paired by position; the page\'s own weights', async () => {
  const { page, rec } = await open('#lang=en&text=the%20cat%20sat&heads=0');
  await page.click('#compare-pin-a');
  const a = await page.evaluate(() => Array.from(window.__attnscope.trace.layers[0].attention.weights.subarray(0, 9)));
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', 'the dog ran');
  await settled(page, runs);
  const b = await page.evaluate(() => Array.from(window.__attnscope.trace.layers[0].attention.weights.subarray(0, 9)));
  await page.click('#compare-pin-b');
  await page.waitForSelector('#compare-view canvas[data-kind="compare-diff"]');
  assert.match(await page.textContent('[data-name="compare-alignment"]'), /paired by position \(3 each\)/);
  assert.deepEqual(await diffDrawn(page), a.map((v, i) => Math.fround(v - b[i])));
  clean(rec);
  await page.close();
});
