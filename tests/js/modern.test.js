// modern.test.js: as.loadPretrained on the decoder-only checkpoints of API.md "Modern decoder checkpoints" (Llama,
// Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, Phi-3) through the public package, against
// tests/fixtures/modern (tiny random checkpoints in exact Hugging Face layout; expected values from the float64
// reference of generate_models.py). Every layer's attention and output, the output, next, greedy generate; a
// sharded checkpoint given in reverse order; generationConfig's eos_token_id; exact errors with recovery.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { assertClose, SIMD } from './helpers.js';

const as = await createAttnScope({ simd: SIMD });
const DIR = new URL('../fixtures/modern/', import.meta.url);
const read = (p) => readFileSync(new URL(p, DIR));
const text = (p) => readFileSync(new URL(p, DIR), 'utf8');
const CASES = ['llama-f32-untied-gqa-llama3', 'llama-bf16-tied-mqa-headdim-linear-v5', 'mistral-f16-window-dynamic',
  'qwen2-f32-sliding-yarn', 'qwen3-bf16-qknorm-headdim', 'gemma-f32', 'gemma2-f32-softcap', 'gemma3-bf16-local-rope',
  'phi3-f32-fused-partial'];
const ATT = { atol: 2e-5, rtol: 0 };
const HIDDEN = { atol: 1e-4, rtol: 1e-3 };
const PROBS = { atol: 1e-6, rtol: 2e-3 };
const files = (name) => ({ config: text(`${name}/config.json`), weights: read(`${name}/model.safetensors`), tokenizer: text(`${name}/tokenizer.json`) });

function rejectsExactly(fn, message) {
  return assert.rejects(fn, (e) => {
    assert.equal(e.message, message);
    return true;
  });
}

test('loadPretrained: every decoder model_type matches the float64 reference', async () => {
  for (const name of CASES) {
    const want = JSON.parse(text(`${name}/expected.json`));
    const model = await as.loadPretrained(files(name));
    try {
      let attn = 0, hidden = 0, out = 0, probs = 0;
      for (const t of want.texts) {
        const r = model.run(t.text);
        assert.deepEqual(Array.from(r.ids), t.ids, `${name}: ids`);
        assert.equal(r.layers.length, t.attentions.length);
        r.layers.forEach((L, i) => {
          attn = Math.max(attn, assertClose(L.attention.weights, t.attentions[i], { ...ATT, what: `${name} attentions[${i}]` }));
          hidden = Math.max(hidden, assertClose(L.output, t.layer_outputs[i], { ...HIDDEN, what: `${name} layers[${i}].output` }));
        });
        out = Math.max(out, assertClose(r.output, t.output, { ...HIDDEN, what: `${name} output` }));
        assert.deepEqual(Array.from(r.next.ids), t.next.ids, `${name}: next.ids`);
        probs = Math.max(probs, assertClose(r.next.probs, t.next.probs, { ...PROBS, what: `${name} next.probs` }));
        const g = model.generate(t.text, { maxNewTokens: t.generate.max_new_tokens });
        assert.deepEqual(Array.from(g.ids), t.generate.ids, `${name}: generate`);
      }
      console.log(`modern ${name}: max abs error attentions ${attn.toExponential(2)}, layer outputs ${hidden.toExponential(2)}, output ${out.toExponential(2)}, next.probs ${probs.toExponential(2)}`);
    } finally {
      model.delete();
    }
  }
});

test('loadPretrained: shards in any order, generationConfig, errors naming field/tensor; the module keeps working', async () => {
  const name = 'llama-f32-untied-gqa-llama3';
  const want = JSON.parse(text(`${name}/expected.json`)).texts[0];
  const a = read(`${name}/sharded/model-00001-of-00002.safetensors`);
  const b = read(`${name}/sharded/model-00002-of-00002.safetensors`);
  const sharded = await as.loadPretrained({ ...files(name), weights: [new Blob([b]), a],
    generationConfig: { eos_token_id: [257, want.generate.ids[1]] } });
  try {
    const r = sharded.run(want.text);
    assertClose(r.output, want.output, { ...HIDDEN, what: 'sharded output' });
    assert.deepEqual(Array.from(sharded.generate(want.text, { maxNewTokens: 4 }).ids), want.generate.ids.slice(0, 1));
  } finally {
    sharded.delete();
  }
  await rejectsExactly(() => as.loadPretrained({ ...files(name), weights: [a, b, a] }),
    'loadPretrained: weights: tensor "model.embed_tokens.weight" is in two shards (weights[0] and weights[2])');
  const longrope = { ...JSON.parse(text(`${name}/config.json`)), rope_scaling: { rope_type: 'longrope', long_factor: [1], short_factor: [1] } };
  await rejectsExactly(() => as.loadPretrained({ ...files(name), config: longrope }),
    "loadPretrained: config.rope_scaling.rope_type 'longrope' is not supported (default, linear, dynamic, llama3, yarn)");
  const small = { ...JSON.parse(text(`${name}/config.json`)), vocab_size: 200 };
  await rejectsExactly(() => as.loadPretrained({ ...files(name), config: small }),
    'loadPretrained: tokenizer has 258 tokens but config.vocab_size is 200 (is the tokenizer from another model?)');
  await rejectsExactly(() => as.loadPretrained({ ...files(name), weights: [] }),
    'loadPretrained: weights must not be an empty array (give the shards of model.safetensors.index.json)');
  await rejectsExactly(() => as.loadPretrained({ ...files(name), generationConfig: { eos_token_id: 'x' } }),
    'loadPretrained: generationConfig.eos_token_id must be an integer or a list of integers, got string');
  // still working
  const again = await as.loadPretrained(files(name));
  try {
    assert.deepEqual(Array.from(again.run(want.text).next.ids), want.next.ids);
  } finally {
    again.delete();
  }
});
