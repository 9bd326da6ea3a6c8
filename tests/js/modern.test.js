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
        // the head width config.json sets (Qwen3's and this Llama's head_dim differ from hidden / heads)
        const cfg = JSON.parse(text(`${name}/config.json`));
        const hd = cfg.head_dim ?? cfg.hidden_size / cfg.num_attention_heads;
        assert.equal(r.headDim, hd, `${name}: trace headDim`);
        assert.equal(model.config.headDim, hd, `${name}: config headDim`);
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

test('decoder checkpoints: BOS from tokenizer.json\'s post-processor; ablate and lens on GQA + RMSNorm models', async () => {
  const name = 'llama-f32-untied-gqa-llama3';
  const plainTok = JSON.parse(text(`${name}/tokenizer.json`));
  // Llama 3's layout: a TemplateProcessing post-processor that puts BOS ('<s>', id 256 here) before the text
  const withBos = {
    ...plainTok,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [256], tokens: ['<s>'] } },
    },
  };
  const plain = await as.loadPretrained(files(name));
  const bos = await as.loadPretrained({ ...files(name), tokenizer: JSON.stringify(withBos) });
  try {
    const t = 'the cat sat';
    const a = bos.run(t);
    const typed = plain.run(`<s>${t}`); // the added token typed in the text: the same ids, so the same forward
    assert.equal(a.ids[0], 256);
    assert.deepEqual(Array.from(a.ids), Array.from(typed.ids));
    assert.deepEqual(Array.from(a.ids.subarray(1)), Array.from(plain.run(t).ids));
    assert.deepEqual(a.output, typed.output);
    assert.deepEqual(Array.from(a.next.ids), Array.from(typed.next.ids));

    // ablate: 4 query heads share 2 K/V heads; knocking out query head 1 of layer 1 zeroes its weights only
    const r = plain.run(t);
    const off = plain.run(t, { ablate: [{ layer: 1, head: 1 }] });
    const n = r.n;
    const head = (w, h) => w.subarray(h * n * n, (h + 1) * n * n);
    assert.ok(head(off.layers[1].attention.weights, 1).every((x) => x === 0));
    for (const h of [0, 2, 3]) assert.deepEqual(head(off.layers[1].attention.weights, h), head(r.layers[1].attention.weights, h));
    assert.deepEqual(off.layers[0].output, r.layers[0].output);
    assert.notDeepEqual(off.layers[1].output, r.layers[1].output);
    assert.throws(() => plain.run(t, { ablate: [{ layer: 0, head: 4 }] }), { name: 'RangeError', message: 'run: ablate[0].head (4) must be an integer from 0 to 3 (layer 0 has 4 heads)' });

    // lens through the model's RMSNorm: the last layer's last row is next, exactly
    const k = 3;
    const lens = plain.run(t, { lens: k });
    const last = lens.layers.at(-1).lens;
    const next = plain.run(t, { topK: k }).next;
    assert.deepEqual(Array.from(last.ids.subarray((n - 1) * k)), Array.from(next.ids));
    assert.deepEqual(Array.from(last.probs.subarray((n - 1) * k)), Array.from(next.probs));
  } finally {
    plain.delete();
    bos.delete();
  }
});

test('generate: a SentencePiece-style (Llama 2 layout) tokenizer keeps the new text\'s leading space: decode(prompt + new) − decode(prompt)', async () => {
  const name = 'llama-f32-untied-gqa-llama3'; // vocab_size 258, bos 256
  const letters = 'abcdefghijklmnopqrstuvwxyz'.split('');
  const tokens = ['<unk>', ...letters, ...letters.map((c) => `▁${c}`), '▁'];
  for (const a of letters) for (const b of letters) if (tokens.length < 256) tokens.push(`▁${a}${b}`);
  tokens.push('<s>', '</s>');
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tokenizer = JSON.stringify({
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special(0, '<unk>'), special(256, '<s>'), special(257, '</s>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [256], tokens: ['<s>'] } },
    },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: false, ignore_merges: false, vocab, merges: [] },
  });
  const tok = as.loadTokenizer(tokenizer);
  const model = await as.loadPretrained({ ...files(name), tokenizer });
  try {
    for (const prompt of ['the cat', 'a', 'hello world']) {
      const ids = Array.from(tok.encode(prompt).ids);
      assert.equal(ids[0], 256);
      const g = model.generate(prompt, { maxNewTokens: 6 });
      const want = tok.decode([...ids, ...g.ids]).slice(tok.decode(ids).length);
      assert.equal(g.text, want, `${prompt}: ${JSON.stringify(g.tokens)}`);
    }
  } finally {
    model.delete();
    tok.delete();
  }
});
