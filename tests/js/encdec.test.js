// encdec.test.js: as.loadPretrained on the encoder-decoder checkpoints of API.md "Encoder–decoder checkpoints" (T5,
// Flan-T5, mT5, BART, mBART, Marian) through the public package, against tests/fixtures/encdec (tiny random
// checkpoints in exact Hugging Face layout; expected values from the float64 reference of generate_models.py):
// encoder, decoder and cross attentions, every layer's output, both stacks' outputs, next, greedy and beam search
// generation, run({ source, targetIds }); exact errors (unsupported feed_forward_proj, a missing tensor) with
// recovery.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { assertClose, SIMD } from './helpers.js';
import { join, split } from './support/safetensors.mjs';

const as = await createAttnScope({ simd: SIMD });
const DIR = new URL('../fixtures/encdec/', import.meta.url);
const read = (p) => readFileSync(new URL(p, DIR));
const text = (p) => readFileSync(new URL(p, DIR), 'utf8');
const CASES = ['marian-f32', 'bart-f16', 'mbart-bf16-untied', 't5-f32-relu-untied', 'flan-t5-bf16-gated-tied', 'mt5-f16'];
const ATT = { atol: 2e-5, rtol: 0 };
const HIDDEN = { atol: 1e-4, rtol: 1e-3 };
const PROBS = { atol: 1e-6, rtol: 2e-3 };
function files(name) {
  const f = { config: text(`${name}/config.json`), weights: read(`${name}/model.safetensors`), tokenizer: text(`${name}/tokenizer.json`) };
  if (existsSync(new URL(`${name}/generation_config.json`, DIR))) f.generationConfig = text(`${name}/generation_config.json`);
  return f;
}

function rejectsExactly(fn, message) {
  return assert.rejects(fn, (e) => {
    assert.equal(e.message, message);
    return true;
  });
}

// The file without tensor `name` (the others re-packed contiguously).
function withoutTensor(bytes, name) {
  const { header, data } = split(bytes);
  assert.ok(header[name], `${name} is in the file`);
  delete header[name];
  const parts = [];
  let at = 0;
  for (const [key, e] of Object.entries(header)) {
    if (key === '__metadata__') continue;
    const chunk = data.subarray(e.data_offsets[0], e.data_offsets[1]);
    e.data_offsets = [at, at + chunk.length];
    at += chunk.length;
    parts.push(chunk);
  }
  const packed = new Uint8Array(at);
  let p = 0;
  for (const c of parts) {
    packed.set(c, p);
    p += c.length;
  }
  return join(header, packed);
}

// The file with tensor `from` named `to` (data unchanged).
function renamed(bytes, from, to) {
  const { header, data } = split(bytes);
  header[to] = header[from];
  delete header[from];
  return join(header, data);
}

test('loadPretrained: every encoder-decoder model_type matches the float64 reference', async () => {
  for (const name of CASES) {
    const want = JSON.parse(text(`${name}/expected.json`));
    const model = await as.loadPretrained(files(name));
    try {
      assert.equal(model.config.architecture, 'encoder-decoder');
      assert.equal(model.config.decoderStartTokenId, want.pairs[0].ids[0]);
      let attn = 0, cross = 0, hidden = 0, out = 0, probs = 0;
      for (const t of want.pairs) {
        const r = model.run({ source: t.source, target: t.target });
        assert.deepEqual(Array.from(r.source.ids), t.source_ids, `${name}: source ids`);
        assert.deepEqual(Array.from(r.ids), t.ids, `${name}: target ids (start token first)`);
        assert.equal(r.source.layers.length, t.encoder_attentions.length);
        assert.equal(r.layers.length, t.attentions.length);
        r.source.layers.forEach((L, i) => {
          attn = Math.max(attn, assertClose(L.attention.weights, t.encoder_attentions[i], { ...ATT, what: `${name} encoder_attentions[${i}]` }));
          hidden = Math.max(hidden, assertClose(L.output, t.encoder_layer_outputs[i], { ...HIDDEN, what: `${name} source.layers[${i}].output` }));
        });
        out = Math.max(out, assertClose(r.source.output, t.encoder_output, { ...HIDDEN, what: `${name} source.output` }));
        r.layers.forEach((L, i) => {
          attn = Math.max(attn, assertClose(L.attention.weights, t.attentions[i], { ...ATT, what: `${name} decoder_attentions[${i}]` }));
          cross = Math.max(cross, assertClose(L.cross.weights, t.cross_attentions[i], { ...ATT, what: `${name} cross_attentions[${i}]` }));
          hidden = Math.max(hidden, assertClose(L.output, t.layer_outputs[i], { ...HIDDEN, what: `${name} layers[${i}].output` }));
        });
        out = Math.max(out, assertClose(r.output, t.output, { ...HIDDEN, what: `${name} output` }));
        assert.deepEqual(Array.from(r.next.ids), t.next.ids, `${name}: next.ids`);
        probs = Math.max(probs, assertClose(r.next.probs, t.next.probs, { ...PROBS, what: `${name} next.probs` }));
        // the same decoder input given as ids
        const byIds = model.run({ source: t.source, targetIds: t.ids.slice(1) });
        assert.deepEqual(byIds.output, r.output, `${name}: targetIds`);
        const g = model.generate(t.source, { maxNewTokens: t.generate.max_new_tokens });
        assert.deepEqual(Array.from(g.ids), t.generate.ids, `${name}: greedy generate`);
        const b = model.generate(t.source, { maxNewTokens: t.beam.max_new_tokens, numBeams: t.beam.num_beams });
        assert.deepEqual(Array.from(b.ids), t.beam.ids, `${name}: beam search`);
      }
      console.log(`encdec ${name}: max abs error attentions ${attn.toExponential(2)}, cross ${cross.toExponential(2)}, layer outputs ${hidden.toExponential(2)}, outputs ${out.toExponential(2)}, next.probs ${probs.toExponential(2)}`);
    } finally {
      model.delete();
    }
  }
});

test('encoder-decoder checkpoints: generate then run(targetIds) shows the generated sequence; text skips specials', async () => {
  const name = 'mbart-bf16-untied';
  const want = JSON.parse(text(`${name}/expected.json`)).pairs[0];
  const model = await as.loadPretrained(files(name));
  try {
    const g = model.generate(want.source, { maxNewTokens: 6 });
    const r = model.run({ source: want.source, targetIds: g.ids });
    assert.equal(r.layers[0].cross.weights.length, 4 * (g.ids.length + 1) * want.source_ids.length);
    assert.deepEqual(Array.from(r.ids), [want.ids[0], ...g.ids]);
    // byte-level ids: the text is their bytes
    assert.equal(g.text, new TextDecoder().decode(Uint8Array.from(g.ids.filter((id) => id < 256))));
    assert.throws(() => model.run({ source: 'x', targetIds: [1, 9999] }),
      { name: 'RangeError', message: 'run: targetIds[1] (9999) is not in the vocabulary (0 to 259)' });
    assert.throws(() => model.run({ source: 'x', target: 'a', targetIds: [1] }),
      { name: 'TypeError', message: "run: unknown option 'target' (give target or targetIds, not both)" });
    assert.throws(() => model.generate('x', { numBeams: 0 }), { name: 'RangeError' });
  } finally {
    model.delete();
  }
});

test('encoder-decoder checkpoints: the tied token table saved as encoder.embed_tokens.weight', async () => {
  for (const [name, from, to] of [['bart-f16', 'model.shared.weight', 'model.encoder.embed_tokens.weight'],
    ['t5-f32-relu-untied', 'shared.weight', 'decoder.embed_tokens.weight']]) {
    const want = JSON.parse(text(`${name}/expected.json`)).pairs[0];
    const model = await as.loadPretrained({ ...files(name), weights: renamed(read(`${name}/model.safetensors`), from, to) });
    try {
      assertClose(model.run({ source: want.source, target: want.target }).output, want.output, { ...HIDDEN, what: `${name} output` });
    } finally {
      model.delete();
    }
  }
});

test('encoder-decoder checkpoints: errors name the field or tensor; the module keeps working', async () => {
  const t5 = 't5-f32-relu-untied';
  const cfg = JSON.parse(text(`${t5}/config.json`));
  await rejectsExactly(() => as.loadPretrained({ ...files(t5), config: { ...cfg, feed_forward_proj: 'gated-foo' } }),
    "loadPretrained: config.feed_forward_proj 'gated-foo' is not supported (relu, gelu, gelu_new, silu and their gated- forms)");
  await rejectsExactly(() => as.loadPretrained({ ...files(t5), config: { ...cfg, feed_forward_proj: 'big-relu' } }),
    "loadPretrained: config.feed_forward_proj 'big-relu' is not supported ('<act>' or 'gated-<act>')");
  const missing = withoutTensor(read(`${t5}/model.safetensors`), 'decoder.block.1.layer.2.DenseReluDense.wo.weight');
  await rejectsExactly(() => as.loadPretrained({ ...files(t5), weights: missing }),
    'loadPretrained: weights: tensor "decoder.block.1.layer.2.DenseReluDense.wo.weight" [16,20] is missing (is the file from another model?)');
  const bart = 'bart-f16';
  const bcfg = JSON.parse(text(`${bart}/config.json`));
  await rejectsExactly(() => as.loadPretrained({ ...files(bart), config: { ...bcfg, decoder_attention_heads: 2 } }),
    'loadPretrained: config.decoder_attention_heads 2 is not supported (equal to encoder_attention_heads (4))');
  const noPositions = withoutTensor(read(`${bart}/model.safetensors`), 'model.encoder.embed_positions.weight');
  await rejectsExactly(() => as.loadPretrained({ ...files(bart), weights: noPositions }),
    'loadPretrained: weights: tensor "encoder.embed_positions.weight" [42,16] is missing (is the file from another model?)');
  // BART's own tokenizer.json layout: RobertaProcessing (<s> $A </s>) gives the TemplateProcessing ids
  const roberta = { ...JSON.parse(text(`${bart}/tokenizer.json`)), post_processor: { type: 'RobertaProcessing', sep: ['</s>', 257], cls: ['<s>', 258], trim_offsets: true, add_prefix_space: false } };
  const rb = await as.loadPretrained({ ...files(bart), tokenizer: roberta });
  try {
    const want = JSON.parse(text(`${bart}/expected.json`)).pairs[0];
    assert.deepEqual(Array.from(rb.run({ source: want.source }).source.ids), want.source_ids);
  } finally {
    rb.delete();
  }
  // a source longer than the learned position table
  const model = await as.loadPretrained(files(bart));
  try {
    assert.throws(() => model.run({ source: 'x'.repeat(60) }), { name: 'RangeError' });
    const want = JSON.parse(text(`${bart}/expected.json`)).pairs[0];
    assert.deepEqual(Array.from(model.run({ source: want.source, target: want.target }).next.ids), want.next.ids);
  } finally {
    model.delete();
  }
});
