// memory-faults.test.js (issue 31, "Memory faults in the module"; API.md `signal`): loading, running and generating
// when wasm memory cannot grow, and loads stopped by an AbortSignal.
// - Fault injection: WebAssembly.Memory.prototype.grow is wrapped so that every growth attempt from the k-th on
//   fails (as a browser refusing more memory does), k swept over every attempt a clean load + run + generate makes
//   on a fresh module (each trial its own module, so that its heap starts small and must grow). Every trial gives an
//   Error saying "out of memory" (never a WebAssembly.RuntimeError: the module must not abort), the heap's
//   allocated bytes go back to where they were, and once memory may grow again the same module loads, runs and
//   generates with the clean run's numbers.
// - Abort: an AbortController aborted at every chunk of a load (from onProgress, and by a timer) rejects with
//   name 'AbortError', leaves nothing allocated, and a model loaded before keeps its numbers.
// The checkpoint is a Llama-shaped one made here (random float32 weights, the fixture's byte-level tokenizer), big
// enough that its load and a 500-token run need several times the module's initial 16 MB.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';
import { layout } from './support/safetensors.mjs';
import { llamaTensors } from './support/llama.mjs';

const DIR = new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url);
const TOKENIZER = readFileSync(new URL('tokenizer.json', DIR), 'utf8');

/** A safetensors file of F32 tensors ([name, shape]) with seeded values in [-0.1, 0.1). */
function safetensors(tensors, seed = 1) {
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 * 0.2 - 0.1;
  };
  const file = layout(tensors.map(([name, shape]) => ({ name, dtype: 'F32', shape })));
  const data = new Float32Array(file.data.buffer, file.data.byteOffset, file.data.byteLength / 4);
  for (let i = 0; i < data.length; i++) data[i] = rand();
  for (const [name, shape] of tensors) { // RMSNorm weights near 1
    if (!name.endsWith('norm.weight')) continue;
    const [a] = file.offsets.get(name);
    data.fill(1, a / 4, a / 4 + shape[0]);
  }
  return file.bytes;
}

const D = 256;
const FF = 512;
const LAYERS = 4;
const VOCAB = 258;
const CONFIG = {
  model_type: 'llama', vocab_size: VOCAB, hidden_size: D, intermediate_size: FF, num_hidden_layers: LAYERS,
  num_attention_heads: 8, num_key_value_heads: 2, max_position_embeddings: 512, rms_norm_eps: 1e-5, rope_theta: 10000,
  tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
};
const TENSORS = llamaTensors(CONFIG);
const WEIGHTS = safetensors(TENSORS);
const FILES = { config: CONFIG, weights: WEIGHTS, tokenizer: TOKENIZER };
// up to 498 tokens: the last one's attention weights alone are 4 layers × 8 heads × 498² floats (32 MB)
const TEXTS = [20, 80, 166].map((k) => 'ab '.repeat(k));

const newModule = () => createAttnScope({ simd: SIMD, threads: 1 });

// ---- growth failure from the k-th attempt on
const realGrow = WebAssembly.Memory.prototype.grow;
let attempts = 0;
let failFrom = Infinity;
WebAssembly.Memory.prototype.grow = function grow(pages) {
  attempts += 1;
  if (attempts >= failFrom) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded (injected)');
  return realGrow.call(this, pages);
};
test.after(() => { WebAssembly.Memory.prototype.grow = realGrow; });

/**
 * load, run (several lengths), generate on `as`: a summary of each result, or throws the first error. A failing step
 * must leave the heap's allocated bytes where they were just before it (checked here, before the model is freed).
 */
async function work(as, generateFirst) {
  const steps = { run: [] };
  let model;
  const step = async (fn) => {
    const before = as.memoryStats().allocated;
    try {
      return await fn();
    } catch (e) {
      const left = as.memoryStats().allocated - before;
      if (left !== 0) e.message += ` [${left} bytes left allocated by the failed step]`;
      throw e;
    }
  };
  try {
    model = await step(() => as.loadPretrained(FILES));
    const generate = async () => Array.from((await step(() => model.generate('ab ab', { maxNewTokens: 60 }))).ids);
    if (generateFirst) steps.generate = await generate();
    for (const text of TEXTS) { // longer and longer: each needs more memory than the last
      const r = await step(() => model.run(text, { lens: 3 }));
      steps.run.push({ next: Array.from(r.next.ids), w: r.layers[LAYERS - 1].attention.weights[1234] });
    }
    if (!generateFirst) steps.generate = await generate();
    return steps;
  } finally {
    model?.delete();
  }
}

for (const generateFirst of [false, true]) {
test(`memory growth failing at the k-th attempt (k swept) while loading, ${generateFirst ? 'generating, running' : 'running, generating'}: an Error, heap back, module works`, async () => {
  // the clean run: its numbers and how many growth attempts it makes on a fresh module
  let as = await newModule();
  attempts = 0;
  failFrom = Infinity;
  const clean = await work(as, generateFirst);
  const total = attempts;
  assert.ok(total >= 1, 'the clean run made no growth attempt: the trials would test nothing');
  const outcomes = [];
  for (let k = 1; k <= total + 1; k++) {
    as = await newModule();
    attempts = 0;
    failFrom = k;
    let error = null;
    try {
      await work(as, generateFirst);
    } catch (e) {
      error = e;
    }
    failFrom = Infinity;
    if (k <= total) {
      assert.ok(error, `k=${k}: growth failed but nothing reported it`);
      assert.ok(error instanceof Error && !(error instanceof WebAssembly.RuntimeError), `k=${k}: ${error?.constructor?.name}: ${error?.message}`);
      assert.match(error.message, /^(loadPretrained|run|generate): out of memory: .* WebAssembly memory could not grow[^[]*$/, `k=${k}`);
    } else {
      assert.equal(error, null, `k=${k} (past the last attempt): ${error?.message}`);
    }
    // memory may grow again: the same module does the whole work with the clean numbers
    const again = await work(as, generateFirst);
    assert.deepEqual(again, clean, `k=${k}: the module's results changed after the fault`);
    outcomes.push(error ? error.message.split(':')[0] : 'ok');
  }
  console.log(`# memory faults (${generateFirst ? 'generate first' : 'runs first'}): ${total} growth attempts in a clean load + 3 runs + generate; failing from each: ${outcomes.join(', ')}`);
});
}

test('loadPretrained: signal aborted at every chunk → AbortError, nothing allocated, earlier model unchanged', async () => {
  const as = await newModule();
  const small = {
    config: readFileSync(new URL('config.json', DIR), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', DIR)),
    tokenizer: TOKENIZER,
  };
  const earlier = await as.loadPretrained(small);
  const want = earlier.run('Hello world');
  // a load once, to grow the heap to its working size (memory never shrinks) and count its chunks
  let chunks = 0;
  (await as.loadPretrained({ ...FILES, onProgress: () => { chunks += 1; } })).delete();
  assert.ok(chunks > LAYERS * 9, `only ${chunks} progress calls: the load is not fed tensor by tensor`);
  const before = as.memoryStats();
  for (let i = 0; i < chunks - 1; i++) { // the last progress call comes once the model is built
    const controller = new AbortController();
    let calls = 0;
    const onProgress = () => {
      if (calls++ === i) controller.abort();
    };
    await assert.rejects(as.loadPretrained({ ...FILES, onProgress, signal: controller.signal }), (e) => {
      assert.equal(e.name, 'AbortError', `chunk ${i}: ${e.name}: ${e.message}`);
      assert.match(e.message, /^loadPretrained: the load was aborted/);
      return true;
    });
    assert.equal(as.memoryStats().allocated, before.allocated, `abort at chunk ${i}: bytes left allocated`);
  }
  // an abort from outside (a timer), landing between two chunks; an already aborted signal
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 0);
  await assert.rejects(as.loadPretrained({ ...FILES, signal: controller.signal }), { name: 'AbortError' });
  await assert.rejects(as.loadPretrained({ ...FILES, signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.equal(as.memoryStats().allocated, before.allocated);
  const got = earlier.run('Hello world');
  assert.deepEqual(Array.from(got.next.ids), Array.from(want.next.ids));
  assert.deepEqual(Array.from(got.output), Array.from(want.output));
  const fresh = await as.loadPretrained(small);
  assert.deepEqual(Array.from(fresh.run('Hello world').output), Array.from(want.output));
  fresh.delete();
  earlier.delete();
  console.log(`# abort: ${chunks} chunks, aborted at each, 0 bytes left allocated`);
});

test('loadPretrained: signal must be an AbortSignal', async () => {
  const as = await newModule();
  await assert.rejects(as.loadPretrained({ ...FILES, signal: {} }), { name: 'TypeError', message: /^loadPretrained: signal must be an AbortSignal/ });
});
