// blob-reader.test.js: bindings/js/blob-reader.js in Node (the helper worker itself needs a browser:
// tests/browser/stream-weights.test.js). readInto reads a Blob's bytes into one reused buffer (no new ArrayBuffer a
// read): every range equals the source's bytes, a range past the end gives the count there was, the buffer grows only
// when a read needs more; and a checkpoint loaded from a Blob (its chunks read through readInto, several of them over
// one 8 MiB piece) runs bit for bit like the same bytes loaded from memory.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createAttnScope } from 'attnscope';
import { readInto, canHelp } from '../../bindings/js/blob-reader.js';
import { SIMD } from './helpers.js';
import { llamaCheckpoint } from './support/llama.mjs';

test('readInto: the bytes of each range, in one buffer', async () => {
  const src = new Uint8Array(3 << 20);
  let s = 28;
  for (let i = 0; i < src.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    src[i] = s >>> 24;
  }
  const blob = new Blob([src]);
  const box = { buffer: null };
  for (const [a, b] of [[0, 1 << 20], [12345, 2 << 20], [(3 << 20) - 7, 3 << 20], [100, 101]]) {
    const n = await readInto(blob.slice(a, b), b - a, box);
    assert.equal(n, b - a);
    assert.deepEqual(new Uint8Array(box.buffer, 0, n), src.subarray(a, b), `bytes ${a} to ${b}`);
  }
  assert.equal(box.buffer.byteLength, (2 << 20) - 12345, 'the buffer grew to the largest read, no more');
  // a blob shorter than asked: the count there was
  assert.equal(await readInto(blob.slice((3 << 20) - 10), 64, box), 10);
  assert.deepEqual(new Uint8Array(box.buffer, 0, 10), src.subarray((3 << 20) - 10));
  assert.equal(canHelp(), false, 'Node has no FileReaderSync: no helper worker');
});

test('loadPretrained from a Blob (chunks through readInto) runs bit for bit like its bytes', async () => {
  const as = await createAttnScope({ simd: SIMD });
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 258, hidden_size: 256, intermediate_size: 512,
    num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 128,
    rms_norm_eps: 1e-5, rope_theta: 10000.0, hidden_act: 'silu', tie_word_embeddings: false, bos_token_id: 256, eos_token_id: 257,
  };
  const tokenizer = (await import('node:fs')).readFileSync(new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/tokenizer.json', import.meta.url), 'utf8');
  const bytes = llamaCheckpoint(config, { dtype: 'F32', seed: 5, scale: 0.2 });
  assert.ok(bytes.byteLength > 8 << 20, `${bytes.byteLength} bytes: more than one 8 MiB chunk`);
  const a = await as.loadPretrained({ config, tokenizer, weights: bytes });
  const b = await as.loadPretrained({ config, tokenizer, weights: new Blob([bytes]) });
  const same = (x, y, what) => assert.ok(Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength)), what);
  const ra = a.run('The cat sat on the mat.', { trace: 'full' });
  const rb = b.run('The cat sat on the mat.', { trace: 'full' });
  ra.layers.forEach((l, i) => {
    same(l.attention.weights, rb.layers[i].attention.weights, `layer ${i} attention`);
    same(l.output, rb.layers[i].output, `layer ${i} output`);
  });
  same(ra.next.probs, rb.next.probs, 'next.probs');
  a.delete();
  b.delete();
});
