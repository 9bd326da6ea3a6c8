// load-half-width-reserve.test.js (issues 25, 30, 31): loadPretrained reserves what the weights take at their
// stored width. BF16 / F16 matrices stay 2 bytes a value in the heap (issue 30), so the reservation made before the
// loader allocates (issue 31: out of memory as an Error) must count them at 2 bytes, not 4: counted as float32, a
// Llama-3.2-1B checkpoint (2.47 GB of BF16) asked for 4.7 GB and could not load in wasm32 at all.
// The small-shape stand-in: wasm memory may grow only to the module's start + what the BF16 weights need + a margin,
// less than the same weights as float32. A BF16 checkpoint must load within that cap and run; its F32 twin (twice
// the bytes) must give loadPretrained's out-of-memory Error, which names the need at 4 bytes a value.
// The same for a long run at trace 'none' (the page's 2,048-token path: heads 'none', summaries): run reserves for
// the text's UTF-8 bytes (one token each at most), not its JS length × 3, and for what a layer keeps at trace 'none'
// (its output), not 6 n d: with those, a 1B-shaped model's 2,048-token run asked for 2.7 GB on top of 2.5 GB of weights.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';
import { llamaCheckpoint, llamaTensors } from './support/llama.mjs';

const TOKENIZER = readFileSync(new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/tokenizer.json', import.meta.url), 'utf8');
const D = 1024;
const FF = 2048;
const LAYERS = 4;
const VOCAB = 258;
const CONFIG = {
  model_type: 'llama', vocab_size: VOCAB, hidden_size: D, intermediate_size: FF, num_hidden_layers: LAYERS,
  num_attention_heads: 16, num_key_value_heads: 4, max_position_embeddings: 2048, rms_norm_eps: 1e-5,
  rope_theta: 10000, tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
};
const TENSORS = llamaTensors(CONFIG);
const VALUES = TENSORS.reduce((a, [, shape]) => a + shape.reduce((x, y) => x * y, 1), 0); // ~38 M

/** The checkpoint in `dtype` ('BF16' or 'F32'): seeded values in ±0.02, norms 1. */
const checkpoint = (dtype) => llamaCheckpoint(CONFIG, { dtype, seed: 7, scale: 0.04 });

// growth past `cap` total bytes fails, as a browser refusing more memory does
const realGrow = WebAssembly.Memory.prototype.grow;
let cap = Infinity;
WebAssembly.Memory.prototype.grow = function grow(pages) {
  if (this.buffer.byteLength + pages * 65536 > cap) {
    throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded (test cap)');
  }
  return realGrow.call(this, pages);
};
test.after(() => { WebAssembly.Memory.prototype.grow = realGrow; });

test('loadPretrained reserves BF16 matrices at 2 bytes a value: a BF16 checkpoint loads and runs under a cap the same weights as float32 exceed', async () => {
  const as = await createAttnScope({ simd: SIMD, threads: 1 });
  const start = as.memoryStats().heapSize;
  // BF16: 2 bytes a value (+ the loader's 24 MB of chunk buffers, the tokenizer and a run's few MB); float32: 4
  cap = start + VALUES * 2 + 56 * 2 ** 20;
  assert.ok(cap < start + VALUES * 4, 'the cap must be below what the weights take as float32, or the test tests nothing');
  try {
    const model = await as.loadPretrained({ config: CONFIG, weights: checkpoint('BF16'), tokenizer: TOKENIZER });
    assert.ok(as.memoryStats().heapSize <= cap);
    assert.equal(model.config.checkpoint.dtype, 'BF16');
    const r = model.run('the cat sat', { trace: 'none', topK: 1 });
    assert.equal(r.ids.length, 11);
    assert.ok(r.next.probs[0] > 0 && r.next.probs[0] <= 1);
    model.delete();
    // the float32 twin needs twice the weight bytes: over the cap, a clear Error naming the need, nothing kept
    const before = as.memoryStats().allocated;
    await assert.rejects(as.loadPretrained({ config: CONFIG, weights: checkpoint('F32'), tokenizer: TOKENIZER }), (e) => {
      assert.ok(!(e instanceof WebAssembly.RuntimeError), e.message);
      assert.match(e.message, /^loadPretrained: out of memory: loading the weights needs about (\d+) MB/);
      const mb = Number(/about (\d+) MB/.exec(e.message)[1]);
      assert.ok(mb >= VALUES * 4 / 2 ** 20, `stated need ${mb} MB is below the float32 weights' ${(VALUES * 4 / 2 ** 20).toFixed(0)} MB`);
      return true;
    });
    assert.equal(as.memoryStats().allocated, before);
  } finally {
    cap = Infinity;
  }
});

test('run at trace \'none\' reserves for the text\'s bytes and the layers\' outputs: a 1,200-byte run fits where the old estimate (3 × length, 6 n d a layer) did not', async () => {
  const as = await createAttnScope({ simd: SIMD, threads: 1 });
  const model = await as.loadPretrained({ config: CONFIG, weights: checkpoint('BF16'), tokenizer: TOKENIZER });
  // what run() may add: 200 MB. Reserved now: ~105 MB (n = 1,208 tokens, one layer's transients; with heads 'none'
  // no layer keeps its output since run option layerOutputs, layer-outputs.test.js; ~177 MB with them); before: n
  // counted as 2,048 (the position limit) and 6 n d a layer, ~460 MB
  cap = as.memoryStats().heapSize + 200 * 2 ** 20;
  try {
    const words = 'the quick brown fox jumps over the lazy dog ';
    const text = words.repeat(Math.ceil(1200 / words.length)).slice(0, 1200);
    const r = model.run(text, { heads: 'none', summaries: true, topK: 1 });
    assert.equal(r.ids.length, 1200);
    assert.ok(r.layers[LAYERS - 1].attention.summary, 'the last layer has its per-head summaries');
    assert.ok(as.memoryStats().heapSize <= cap);
  } finally {
    cap = Infinity;
    model.delete();
  }
});
