// Real-browser test of the long path chosen by size (issue 28; web/long.js usualMax): below 512 tokens the page asks
// for every layer's [H, n, n] maps only while (layers + 2) × heads × n² × 4 bytes fit what GPT-2 small / BERT base
// take at 512 tokens (176,160,768 bytes); a model with more maps takes the long path (summaries of every layer, the
// maps of the heads on screen only) from fewer tokens. A small Llama-shaped checkpoint with many heads (2 layers × 64
// query heads of width 4 sharing 2 K/V heads, hidden 256, byte-level tokenizer: one token per byte) is written at
// test time and chosen in "Your own checkpoint…". Hand-worked: 176,160,768 / ((2 + 2) · 64 · 4) = 172,032 → at most
// 414 tokens. Checked:
//   - 480 tokens (< 512): a long trace whose limit is 414: no layer keeps [H, n, n], the two maps on screen only, equal
//     to the same module's maps computed here in Node; the note says why (480 tokens, 2 × 64, 236 MB > 176 MB);
//     the model view draws every layer × head from summaries; an export is refused naming 414; the head detectors
//     give the sink share only, naming 414;
//   - 400 tokens: the usual trace, every layer's [64, 400, 400] weights once complete, no long note.
// No timed assertions. Run: ATTNSCOPE_SITE_BUILT=1 node --test tests/browser/long-size.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { useBrowser, root, errorText } from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { llamaCheckpoint } from '../js/support/llama.mjs';

const open = useBrowser();
const L = 2;
const H = 64;
const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 258, hidden_size: 256, intermediate_size: 48,
  num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: 2, head_dim: 4, max_position_embeddings: 1024,
  rms_norm_eps: 1e-5, rope_theta: 10000.0, hidden_act: 'silu', tie_word_embeddings: false, bos_token_id: 256, eos_token_id: 257,
};
const TOKENIZER = readFileSync(path.join(root, 'tests', 'fixtures', 'modern', 'llama-f32-untied-gqa-llama3', 'tokenizer.json'));
const WORDS = 'the cat sat on the mat because it was tired and the dog ran to the door when it heard a sound'.split(' ');
const prose = (n) => {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `${i ? ' ' : ''}${WORDS[i % WORDS.length]}`;
  return s.slice(0, n);
};

test('a model with many heads takes the long path below 512 tokens once its every map would pass the budget', async () => {
  const weights = llamaCheckpoint(CONFIG, { dtype: 'F32', seed: 414, scale: 1.2 });
  const long = prose(480);
  const as = await createAttnScope({ relaxedSimd: false });
  const model = await as.loadPretrained({ config: JSON.stringify(CONFIG), weights, tokenizer: TOKENIZER.toString('utf8') });
  const ref = model.run(long, { heads: [{ layer: 0, head: 0 }, { layer: 0, head: 1 }] });
  assert.equal(ref.n, 480, 'one token per byte');
  model.delete();

  // two heads selected: the usual path at 400 tokens draws their maps, not 64 of them
  const { page, rec } = await open(`#text=${encodeURIComponent(long)}&heads=0,1`, { width: 1280, height: 900 });
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(CONFIG)) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(weights) },
    { name: 'tokenizer.json', mimeType: 'application/json', buffer: TOKENIZER },
  ]);
  await page.waitForFunction(() => window.__attnscope.trace?.long && !document.documentElement.dataset.busy
    && document.querySelector('#attention-view canvas[data-big]') && document.querySelector('#model-view .long-model'), null, { timeout: 120000 });
  assert.deepEqual(rec.errors, []);
  const held = await page.evaluate(() => {
    const tr = window.__attnscope.trace;
    return {
      n: tr.n, long: tr.long, anyWeights: tr.layers.some((ly) => ly.attention?.weights),
      maps: tr.heads.map((x) => ({ layer: x.layer, head: x.head, weights: Array.from(x.weights) })),
      size: document.querySelector('#attention-view [data-name="long-size"]')?.textContent ?? null,
      note: document.querySelector('#attention-view [data-name="long-note"]').textContent,
      modelLong: document.querySelector('#model-view .long-model')?.dataset.long,
    };
  });
  assert.equal(held.n, 480);
  assert.equal(held.long.limit, 414, 'the usual path takes at most 414 tokens of this model');
  assert.equal(held.anyWeights, false, 'no layer keeps [H, n, n]');
  assert.deepEqual(held.maps.map((x) => [x.layer, x.head]), [[0, 0], [0, 1]], 'the two heads on screen only');
  let err = 0;
  held.maps.forEach((x, k) => x.weights.forEach((v, i) => { err = Math.max(err, Math.abs(v - ref.heads[k].weights[i])); }));
  assert.ok(err < 1e-6, `the maps on screen equal the module's, computed in Node (max ${err})`);
  // (2 + 2) · 64 · 480² · 4 = 235,929,600 bytes: 236 MB; the budget 176,160,768: 176 MB
  assert.equal(held.size, 'At 480 tokens this model\'s every map (2 layers × 64 heads, and the shown layer\'s scores) would take 236 MB at once, more than the page holds (176 MB, what GPT-2 and BERT take at 512 tokens): above 414 tokens it takes this path.');
  assert.match(held.note, /up to 414 tokens with this model/);
  assert.equal(held.modelLong, '480', 'the model view draws every layer × head from the summaries');

  // an export needs every map: refused, naming this model's limit
  await page.click('#export');
  await page.waitForFunction(() => document.getElementById('error')?.textContent.trim(), null, { timeout: 30000 });
  assert.match(await errorText(page), /keeps for at most 414 tokens with this model/);

  // the head detectors: the sink share only, saying why
  await page.selectOption('#tint-by', 'previous');
  await page.waitForFunction(() => /414/.test(document.getElementById('tint-status').textContent), null, { timeout: 120000 });
  assert.match(await page.textContent('#tint-status'), /^This text has 480 tokens: .* up to 414 tokens with this model\./);
  await page.selectOption('#tint-by', 'none');

  // 400 tokens: the usual path (every layer's maps once the trace is complete), no long note
  await page.fill('#text', prose(400));
  await page.waitForFunction(() => window.__attnscope.trace?.n === 400 && !document.documentElement.dataset.busy, null, { timeout: 120000 });
  await page.locator('#panel-model').scrollIntoViewIfNeeded(); // the model view draws every layer: the trace is completed
  await page.waitForFunction(() => {
    const tr = window.__attnscope.trace;
    return tr?.n === 400 && tr.complete && !document.documentElement.dataset.busy;
  }, null, { timeout: 120000 });
  const usual = await page.evaluate(() => {
    const tr = window.__attnscope.trace;
    return { long: !!tr.long, lengths: tr.layers.map((ly) => ly.attention.weights?.length), sizeNote: !!document.querySelector('[data-name="long-size"]') };
  });
  assert.deepEqual(usual, { long: false, lengths: [H * 400 * 400, H * 400 * 400], sizeNote: false });
  assert.deepEqual(rec.errors, []);
});
