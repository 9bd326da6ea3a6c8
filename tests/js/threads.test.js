// threads.test.js: createAttnScope({ threads }) (API.md extension, issue 16) — option checks with exact
// messages, as.threads, results with 2 threads equal to 1 thread (MHA against a float64 reference too, a
// bundled model, the tiny GPT-2 fixture against its PyTorch outputs), a child `node` that used threads and
// exits by itself, and an engine error in a threaded call that leaves the module usable.
// Threads need the SIMD128 build: with ATTNSCOPE_SIMD=false the threaded cases check the refusal instead.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { assertClose, mhaReference, randomF32, root } from './helpers.js';
import { layout } from './support/safetensors.mjs';
import { llamaCheckpoint, llamaTensors } from './support/llama.mjs';

const scalarOnly = process.env.ATTNSCOPE_SIMD === 'false';
const one = await createAttnScope({ simd: scalarOnly ? false : 'auto', threads: 1 });
const two = scalarOnly ? null : await createAttnScope({ threads: 2 });

function rejectsExactly(promise, Kind, message) {
  return assert.rejects(promise, (e) => {
    assert.equal(e.constructor, Kind, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.message, message);
    return true;
  });
}

test('createAttnScope: threads must be auto or an integer from 1 to 16; relaxedSimd checked', async () => {
  await rejectsExactly(createAttnScope({ threads: 0 }), RangeError, "createAttnScope: threads (0) must be 'auto' or an integer from 1 to 16");
  await rejectsExactly(createAttnScope({ threads: 1.5 }), RangeError, "createAttnScope: threads (1.5) must be 'auto' or an integer from 1 to 16");
  await rejectsExactly(createAttnScope({ threads: 17 }), RangeError, "createAttnScope: threads (17) must be 'auto' or an integer from 1 to 16");
  await rejectsExactly(createAttnScope({ threads: 'two' }), TypeError, "createAttnScope: threads ('two') must be 'auto' or an integer from 1 to 16");
  await rejectsExactly(createAttnScope({ relaxedSimd: 'yes' }), TypeError, "createAttnScope: relaxedSimd (yes) must be 'auto', true or false");
  await rejectsExactly(createAttnScope({ simd: false, threads: 2 }), Error,
    'createAttnScope: threads (2) needs the SIMD128 build (the threaded module is SIMD128 only); use threads: 1 with simd: false');
  assert.equal(one.threads, 1);
  assert.equal(one.relaxedSimd, false);
  if (two) {
    assert.equal(two.threads, 2);
    assert.equal(two.simd, true);
  }
});

test('multiHeadAttention: 2 threads equal 1 thread and the float64 reference (n 128, d 256, 8 heads)', { skip: scalarOnly && 'threads need SIMD128' }, () => {
  const n = 128, d = 256, h = 8;
  const query = randomF32(n * d, 1);
  const w = { wq: randomF32(d * d, 2, 0.1), wk: randomF32(d * d, 3, 0.1), wv: randomF32(d * d, 4, 0.1), wo: randomF32(d * d, 5, 0.1) };
  const args = { query, nq: n, dModel: d, numHeads: h, ...w };
  const r1 = one.multiHeadAttention(args);
  const r2 = two.multiHeadAttention(args);
  assertClose(r2.output, r1.output, { atol: 1e-6, rtol: 1e-6, what: 'output, 2 threads vs 1' });
  assertClose(r2.weights, r1.weights, { atol: 1e-7, rtol: 1e-6, what: 'weights, 2 threads vs 1' });
  assertClose(r2.output, mhaReference(query, n, d, h, w), { atol: 1e-4, rtol: 1e-3, what: 'output vs float64' });
  // without weights (one scratch buffer per thread)
  const r3 = two.multiHeadAttention({ ...args, needWeights: false, causal: true });
  const r4 = one.multiHeadAttention({ ...args, needWeights: false, causal: true });
  assertClose(r3.output, r4.output, { atol: 1e-6, rtol: 1e-6, what: 'causal output without weights' });
});

test('multiHeadAttention: 9 heads on 2 threads (18 half-heads: rows split inside a head) equal 1 thread bit for bit', { skip: scalarOnly && 'threads need SIMD128' }, () => {
  const n = 128, d = 288, h = 9;
  const w = { wq: randomF32(d * d, 12, 0.1), wk: randomF32(d * d, 13, 0.1), wv: randomF32(d * d, 14, 0.1), wo: randomF32(d * d, 15, 0.1) };
  const mask = new Uint8Array(n * n).map((_, i) => (i % 7 === 3 ? 0 : 1));
  for (const extra of [{ causal: true }, { mask }, { causal: true, mask, needWeights: false }]) {
    const args = { query: randomF32(n * d, 11), nq: n, dModel: d, numHeads: h, ...w, ...extra };
    const r1 = one.multiHeadAttention(args);
    const r2 = two.multiHeadAttention(args);
    const what = Object.keys(extra).join(', ');
    assert.deepEqual(Array.from(r2.output), Array.from(r1.output), `output (${what})`);
    if (r1.weights) assert.deepEqual(Array.from(r2.weights), Array.from(r1.weights), `weights (${what})`);
  }
});

test('model.run: the english bundled model with 2 threads equals 1 thread', { skip: scalarOnly && 'threads need SIMD128' }, async () => {
  const m1 = await one.loadBundled('english');
  const m2 = await two.loadBundled('english');
  try {
    const text = 'the quick brown fox jumps over the lazy dog, and then it runs away into the forest of pines.';
    const r1 = m1.run(text, { trace: 'weights' });
    const r2 = m2.run(text, { trace: 'weights' });
    assert.deepEqual(Array.from(r2.ids), Array.from(r1.ids));
    for (let i = 0; i < r1.layers.length; i++) {
      assertClose(r2.layers[i].attention.weights, r1.layers[i].attention.weights, { atol: 1e-6, rtol: 1e-5, what: `layer ${i} weights` });
      assertClose(r2.layers[i].output, r1.layers[i].output, { atol: 1e-5, rtol: 1e-5, what: `layer ${i} output` });
    }
  } finally {
    m1.delete();
    m2.delete();
  }
});

test('loadPretrained: the GPT-2 fixture with 2 threads matches PyTorch and 1 thread', { skip: scalarOnly && 'threads need SIMD128' }, async () => {
  const dir = new URL('../fixtures/hf/gpt2-lmhead-f32/', import.meta.url);
  const want = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
  const load = (as) => as.loadPretrained({
    config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)),
    tokenizer: makeGpt2TokenizerJson({ merges: 'strings' }),
  });
  const m1 = await load(one);
  const m2 = await load(two);
  try {
    for (const t of want.texts) {
      const r1 = m1.run(t.text);
      const r2 = m2.run(t.text);
      assert.deepEqual(Array.from(r2.ids), t.ids);
      for (let i = 0; i < r2.layers.length; i++) {
        assertClose(r2.layers[i].attention.weights, t.attentions[i], { ...want.tolerance.attentions, what: `attentions[${i}] vs PyTorch` });
        assertClose(r2.layers[i].attention.weights, r1.layers[i].attention.weights, { atol: 1e-6, rtol: 1e-5, what: `attentions[${i}] vs 1 thread` });
      }
      assertClose(r2.output, t.last_hidden_state, { ...want.tolerance.hidden_states, what: 'last_hidden_state vs PyTorch' });
      assertClose(r2.output, r1.output, { atol: 1e-5, rtol: 1e-5, what: 'last_hidden_state vs 1 thread' });
    }
  } finally {
    m1.delete();
    m2.delete();
  }
});

// A tied BF16 head big enough to be split over the pool (2 · vocab · hidden ≥ 8 MFLOP: heads.cpp lm_logits): a
// 1-layer Llama with a 32,768-row table, random at test time.
function tiedLlama() {
  const V = 32768, D = 128, FF = 256;
  const config = {
    model_type: 'llama', vocab_size: V, hidden_size: D, intermediate_size: FF, num_hidden_layers: 1,
    num_attention_heads: 2, num_key_value_heads: 1, max_position_embeddings: 256, rms_norm_eps: 1e-5,
    rope_theta: 10000, tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
  };
  const shapes = llamaTensors(config);
  const file = layout(shapes.map(([name, shape]) => ({ name, dtype: 'BF16', shape })));
  const bits = new Uint16Array(file.data.buffer, file.data.byteOffset, file.data.byteLength / 2);
  const values = randomF32(bits.length, 7);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < bits.length; i++) { f[0] = values[i] * 0.2; bits[i] = u[0] >>> 16; }
  for (const [name, shape] of shapes) { // norms at 1 (BF16 0x3F80)
    if (name.endsWith('norm.weight')) bits.fill(0x3F80, file.offsets.get(name)[0] / 2, file.offsets.get(name)[0] / 2 + shape[0]);
  }
  const tokenizer = readFileSync(new URL('../fixtures/modern/llama-bf16-tied-mqa-headdim-linear-v5/tokenizer.json', import.meta.url), 'utf8');
  return { config: JSON.stringify(config), weights: file.bytes, tokenizer };
}

test('loadPretrained: a tied BF16 head of 32,768 rows split over 2 threads gives the 1-thread logits bit for bit', { skip: scalarOnly && 'threads need SIMD128' }, async () => {
  const files = tiedLlama();
  const m1 = await one.loadPretrained(files);
  const m2 = await two.loadPretrained(files);
  try {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const r1 = m1.run(text, { trace: 'none', topK: 50 });
    const r2 = m2.run(text, { trace: 'none', topK: 50 });
    assert.deepEqual(Array.from(r2.next.ids), Array.from(r1.next.ids));
    assert.deepEqual(Array.from(r2.next.probs), Array.from(r1.next.probs));
    assert.ok(Math.max(...r1.next.ids) > 256, 'the top-50 reaches rows past the tokenizer\'s own ids');
    const g1 = m1.generate(text, { maxNewTokens: 6 });
    const g2 = m2.generate(text, { maxNewTokens: 6 });
    assert.deepEqual(Array.from(g2.ids), Array.from(g1.ids));
  } finally {
    m1.delete();
    m2.delete();
  }
});

// A SmolLM2-shaped layer (hidden 576, 9 query heads sharing 3 K/V heads, intermediate 1,536) and a 256-token prompt:
// large enough that every piece issue 30 put on the pool runs there at 2 threads — the SiLU gate, the RMSNorms, RoPE,
// the attention in 18 half-heads (9 heads do not divide over 2 threads), and in decoding the 576-wide GEMVs.
test('loadPretrained: a 9-head BF16 Llama layer with 2 threads gives the 1-thread results bit for bit (prefill and decode)', { skip: scalarOnly && 'threads need SIMD128' }, async () => {
  const config = {
    model_type: 'llama', vocab_size: 1024, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 1,
    num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64, max_position_embeddings: 1024, rms_norm_eps: 1e-5,
    rope_theta: 100000, tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
  };
  const files = {
    config: JSON.stringify(config), weights: llamaCheckpoint(config, { scale: 0.1 }),
    tokenizer: readFileSync(new URL('../fixtures/modern/llama-bf16-tied-mqa-headdim-linear-v5/tokenizer.json', import.meta.url), 'utf8'),
  };
  const m1 = await one.loadPretrained(files);
  const m2 = await two.loadPretrained(files);
  try {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(6).slice(0, 256);
    for (const trace of ['none', 'weights']) {
      const r1 = m1.run(text, { trace, topK: 20 });
      const r2 = m2.run(text, { trace, topK: 20 });
      assert.ok(r1.n >= 256, `${r1.n} tokens`);
      assert.deepEqual(Array.from(r2.next.ids), Array.from(r1.next.ids));
      assert.deepEqual(Array.from(r2.next.probs), Array.from(r1.next.probs), `next-token probabilities (trace '${trace}')`);
      assert.deepEqual(Array.from(r2.output), Array.from(r1.output), `last hidden state (trace '${trace}')`);
      if (trace === 'weights') {
        assert.deepEqual(Array.from(r2.layers[0].attention.weights), Array.from(r1.layers[0].attention.weights), 'attention weights');
      }
    }
    const g1 = m1.generate(text.slice(0, 40), { maxNewTokens: 8 });
    const g2 = m2.generate(text.slice(0, 40), { maxNewTokens: 8 });
    assert.deepEqual(Array.from(g2.ids), Array.from(g1.ids));
  } finally {
    m1.delete();
    m2.delete();
  }
});

test('threads: a node process that used 2 threads exits by itself', { skip: scalarOnly && 'threads need SIMD128' }, () => {
  const script = `
    import { createAttnScope } from 'attnscope';
    const as = await createAttnScope({ threads: 2 });
    const n = 128, d = 256, x = new Float32Array(n * d).fill(0.01), w = new Float32Array(d * d).fill(0.01);
    const r = as.multiHeadAttention({ query: x, nq: n, dModel: d, numHeads: 8, wq: w, wk: w, wv: w, wo: w });
    console.log(as.threads, r.output.length);`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, timeout: 60_000, encoding: 'utf8' });
  assert.equal(child.signal, null, `killed by ${child.signal} (still running after 60 s): ${child.stderr}`);
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), `2 ${128 * 256}`);
});

test('threads: an engine error in a threaded call leaves the module usable', { skip: scalarOnly && 'threads need SIMD128' }, () => {
  const n = 64, d = 128;
  const w = randomF32(d * d, 7, 0.1);
  const args = { query: randomF32(n * d, 8), nq: n, dModel: d, numHeads: 4, wq: w, wk: w, wv: w, wo: w };
  const before = two.multiHeadAttention(args);
  // finite inputs whose scores overflow float32: the core reports it after the threaded head loop
  assert.throws(() => two.multiHeadAttention({ ...args, query: new Float32Array(n * d).fill(1e30) }),
    { name: 'RangeError', message: 'multiHeadAttention: scores is not finite: an intermediate value overflowed float32 (inputs too large)' });
  const after = two.multiHeadAttention(args);
  assertClose(after.output, before.output, { atol: 0, rtol: 0, what: 'output after the error' });
  assertClose(after.output, one.multiHeadAttention(args).output, { atol: 1e-6, rtol: 1e-6, what: 'vs 1 thread' });
});

test('as.startup: why one thread runs, and no build fell back where every build starts', { skip: scalarOnly && 'threads need SIMD128' }, async () => {
  assert.deepEqual(one.startup, { fallbacks: [], singleThread: 'requested' });
  assert.deepEqual(two.startup, { fallbacks: [], singleThread: null });
  assert.ok(Object.isFrozen(one.startup) && Object.isFrozen(one.startup.fallbacks));
  const scalar = await createAttnScope({ simd: false });
  assert.deepEqual(scalar.startup, { fallbacks: [], singleThread: 'no-simd' });
  assert.equal(scalar.threads, 1);
});
