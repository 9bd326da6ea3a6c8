// pretrained-stream.test.js: loadPretrained's streamWeights (README "Streamed weights"; src/model/layer_stream.h)
// through the public package. The decoder layers and the token tables stay in the file: each layer is read before
// its forward, the embedding rows of a run's ids before the first, and the head's table in pieces after the last.
// run (every layer's attention and output, output, next, the logit lens, logProbs), the tiled path (heads list +
// summaries) and generate are BIT-IDENTICAL to the same checkpoint held resident, with the weights given as bytes or
// (Node) as a file path, float32, F16 and BF16, tied and untied heads (Gemma's scaled rows too), one and two layers,
// a single file and two shards in reverse order. A file that changes size is an Error naming run, the file and the
// tensor, and the model works again once the file is back; the wasm heap holds neither the other layers nor the
// tables. (The reads themselves are counted by attnscope_test_stream.)
import test from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';
import { llamaCheckpoint } from './support/llama.mjs';

const as = await createAttnScope({ simd: SIMD });
const DIR = new URL('../fixtures/modern/', import.meta.url);
const path = (p) => fileURLToPath(new URL(p, DIR));
const text = (p) => readFileSync(new URL(p, DIR), 'utf8');

/** Equal bit for bit: the same Float32Array / Int32Array bytes. */
function same(a, b, what) {
  assert.equal(a.length, b.length, `${what}: length`);
  assert.ok(Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)), `${what}: not bit-identical`);
}

function sameRuns(resident, streamed, input, options, what) {
  const a = resident.run(input, options);
  const b = streamed.run(input, options);
  assert.equal(a.layers.length, b.layers.length);
  a.layers.forEach((l, i) => {
    if (l.attention?.weights) same(l.attention.weights, b.layers[i].attention.weights, `${what} layer ${i} attention`);
    if (l.output) same(l.output, b.layers[i].output, `${what} layer ${i} output`);
    if (l.attention?.summary) same(l.attention.summary.entropy, b.layers[i].attention.summary.entropy, `${what} layer ${i} summary`);
    if (l.attention?.summary) same(l.attention.summary.topWeights, b.layers[i].attention.summary.topWeights, `${what} layer ${i} top-k`);
  });
  if (a.heads) a.heads.forEach((h, i) => same(h.weights, b.heads[i].weights, `${what} head map ${i}`));
  same(a.output, b.output, `${what} output`);
  assert.deepEqual(Array.from(b.next.ids), Array.from(a.next.ids));
  same(a.next.probs, b.next.probs, `${what} next.probs`);
  a.layers.forEach((l, i) => {
    if (!l.lens) return;
    same(l.lens.ids, b.layers[i].lens.ids, `${what} layer ${i} lens ids`);
    same(l.lens.probs, b.layers[i].lens.probs, `${what} layer ${i} lens probs`);
  });
  if (a.logProbs) same(a.logProbs, b.logProbs, `${what} logProbs`);
}

test('streamWeights: run, lens, logProbs, tiled summaries and generate equal the resident model bit for bit', async () => {
  // untied: Llama F32, Mistral F16; tied: Llama BF16, Qwen3 BF16, Gemma 3 BF16 (rows scaled by sqrt(d))
  for (const name of ['llama-f32-untied-gqa-llama3', 'llama-bf16-tied-mqa-headdim-linear-v5', 'qwen3-bf16-qknorm-headdim',
    'mistral-f16-window-dynamic', 'gemma3-bf16-local-rope']) {
    const config = JSON.parse(text(`${name}/config.json`));
    const tokenizer = text(`${name}/tokenizer.json`);
    const bytes = readFileSync(path(`${name}/model.safetensors`));
    for (const layers of [1, config.num_hidden_layers]) {
      const c = { ...config, num_hidden_layers: layers };
      const resident = await as.loadPretrained({ config: c, weights: bytes, tokenizer });
      for (const weights of [bytes, path(`${name}/model.safetensors`)]) {
        const what = `${name}, ${layers} layer(s), weights as ${typeof weights === 'string' ? 'a path' : 'bytes'}`;
        const streamed = await as.loadPretrained({ config: c, weights, tokenizer, streamWeights: true });
        try {
          assert.equal(streamed.config.checkpoint.streamed, true);
          assert.equal(resident.config.checkpoint.streamed, false);
          for (const input of ['Hello world', 'The cat sat on the mat.']) {
            sameRuns(resident, streamed, input, undefined, what);
            sameRuns(resident, streamed, input, { heads: [{ layer: 0, head: 1 }, { layer: layers - 1, head: 0 }], summaries: true }, `${what} tiled`);
            sameRuns(resident, streamed, input, { trace: 'none', lens: 3, logProbs: true }, `${what} lens`);
            assert.deepEqual(streamed.generate(input, { maxNewTokens: 4 }), resident.generate(input, { maxNewTokens: 4 }));
          }
        } finally {
          streamed.delete();
        }
      }
      resident.delete();
    }
  }
});

test('streamWeights: two shards given as paths in reverse order equal the single resident file', async () => {
  const name = 'llama-f32-untied-gqa-llama3';
  const config = text(`${name}/config.json`);
  const tokenizer = text(`${name}/tokenizer.json`);
  const resident = await as.loadPretrained({ config, weights: readFileSync(path(`${name}/model.safetensors`)), tokenizer });
  const shards = [path(`${name}/sharded/model-00002-of-00002.safetensors`), path(`${name}/sharded/model-00001-of-00002.safetensors`)];
  const streamed = await as.loadPretrained({ config, weights: shards, tokenizer, streamWeights: true });
  sameRuns(resident, streamed, 'Hello world', undefined, 'two shards');
  streamed.delete();
  resident.delete();
});

test('streamWeights: the layers and the token tables stay out of the wasm heap', async () => {
  // a 4-layer Llama of hidden 256, FFN 768, BF16 (tests/js/support/llama.mjs): each layer is 1,311,744 bytes; a
  // vocabulary of 32,000 rows makes the table 16,384,000 bytes (the fixture's tokenizer has 258 of them). Tied, and
  // untied (lm_head.weight as large again; the stream then also holds a transposed piece, 8 MiB)
  for (const tied of [true, false]) {
    const config = { ...JSON.parse(text('llama-bf16-tied-mqa-headdim-linear-v5/config.json')), hidden_size: 256, intermediate_size: 768,
      num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64, vocab_size: 32000, tie_word_embeddings: tied };
    const weights = llamaCheckpoint(config);
    const options = { config, weights, tokenizer: text('llama-bf16-tied-mqa-headdim-linear-v5/tokenizer.json') };
    const held = async (streamWeights) => {
      const before = as.memoryStats().allocated;
      const model = await as.loadPretrained({ ...options, streamWeights });
      const after = as.memoryStats().allocated;
      const r = model.run('Hello', { lens: 2, logProbs: true });
      model.delete();
      return { bytes: after - before, r };
    };
    const resident = await held(false);
    const streamed = await held(true);
    same(resident.r.output, streamed.r.output, 'mid-size model');
    same(resident.r.next.probs, streamed.r.next.probs, 'mid-size model next.probs');
    same(resident.r.logProbs, streamed.r.logProbs, 'mid-size model logProbs');
    resident.r.layers.forEach((l, i) => same(l.lens.probs, streamed.r.layers[i].lens.probs, `mid-size model lens ${i}`));
    // layers 1..3 and the tables are not held (BF16 matrices 2 bytes a value, the two norms widened to 4); the stream
    // holds its 8 MiB read piece (and, untied, the transposed piece) and a few KB of where-is-what
    const d = 256, f = 768, q = 4 * 64, kv = 2 * 64;
    const layer = 2 * (q * d + 2 * kv * d + d * q + 3 * f * d) + 4 * 2 * d;
    const tables = (tied ? 1 : 2) * 2 * 32000 * d;
    const saved = resident.bytes - (streamed.bytes - (tied ? 1 : 2) * (8 << 20));
    const want = 3 * layer + tables;
    assert.ok(saved > want - 16384 && saved <= want, `tied ${tied}: resident ${resident.bytes}, streamed ${streamed.bytes}: saved ${saved}, 3 layers and the tables ${want}`);
  }
});

test('streamWeights: a file that changes size is an Error naming run and the file; the model works again after', async () => {
  const name = 'llama-bf16-tied-mqa-headdim-linear-v5';
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-stream-'));
  const file = join(dir, 'model.safetensors');
  copyFileSync(path(`${name}/model.safetensors`), file);
  const original = readFileSync(file);
  try {
    const model = await as.loadPretrained({ config: text(`${name}/config.json`), weights: file, tokenizer: text(`${name}/tokenizer.json`), streamWeights: true });
    const good = model.run('Hello');
    truncateSync(file, original.length - 10);
    assert.throws(() => model.run('Hello'), (e) => {
      // the run's first read: the embedding rows of its ids
      assert.match(e.message, /^run: weights: reading the embedding table \(tensor "model\.embed_tokens\.weight", bytes \d+ to \d+ of weights\) failed: the file '.*model\.safetensors' changed size \(\d+ bytes when loaded, \d+ now\)$/);
      return true;
    });
    assert.throws(() => model.generate('Hello', { maxNewTokens: 2 }), (e) => e.message.startsWith('generate: weights: reading the embedding table (tensor "model.embed_tokens.weight"'));
    writeFileSync(file, original);
    same(good.output, model.run('Hello').output, 'after the file came back');
    model.delete();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('streamWeights: argument errors name the option', async () => {
  const name = 'llama-bf16-tied-mqa-headdim-linear-v5';
  const options = { config: text(`${name}/config.json`), weights: readFileSync(path(`${name}/model.safetensors`)), tokenizer: text(`${name}/tokenizer.json`) };
  await assert.rejects(as.loadPretrained({ ...options, streamWeights: 'yes' }), { name: 'TypeError', message: 'loadPretrained: streamWeights must be a boolean, got string' });
  await assert.rejects(as.loadPretrained({ ...options, streamWeights: true, weights8: true }),
    { name: 'TypeError', message: 'loadPretrained: streamWeights and weights8 cannot be combined (streamed layers are read at their stored width)' });
  await assert.rejects(as.loadPretrained({ ...options, streamWeights: true, weights: new Blob([options.weights]) }), {
    name: 'TypeError',
    message: "loadPretrained: streamWeights reads each layer synchronously while the model runs, which a Blob/File allows only in a Web Worker (FileReaderSync); in Node give the file path (weights: '/path/model.safetensors') or its bytes (weights)",
  });
  await assert.rejects(as.loadPretrained({ ...options, weights: '/nonexistent/model.safetensors' }),
    { message: "loadPretrained: weights: cannot read '/nonexistent/model.safetensors' (ENOENT)" });
  const bert = new URL('../fixtures/hf/bert-model-f32/', import.meta.url);
  await assert.rejects(as.loadPretrained({
    config: readFileSync(new URL('config.json', bert), 'utf8'), weights: readFileSync(new URL('model.safetensors', bert)),
    tokenizer: readFileSync(new URL('tokenizer.json', bert), 'utf8'), streamWeights: true,
  }), { message: 'loadPretrained: streamWeights: only decoder-only checkpoints (llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3) stream their layers; this is a bert checkpoint (load it without streamWeights)' });
  // and the module still loads and runs
  const ok = await as.loadPretrained({ ...options, streamWeights: true });
  assert.equal(ok.run('ok').ids.length > 0, true);
  ok.delete();
});

test('as.streamableModelTypes: exactly the model_types that stream (every modern fixture loads streamed; BERT and the encoder–decoders are refused)', async () => {
  const types = as.streamableModelTypes;
  assert.ok(Array.isArray(types) && types.every((t) => typeof t === 'string'));
  types.push('changed');
  assert.ok(!as.streamableModelTypes.includes('changed'), 'a fresh array each time');
  // the fixtures Hugging Face wrote (tests/fixtures/modern/generate_models.py): one folder or more per decoder family
  const modern = readdirSync(DIR).filter((d) => existsSync(new URL(`${d}/config.json`, DIR)));
  const fixtureTypes = [...new Set(modern.map((d) => JSON.parse(text(`${d}/config.json`)).model_type))].sort();
  assert.deepEqual([...as.streamableModelTypes].sort(), fixtureTypes);
  for (const d of modern) {
    const m = await as.loadPretrained({ config: text(`${d}/config.json`), weights: path(`${d}/model.safetensors`), tokenizer: text(`${d}/tokenizer.json`), streamWeights: true });
    assert.equal(m.config.checkpoint.streamed, true, d);
    m.delete();
  }
  for (const dir of ['hf/bert-model-f32/', 'encdec/t5-f32-relu-untied/', 'encdec/bart-f16/', 'encdec/marian-f32/']) {
    const at = new URL(`../fixtures/${dir}`, import.meta.url);
    const config = readFileSync(new URL('config.json', at), 'utf8');
    assert.ok(!as.streamableModelTypes.includes(JSON.parse(config).model_type), dir);
    const tokenizer = readFileSync(new URL('tokenizer.json', at), 'utf8');
    await assert.rejects(as.loadPretrained({ config, weights: readFileSync(new URL('model.safetensors', at)), tokenizer, streamWeights: true }),
      (e) => /^loadPretrained: streamWeights: only decoder-only checkpoints \(/.test(e.message), dir);
  }
});
