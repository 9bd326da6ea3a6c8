// layer-outputs.test.js (issues 28 and 30): a long run through a many-layer model holds one layer's activations, not
// every layer's. Run option `layerOutputs` (default false with `heads` 'none' or a list) leaves `layers[i].output`
// out, and the feed-forward of every layer that does not keep ffHidden runs over blocks of 384 rows
// (model/block.h kFeedForwardRows), so its [n, dFF] gate and up never exist whole. Nothing else may change: the
// blocked feed-forward must give bit for bit the one-pass result (the full trace still runs it in one pass, keeping
// ffHidden), and a run without the outputs everything a run with them gives. run()'s out-of-memory reservation
// (bindings/embind/memory_reserve.h run_bytes) follows: without the outputs it no longer grows with the layers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';
import { llamaCheckpoint } from './support/llama.mjs';

const TOKENIZER = readFileSync(new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/tokenizer.json', import.meta.url), 'utf8');
const words = 'the quick brown fox jumps over the lazy dog ';
const textOf = (bytes) => words.repeat(Math.ceil(bytes / words.length)).slice(0, bytes);

// a Llama-shaped config.json: vocabulary of the byte-level tokenizer, RoPE, grouped K/V heads, tied head
const llama = (hidden, ff, layers, heads, kv, positions) => ({
  model_type: 'llama', vocab_size: 258, hidden_size: hidden, intermediate_size: ff, num_hidden_layers: layers,
  num_attention_heads: heads, num_key_value_heads: kv, max_position_embeddings: positions, rms_norm_eps: 1e-5,
  rope_theta: 10000, tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
});

const same = (a, b, what) => {
  assert.ok(a instanceof Float32Array && b instanceof Float32Array, `${what}: both present`);
  assert.equal(a.length, b.length, `${what}: length`);
  const u = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const v = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < u.length; i++) {
    if (u[i] !== v[i]) assert.fail(`${what}: element ${i} differs: ${a[i]} vs ${b[i]}`);
  }
};

test('blocked feed-forward and dropped layer outputs: bit for bit what the one-pass, all-outputs runs give', async () => {
  const as = await createAttnScope({ simd: SIMD, threads: 1 });
  // d_ff 176: rows × d_ff of a block (384 × 176) is a multiple of the SIMD width, as kFeedForwardRows promises
  const config = llama(64, 176, 3, 4, 2, 1024);
  const model = await as.loadPretrained({ config, weights: llamaCheckpoint(config, { scale: 0.3 }), tokenizer: TOKENIZER });
  try {
    const text = textOf(800); // 800 tokens: blocks of 384, 384 and 32 rows
    const full = model.run(text, { trace: 'full' }); // ffHidden kept: the feed-forward in one pass
    const none = model.run(text, { trace: 'none' }); // the same attention, the feed-forward in row blocks
    assert.equal(full.ids.length, 800);
    full.layers.forEach((l, i) => {
      assert.equal(l.ffHidden.length, 800 * 176);
      assert.equal(none.layers[i].ffHidden, undefined);
      same(none.layers[i].output, l.output, `trace 'none' layer ${i} output`);
    });
    same(none.output, full.output, 'output');
    assert.deepEqual(Array.from(none.next.ids), Array.from(full.next.ids));
    same(none.next.probs, full.next.probs, 'next.probs');
    // a single last row joins the block before (one row alone would take the GEMV path): 769 = 384 + 385
    const odd = textOf(769);
    const oddFull = model.run(odd, { trace: 'full' });
    const oddNone = model.run(odd, { trace: 'none' });
    same(oddNone.output, oddFull.output, '769 tokens: output');

    // heads 'none': no layer output unless asked; everything else identical to the run that keeps them
    const list = [{ layer: 1, head: 2 }];
    const lean = model.run(text, { heads: list, summaries: { topK: 3 } });
    const kept = model.run(text, { heads: list, summaries: { topK: 3 }, layerOutputs: true });
    lean.layers.forEach((l, i) => {
      assert.equal(l.output, undefined, `layer ${i} keeps no output by default with heads`);
      assert.equal(kept.layers[i].output.length, 800 * 64);
      for (const key of ['entropy', 'distance', 'sink', 'topWeights']) {
        same(l.attention.summary[key], kept.layers[i].attention.summary[key], `layer ${i} summary.${key}`);
      }
      assert.deepEqual(Array.from(l.attention.summary.topIds), Array.from(kept.layers[i].attention.summary.topIds));
    });
    same(lean.output, kept.output, 'heads list: output');
    same(lean.heads[0].weights, kept.heads[0].weights, 'heads list: the map');
    same(lean.next.probs, kept.next.probs, 'heads list: next.probs');
    // the tiled layers equal the materialised ones within float32 rounding (tests/js/summaries.test.js): a check that
    // the outputs kept on request are the layers' own
    const scale = full.layers[2].output.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const err = kept.layers[2].output.reduce((m, x, i) => Math.max(m, Math.abs(x - full.layers[2].output[i])), 0);
    assert.ok(err <= 1e-5 * scale, `tiled layer 2 vs materialised ${err} (scale ${scale})`);

    // layerOutputs false at any trace; a layer in `full` keeps its output anyway; the lens still reads them
    const noOut = model.run(text, { trace: 'none', layerOutputs: false, full: [1] });
    assert.equal(noOut.layers[0].output, undefined);
    same(noOut.layers[1].output, full.layers[1].output, 'full layer 1 keeps its output');
    assert.equal(noOut.layers[2].output, undefined);
    same(noOut.output, full.output, 'layerOutputs false: output');
    const lens = model.run(textOf(40), { heads: 'none', lens: 2 });
    const lensKept = model.run(textOf(40), { heads: 'none', lens: 2, layerOutputs: true });
    assert.equal(lens.layers[0].output, undefined);
    same(lens.layers[2].lens.probs, lensKept.layers[2].lens.probs, 'lens without kept outputs');
    assert.throws(() => model.run('a', { layerOutputs: 'yes' }), (e) => e instanceof TypeError && /run: .*layerOutputs/.test(e.message));
  } finally {
    model.delete();
  }
});

test('layerOutputs concerns the main side: an encoder-decoder\'s source layers keep their outputs', async () => {
  const as = await createAttnScope({ simd: SIMD, threads: 1 });
  const model = await as.loadBundled('dates');
  try {
    const input = { source: '22 November 2026', target: '2026-11-22' };
    const all = model.run(input, { trace: 'none' });
    const lean = model.run(input, { heads: 'none' });
    assert.ok(lean.layers.length > 0 && lean.layers.every((l) => l.output === undefined));
    lean.source.layers.forEach((l, i) => same(l.output, all.source.layers[i].output, `source layer ${i}`));
    const kept = model.run(input, { heads: 'none', layerOutputs: true });
    assert.ok(kept.layers.every((l) => l.output instanceof Float32Array));
    same(lean.output, kept.output, 'decoder output');
  } finally {
    model.delete();
  }
});

// growth past `cap` total bytes fails, as a browser refusing more memory does
const realGrow = WebAssembly.Memory.prototype.grow;
let cap = Infinity;
WebAssembly.Memory.prototype.grow = function grow(pages) {
  if (this.buffer.byteLength + pages * 65536 > cap) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded (test cap)');
  return realGrow.call(this, pages);
};
test.after(() => { WebAssembly.Memory.prototype.grow = realGrow; });

// The reservation (memory_reserve.h run_bytes) is the same C++ in both builds; the scalar build's forward through these
// 8 layers at 1,200 tokens (~200 GFLOP) takes ~100 s of CPU, half the scalar pass's time, so it runs on SIMD128 only.
test('run reserves one layer\'s activations with heads \'none\': 8 layers at 1,200 tokens fit in 120 MB, with every output kept they do not',
  { skip: SIMD === false && 'the same reservation code as the SIMD128 build, whose run this is; ~100 s of CPU in the scalar build' }, async () => {
  const as = await createAttnScope({ simd: SIMD, threads: 1 });
  const config = llama(1024, 2048, 8, 16, 4, 2048);
  const model = await as.loadPretrained({ config, weights: llamaCheckpoint(config), tokenizer: TOKENIZER });
  // n ~ 1,208 (bytes + 8): reserved now ~(16·65,536 + 4·385·2048 + 12·n·1024 + summaries 8·16·n·14) floats × 4 × 1.25
  // ≈ 105 MB; before, also 2·n·1024 floats a layer for the outputs (+ 8 × 9.9 MB) and [n, 2048] gate/up whole: ~240 MB
  cap = as.memoryStats().heapSize + 120 * 2 ** 20;
  try {
    const text = textOf(1200);
    const r = model.run(text, { heads: 'none', summaries: true, topK: 1 });
    assert.equal(r.ids.length, 1200);
    assert.ok(r.layers[7].attention.summary);
    assert.equal(r.layers[7].output, undefined);
    assert.ok(as.memoryStats().heapSize <= cap);
    // the same run keeping every layer's output reserves for them too: over the cap, an Error and nothing kept
    const before = as.memoryStats().allocated;
    assert.throws(() => model.run(text, { heads: 'none', summaries: true, topK: 1, layerOutputs: true }),
      (e) => !(e instanceof WebAssembly.RuntimeError) && /^run: out of memory: this run needs about \d+ MB/.test(e.message));
    assert.equal(as.memoryStats().allocated, before);
    // the module keeps working
    assert.equal(model.run('the cat', { heads: 'none', topK: 1 }).ids.length, 7);
  } finally {
    cap = Infinity;
    model.delete();
  }
});
