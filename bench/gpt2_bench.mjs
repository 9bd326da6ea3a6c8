// gpt2_bench.mjs: a full-size random GPT-2 small checkpoint (124 M parameters, Hugging Face layout, ~510 MB,
// written at run time into build/bench/gpt2-small/, never committed) loaded with `as.loadPretrained` in Node
// and in Chromium: load time and peak memory, forward time at 64 and 256 tokens with every attention weight,
// and `generate` tokens per second (key/value cache) against a loop of `run` over the growing prefix.
// Layer: bench (uses only the public `attnscope` entry; reports speed, never asserts it). Run: `npm run bench`
// (scripts/bench.sh calls it last) or `node bench/gpt2_bench.mjs [--quick] [--no-browser] [--no-ort] [--fresh]
// [--runs N] [--out FILE]`. It also times the same forward in onnxruntime-web (`--phase ort`, the checkpoint exported
// to ONNX by bench/gpt2_onnx.py). How to read the output: bench/README.md "GPT-2 small".
//
// Each Node measurement runs in a child process of its own (`--phase node-blob` / `--phase node-u8`) and each
// Chromium one in a browser of its own, so that every peak-memory figure belongs to that load alone.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, readFileSync,
  rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, TYPES, chromiumMemory, inChromium } from './chromium_support.mjs';

const require = createRequire(import.meta.url);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(ROOT, 'build', 'bench', 'gpt2-small');
const FILES = {
  weights: join(DIR, 'model.safetensors'), config: join(DIR, 'config.json'), tokenizer: join(DIR, 'tokenizer.json'),
  stamp: join(DIR, 'stamp.json'),
};

// ---- options

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const PHASE = opt('--phase');
const QUICK = argv.includes('--quick');
const RUNS = Number(opt('--runs') ?? (QUICK ? 3 : 5));
const OUT = resolve(opt('--out') ?? join(ROOT, 'build', 'bench', 'gpt2.md'));
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (['--phase', '--runs', '--out'].includes(a)) { i++; continue; }
  if (!['--quick', '--no-browser', '--no-ort', '--fresh'].includes(a)) {
    console.error(`gpt2_bench: unknown option ${a} (use --quick, --no-browser, --no-ort, --fresh, --runs N, --out FILE)`);
    process.exit(2);
  }
}
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`gpt2_bench: --runs (${opt('--runs')}) must be a positive integer`);
  process.exit(2);
}

const TOKENS = QUICK ? [64] : [64, 256]; // forward lengths
const NEW_TOKENS = 32;             // generate / no-cache loop
const PROMPT = 'The history of the city begins with a small village on the river, where';
const MB = 2 ** 20;

// ---- the checkpoint (GPT-2 small, as `GPT2LMHeadModel.save_pretrained` of an older transformers writes it)

// Hugging Face's gpt2 config.json (the hub file's fields and values).
const GPT2_CONFIG = {
  activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], attn_pdrop: 0.1, bos_token_id: 50256,
  embd_pdrop: 0.1, eos_token_id: 50256, initializer_range: 0.02, layer_norm_epsilon: 1e-5, model_type: 'gpt2',
  n_ctx: 1024, n_embd: 768, n_head: 12, n_layer: 12, n_positions: 1024, resid_pdrop: 0.1, summary_activation: null,
  summary_first_dropout: 0.1, summary_proj_to_labels: true, summary_type: 'cls_index', summary_use_proj: true,
  task_specific_params: { 'text-generation': { do_sample: true, max_length: 50 } }, vocab_size: 50257,
};
const SEED = 20261123;
const FORMAT_VERSION = 1; // bump when the writer changes: an old file in build/bench is then rewritten

// Every tensor: name, dtype, shape, init. Hugging Face's GPT2PreTrainedModel._init_weights: Conv1D and
// Embedding weights N(0, initializer_range), biases 0, LayerNorm 1 / 0, and the residual projections
// (attn.c_proj, mlp.c_proj) N(0, initializer_range / sqrt(2 · n_layer)). The tied lm_head.weight is not
// saved (save_pretrained drops shared tensors); attn.bias is the causal BOOL buffer older versions saved.
function gpt2Tensors(c) {
  const d = c.n_embd, v = c.vocab_size, p = c.n_positions, f = 4 * d, std = c.initializer_range;
  const proj = std / Math.sqrt(2 * c.n_layer);
  const t = [
    ['transformer.wte.weight', 'F32', [v, d], { normal: std }],
    ['transformer.wpe.weight', 'F32', [p, d], { normal: std }],
    ['transformer.ln_f.weight', 'F32', [d], { fill: 1 }],
    ['transformer.ln_f.bias', 'F32', [d], { fill: 0 }],
  ];
  for (let i = 0; i < c.n_layer; i++) {
    const h = `transformer.h.${i}.`;
    t.push(
      [`${h}ln_1.weight`, 'F32', [d], { fill: 1 }], [`${h}ln_1.bias`, 'F32', [d], { fill: 0 }],
      [`${h}attn.c_attn.weight`, 'F32', [d, 3 * d], { normal: std }], [`${h}attn.c_attn.bias`, 'F32', [3 * d], { fill: 0 }],
      [`${h}attn.c_proj.weight`, 'F32', [d, d], { normal: proj }], [`${h}attn.c_proj.bias`, 'F32', [d], { fill: 0 }],
      [`${h}ln_2.weight`, 'F32', [d], { fill: 1 }], [`${h}ln_2.bias`, 'F32', [d], { fill: 0 }],
      [`${h}mlp.c_fc.weight`, 'F32', [d, f], { normal: std }], [`${h}mlp.c_fc.bias`, 'F32', [f], { fill: 0 }],
      [`${h}mlp.c_proj.weight`, 'F32', [f, d], { normal: proj }], [`${h}mlp.c_proj.bias`, 'F32', [d], { fill: 0 }],
      [`${h}attn.bias`, 'BOOL', [1, 1, p, p], { causal: p }],
    );
  }
  return t.map(([name, dtype, shape, init]) => ({ name, dtype, shape, init }));
}

const ITEMSIZE = { F32: 4, BOOL: 1 };

// Seeded normals: xorshift128+ (two 32-bit halves) and Box–Muller.
function normals(seed) {
  let s0 = seed >>> 0 || 1, s1 = 0x9e3779b9, s2 = 0x243f6a88, s3 = 0xb7e15162;
  const u32 = () => {
    const t = s0 ^ (s0 << 11);
    s0 = s1; s1 = s2; s2 = s3;
    s3 = (s3 ^ (s3 >>> 19) ^ t ^ (t >>> 8)) >>> 0;
    return s3;
  };
  return (out, std) => {
    for (let i = 0; i < out.length; i += 2) {
      const u = (u32() + 1) / 4294967297, w = u32() / 4294967296;
      const r = std * Math.sqrt(-2 * Math.log(u));
      out[i] = r * Math.cos(2 * Math.PI * w);
      if (i + 1 < out.length) out[i + 1] = r * Math.sin(2 * Math.PI * w);
    }
  };
}

// The safetensors file as the `safetensors` library writes it: 8-byte little-endian header length, JSON header
// with "__metadata__" first and the names sorted, padded with spaces to a multiple of 8, data ordered by dtype
// size (largest first) then name. Written tensor by tensor: the file is never in memory whole.
function writeCheckpoint() {
  mkdirSync(DIR, { recursive: true });
  const tensors = gpt2Tensors(GPT2_CONFIG).sort((a, b) => ITEMSIZE[b.dtype] - ITEMSIZE[a.dtype] || (a.name < b.name ? -1 : 1));
  const header = {};
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.shape.reduce((x, y) => x * y, 1) * ITEMSIZE[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const sorted = { __metadata__: { format: 'pt' } };
  for (const k of Object.keys(header).sort()) sorted[k] = header[k];
  let json = JSON.stringify(sorted);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const prefix = Buffer.alloc(8 + json.length);
  prefix.writeBigUInt64LE(BigInt(json.length), 0);
  prefix.write(json, 8, 'latin1');
  const fill = normals(SEED);
  const fd = openSync(FILES.weights, 'w');
  try {
    writeSync(fd, prefix);
    let causal = null;
    for (const t of tensors) {
      const n = t.shape.reduce((x, y) => x * y, 1);
      if (t.dtype === 'BOOL') {
        const p = t.init.causal;
        if (!causal) {
          causal = new Uint8Array(p * p);
          for (let i = 0; i < p; i++) causal.fill(1, i * p, i * p + i + 1); // torch.tril(ones(p, p))
        }
        writeSync(fd, causal);
        continue;
      }
      const a = new Float32Array(n);
      if (t.init.normal !== undefined) fill(a, t.init.normal);
      else a.fill(t.init.fill);
      writeSync(fd, new Uint8Array(a.buffer));
    }
  } finally {
    closeSync(fd);
  }
  return { bytes: prefix.length + offset, tensors: tensors.length };
}

async function ensureCheckpoint(fresh) {
  const want = { version: FORMAT_VERSION, seed: SEED, config: GPT2_CONFIG };
  const fileSize = () => (existsSync(FILES.weights) ? statSync(FILES.weights).size : -1);
  let stamp = null;
  try { stamp = JSON.parse(readFileSync(FILES.stamp, 'utf8')); } catch { /* none yet */ }
  const t0 = performance.now();
  let made = false;
  if (fresh || !stamp || JSON.stringify(stamp.want) !== JSON.stringify(want) || stamp.bytes !== fileSize()
      || !existsSync(FILES.tokenizer) || !existsSync(FILES.config)) {
    mkdirSync(DIR, { recursive: true });
    rmSync(FILES.stamp, { force: true });
    const { makeGpt2TokenizerJson } = await import('../tests/fixtures/hf/make_gpt2_tokenizer_json.mjs');
    writeFileSync(FILES.config, `${JSON.stringify(GPT2_CONFIG, null, 2)}\n`);
    writeFileSync(FILES.tokenizer, JSON.stringify(makeGpt2TokenizerJson({ merges: 'strings' })));
    const { bytes, tensors } = writeCheckpoint();
    stamp = { want, bytes, tensors };
    writeFileSync(FILES.stamp, JSON.stringify(stamp));
    made = true;
  }
  return { made, seconds: (performance.now() - t0) / 1000, bytes: stamp.bytes, tensors: stamp.tensors };
}

// ---- texts of exactly n GPT-2 tokens (gpt-3-encoder, GPT-2's own encoder.py ported, as the oracle)

const PARAGRAPH = 'The river runs through the old town and past the market, where people meet in the morning to '
  + 'buy bread, fish and fruit. In the afternoon the square is quiet, and children play near the fountain while '
  + 'their parents talk about the weather, the harvest and the news from the capital. When the sun goes down, '
  + 'the lights of the small houses come on one by one, and the sound of music drifts from the open windows. ';

function textOf(n) {
  const { encode, decode } = require('gpt-3-encoder');
  const ids = encode(PARAGRAPH.repeat(Math.ceil((n * 6) / PARAGRAPH.length) + 1)).slice(0, n);
  const text = decode(ids);
  if (encode(text).length !== n) throw new Error(`gpt2_bench: could not make a text of ${n} tokens`);
  return text;
}

// ---- shared helpers

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmtMB = (b) => (b === undefined || b === null ? '—' : `${(b / MB).toFixed(0)} MiB`);
const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`);

// The page's and Node's forward check: every layer holds [12, n, n] weights whose causal rows are distributions.
// (Kept as a string too: Chromium evaluates it in the page.)
function checkWeights(r, n) {
  if (r.tokens.length !== n) return `run gave ${r.tokens.length} tokens, expected ${n}`;
  if (r.layers.length !== 12) return `${r.layers.length} layers, expected 12`;
  let floats = 0;
  for (const [l, layer] of r.layers.entries()) {
    const w = layer.attention.weights;
    if (!w || w.length !== 12 * n * n) return `layer ${l}: weights length ${w?.length}, expected ${12 * n * n}`;
    floats += w.length;
    for (let row = 0; row < 12 * n; row += 97) {
      const i = row % n;
      let s = 0;
      for (let j = 0; j < n; j++) s += w[row * n + j];
      if (Math.abs(s - 1) > 1e-4 || (i + 1 < n && w[row * n + i + 1] !== 0)) return `layer ${l}: row ${row} is not causal softmax`;
    }
  }
  return floats;
}

// Warm-up before timing: V8 first runs wasm from its baseline compiler and tiers hot functions up in the
// background (slowly on a busy machine), so run until two runs in a row agree within 10 % (at most 6 runs).
// Kept as a string too: Chromium evaluates it in the page.
function warmUp(fn) {
  let prev = Infinity;
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    fn();
    const ms = performance.now() - t0;
    if (Math.abs(ms - prev) <= 0.1 * Math.min(ms, prev)) return i + 1;
    prev = ms;
  }
  return 6;
}

// ---- Node phases (child processes)

function nodeMem() {
  const m = process.memoryUsage();
  return { rss: m.rss, arrayBuffers: m.arrayBuffers, maxRss: process.resourceUsage().maxRSS * 1024 };
}

async function nodeLoad(as, weights, config, tokenizer) {
  const peak = { rss: 0, arrayBuffers: 0, heapSize: 0 };
  let calls = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
    peak.heapSize = Math.max(peak.heapSize, as.memoryStats().heapSize);
  };
  const t0 = performance.now();
  const model = await as.loadPretrained({ config, weights, tokenizer, onProgress: () => { calls++; sample(); } });
  const ms = performance.now() - t0;
  sample();
  return { model, ms, progressCalls: calls, peak };
}

async function phaseNode(kind) {
  const { createAttnScope } = await import('attnscope');
  const as = await createAttnScope({ simd: true });
  const config = readFileSync(FILES.config, 'utf8');
  const tokenizer = readFileSync(FILES.tokenizer, 'utf8');
  const out = { kind, simd: as.simd, before: { ...nodeMem(), wasm: as.memoryStats() } };
  let weights;
  if (kind === 'blob') {
    // A file-backed Blob, as a browser's File: loadPretrained reads it slice by slice.
    const { openAsBlob } = await import('node:fs');
    weights = await openAsBlob(FILES.weights);
  } else {
    const t0 = performance.now();
    const b = readFileSync(FILES.weights);
    weights = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    out.readMs = performance.now() - t0;
  }
  out.bytes = weights.size ?? weights.byteLength;
  out.held = { ...nodeMem(), wasm: as.memoryStats() };
  const { model, ms, progressCalls, peak } = await nodeLoad(as, weights, config, tokenizer);
  out.loadMs = ms;
  out.progressCalls = progressCalls;
  out.peakDuringLoad = peak;
  out.after = { ...nodeMem(), wasm: as.memoryStats() };
  weights = null;
  if (kind === 'u8') {
    // forward with every attention weight
    out.forward = {};
    const warmText = textOf(TOKENS[0]);
    out.warmUpRuns = warmUp(() => model.run(warmText, { trace: 'weights' }));
    for (const n of TOKENS) {
      const text = textOf(n);
      const first = model.run(text, { trace: 'weights' });
      const check = checkWeights(first, n);
      if (typeof check === 'string') throw new Error(`gpt2_bench: forward ${n}: ${check}`);
      const times = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        model.run(text, { trace: 'weights' });
        times.push(performance.now() - t0);
      }
      out.forward[n] = { times, median: median(times), weightFloats: check };
    }
    out.afterForward = { ...nodeMem(), wasm: as.memoryStats() };
    // one token: the per-run cost that does not grow with the text (embedding, the next-token head over the
    // 50,257-row tied embedding table)
    const one = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      model.run('The', { trace: 'none' });
      one.push(performance.now() - t0);
    }
    out.oneToken = { times: one, median: median(one) };
    // generate (key/value cache) vs run over the growing prefix (no cache)
    const promptIds = Array.from(model.run(PROMPT, { trace: 'none', topK: 1 }).ids);
    const gens = [];
    let gen;
    for (let i = 0; i < (QUICK ? 1 : 2); i++) {
      const t0 = performance.now();
      gen = model.generate(PROMPT, { maxNewTokens: NEW_TOKENS });
      gens.push(performance.now() - t0);
    }
    out.generate = { times: gens, median: median(gens), tokens: gen.ids.length, stoppedAtEnd: gen.stoppedAtEnd,
      promptTokens: promptIds.length, ids: Array.from(gen.ids) };
    if (!QUICK) {
      // The same greedy steps without a cache: step k runs the whole prefix (its text: the prompt + generate's
      // first k new ids, decoded) and takes next.ids[0]. Where that text re-tokenizes to exactly prompt + those
      // ids (random tokens side by side often merge differently), it must choose generate's id k; `comparable`
      // counts those steps and `agree` the ones that did.
      const { decode } = require('gpt-3-encoder');
      let comparable = 0, agree = 0;
      const t0 = performance.now();
      for (let k = 0; k < gen.ids.length; k++) {
        const prefix = gen.ids.slice(0, k);
        const r = model.run(PROMPT + decode(Array.from(prefix)), { trace: 'none', topK: 1 });
        const same = r.ids.length === promptIds.length + k
          && promptIds.every((id, i) => r.ids[i] === id) && prefix.every((id, i) => r.ids[promptIds.length + i] === id);
        if (same) {
          comparable++;
          if (r.next.ids[0] === gen.ids[k]) agree++;
        }
      }
      out.noCache = { ms: performance.now() - t0, tokens: gen.ids.length, comparable, agree };
    }
  }
  model.delete();
  out.afterDelete = { ...nodeMem(), wasm: as.memoryStats() };
  process.stdout.write(`\n@@RESULT ${JSON.stringify(out)}\n`);
}

// The same forward in attnscope and onnxruntime-web (issue 16): the checkpoint exported by bench/gpt2_onnx.py
// (torch.onnx.export of tests/fixtures/hf/generate.py's GPT-2 forward: last hidden state, the last position's
// logits and every layer's attention weights, as attnscope's run with trace 'weights' computes them), 1 and 2
// threads each, all four loaded in this one process and timed in turns (round robin, medians), outputs checked
// against each other before any timing.
async function phaseOrt() {
  const { createAttnScope } = await import('attnscope');
  const { loadOrt } = await import('./ort_node.mjs');
  const config = readFileSync(FILES.config, 'utf8');
  const tokenizer = readFileSync(FILES.tokenizer, 'utf8');
  const b = readFileSync(FILES.weights);
  const weights = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  // attnscope with the SIMD128 mul + add kernel (1, 2) and with the fused multiply-add one ('fma1', 'fma2': the
  // child runs with --experimental-wasm-relaxed-simd; ORT's wasm build has no relaxed-SIMD kernels)
  const mine = {};
  for (const [key, threads, relaxedSimd] of [[1, 1, false], [2, 2, false], ['fma1', 1, true], ['fma2', 2, true]]) {
    const as = await createAttnScope({ simd: true, threads, relaxedSimd });
    mine[key] = { as, model: await as.loadPretrained({ config, weights, tokenizer }) };
  }
  const orts = { 1: await loadOrt(1), 2: await loadOrt(2) };
  const out = { tokens: {}, threads: { attnscope: [mine[1].as.threads, mine[2].as.threads] } };
  for (const n of TOKENS) {
    const text = textOf(n);
    const first = mine[1].model.run(text, { trace: 'weights', topK: 1 });
    const ids = BigInt64Array.from(Array.from(first.ids, BigInt));
    const sessions = {};
    for (const t of [1, 2]) {
      const ort = orts[t];
      const bytes = readFileSync(join(DIR, `model-${n}.onnx`));
      sessions[t] = { ort, session: await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }) };
    }
    const ortRun = async (t) => {
      const { ort, session } = sessions[t];
      return session.run({ input_ids: new ort.Tensor('int64', ids, [n]) });
    };
    // outputs against each other: attention weights, the last hidden state, the next token
    const o = await ortRun(1);
    let attn = 0, hidden = 0;
    const a = o.attentions.data;
    first.layers.forEach((layer, l) => {
      const w = layer.attention.weights;
      for (let i = 0; i < w.length; i++) attn = Math.max(attn, Math.abs(w[i] - a[l * w.length + i]));
    });
    for (let i = 0; i < first.output.length; i++) hidden = Math.max(hidden, Math.abs(first.output[i] - o.last_hidden_state.data[i]));
    const logits = o.logits.data;
    let top = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[top]) top = i;
    const check = { attention: attn, hidden, nextAttnscope: first.next.ids[0], nextOrt: top };
    if (!(attn < 1e-4 && hidden < 1e-3 && check.nextAttnscope === check.nextOrt)) {
      throw new Error(`gpt2_bench: attnscope and ORT disagree at ${n} tokens: ${JSON.stringify(check)}`);
    }
    const o2 = await ortRun(2);
    const two = mine[2].model.run(text, { trace: 'weights', topK: 1 });
    check.ort2 = Math.max(...o2.attentions.data.map((x, i) => Math.abs(x - a[i])).filter((_, i) => i % 101 === 0));
    check.attnscope2 = Math.max(...two.layers.map((ly, l) => Math.abs(ly.attention.weights[7] - first.layers[l].attention.weights[7])));
    const fma = mine.fma1.model.run(text, { trace: 'weights', topK: 1 });
    check.fma = Math.max(...fma.layers.map((ly, l) => Math.max(...ly.attention.weights.filter((_, i) => i % 97 === 0)
      .map((x, i) => Math.abs(x - first.layers[l].attention.weights[i * 97])))));
    if (!(check.fma < 1e-4) || fma.next.ids[0] !== check.nextOrt) throw new Error(`gpt2_bench: the fused kernel disagrees at ${n} tokens: ${JSON.stringify(check)}`);
    const contestants = {
      'attnscope 1t': async () => mine[1].model.run(text, { trace: 'weights' }),
      'attnscope 2t': async () => mine[2].model.run(text, { trace: 'weights' }),
      'attnscope FMA 1t': async () => mine.fma1.model.run(text, { trace: 'weights' }),
      'attnscope FMA 2t': async () => mine.fma2.model.run(text, { trace: 'weights' }),
      'ORT 1t': () => ortRun(1),
      'ORT 2t': () => ortRun(2),
    };
    for (const f of Object.values(contestants)) await f(); // warm-up
    const times = Object.fromEntries(Object.keys(contestants).map((k) => [k, []]));
    for (let r = 0; r < RUNS; r++) {
      const order = r % 2 ? Object.keys(contestants).reverse() : Object.keys(contestants);
      for (const k of order) {
        const t0 = performance.now();
        await contestants[k]();
        times[k].push(performance.now() - t0);
        await new Promise((res) => { setTimeout(res, 30); }); // ORT's pool threads spin after a run
      }
    }
    out.tokens[n] = { check, times, medians: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) };
    for (const t of [1, 2]) await sessions[t].session.release();
  }
  // heap: peak wasm memory at the longest length, and 100 runs later
  const long = textOf(TOKENS.at(-1));
  const heap0 = mine[1].as.memoryStats();
  for (let i = 0; i < (QUICK ? 10 : 100); i++) mine[1].model.run(long, { trace: 'weights' });
  out.heap = { before: heap0, after: mine[1].as.memoryStats(), runs: QUICK ? 10 : 100, tokens: TOKENS.at(-1) };
  process.stdout.write(`\n@@RESULT ${JSON.stringify(out)}\n`);
  process.exit(0); // the threaded modules' workers
}

/** bench/gpt2_onnx.py's models, made when missing or older than the checkpoint. */
function ensureOnnx() {
  const stale = TOKENS.filter((n) => {
    const f = join(DIR, `model-${n}.onnx`);
    return !existsSync(f) || statSync(f).mtimeMs < statSync(FILES.weights).mtimeMs;
  });
  if (!stale.length) return;
  console.error(`gpt2_bench: exporting ONNX models for ${stale.join(', ')} tokens (bench/gpt2_onnx.py) …`);
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'bench', 'gpt2_onnx.py'), ...stale.map(String)], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error('gpt2_bench: bench/gpt2_onnx.py failed');
}

function runChild(kind) {
  return new Promise((resolvePromise, reject) => {
    const phase = kind === 'ort' ? 'ort' : `node-${kind}`;
    const args = [fileURLToPath(import.meta.url), '--phase', phase, '--runs', String(RUNS), ...(QUICK ? ['--quick'] : [])];
    const flags = kind === 'ort' ? ['--experimental-wasm-relaxed-simd'] : [];
    const child = spawn(process.execPath, ['--no-warnings', ...flags, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (code !== 0 || !line) reject(new Error(`gpt2_bench: ${phase} phase failed (exit ${code})\n${stdout}`));
      else resolvePromise(JSON.parse(line.slice(9)));
    });
  });
}

// ---- Chromium

const PAGE = '<!doctype html><meta charset="utf-8"><title>attnscope GPT-2 small bench</title>'
  + '<link rel="icon" href="data:,"><input type="file" id="weights">\n';

// The public module exactly as Node imports it (bindings/js + dist/: the layout build/site copies) and the
// checkpoint, on a loopback server; files are streamed (the weights are ~510 MB).
function startServer() {
  const roots = { '/bindings/js/': join(ROOT, 'bindings', 'js'), '/dist/': join(ROOT, 'dist'), '/gpt2-small/': DIR };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/') {
      res.writeHead(200, { 'Content-Type': TYPES['.html'] }).end(PAGE);
      return;
    }
    const prefix = Object.keys(roots).find((p) => url.pathname.startsWith(p));
    const name = prefix && decodeURIComponent(url.pathname.slice(prefix.length));
    if (!name || name.includes('..') || name.includes('/')) {
      res.writeHead(404).end();
      return;
    }
    const file = join(roots[prefix], name);
    let size;
    try { size = statSync(file).size; } catch { res.writeHead(404).end(); return; }
    const ext = name.slice(name.lastIndexOf('.'));
    res.writeHead(200, { 'Content-Type': TYPES[ext] ?? 'application/octet-stream', 'Content-Length': size,
      'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, base: `http://127.0.0.1:${server.address().port}/` })));
}

async function phaseChromium(kind, base, texts) {
  return inChromium('attnscope-gpt2-', base, async (page, profile, errors) => {
    await page.evaluate(async () => {
      const { createAttnScope } = await import('/bindings/js/index.js');
      window.as = await createAttnScope({ simd: true });
    });
    if (kind === 'file') await page.setInputFiles('#weights', FILES.weights);
    const before = chromiumMemory(profile);
    const out = await page.evaluate(async ({ kind, texts, runs, checkSrc, warmSrc }) => {
      const as = window.as;
      const mem = () => ({ wasm: as.memoryStats().heapSize, js: performance.memory?.usedJSHeapSize ?? null });
      const res = { simd: as.simd, before: mem() };
      const [config, tokenizer] = await Promise.all(['config.json', 'tokenizer.json'].map((f) => fetch(`/gpt2-small/${f}`).then((r) => r.text())));
      let weights;
      if (kind === 'file') {
        weights = document.getElementById('weights').files[0];
      } else {
        const t0 = performance.now();
        weights = await (await fetch('/gpt2-small/model.safetensors')).blob();
        res.fetchMs = performance.now() - t0;
      }
      res.weightsType = weights.constructor.name;
      res.bytes = weights.size;
      const peak = { wasm: 0, js: 0 };
      let calls = 0;
      const t0 = performance.now();
      const model = await as.loadPretrained({ config, weights, tokenizer, onProgress: () => {
        calls++;
        const m = mem();
        peak.wasm = Math.max(peak.wasm, m.wasm);
        peak.js = Math.max(peak.js, m.js ?? 0);
      } });
      res.loadMs = performance.now() - t0;
      res.progressCalls = calls;
      res.peak = peak;
      res.after = mem();
      if (kind === 'file') {
        const checkWeights = new Function(`return (${checkSrc})`)();
        const warmUp = new Function(`return (${warmSrc})`)();
        res.forward = {};
        res.warmUpRuns = warmUp(() => model.run(Object.values(texts)[0], { trace: 'weights' }));
        for (const [n, text] of Object.entries(texts)) {
          const check = checkWeights(model.run(text, { trace: 'weights' }), Number(n));
          if (typeof check === 'string') throw new Error(`forward ${n}: ${check}`);
          const times = [];
          for (let i = 0; i < runs; i++) {
            const t1 = performance.now();
            model.run(text, { trace: 'weights' });
            times.push(performance.now() - t1);
          }
          res.forward[n] = { times, weightFloats: check };
        }
      }
      model.delete();
      return res;
    }, { kind, texts, runs: RUNS, checkSrc: checkWeights.toString(), warmSrc: warmUp.toString() });
    out.procs = { before, after: chromiumMemory(profile) };
    if (errors.length) throw new Error(`gpt2_bench: page errors: ${errors.join('; ')}`);
    for (const f of Object.values(out.forward ?? {})) f.median = median(f.times);
    return out;
  });
}

// ---- report

function report(ck, blob, u8, chrome, started, ortCmp) {
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const cpu = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [0, '?'])[1];
  const L = [];
  L.push('# GPT-2 small in attnscope (random weights, Hugging Face layout)', '');
  L.push(`${new Date().toISOString()} · ${cpu} · ${os.cpus().length} cores · load ${started.load} → ${load} · Node ${process.version}`
    + `${chrome ? ` · ${chrome.version}` : ''} · SIMD build: ${u8.simd ? 'yes' : 'NO'}`);
  L.push(`Checkpoint: ${(ck.bytes / 1e6).toFixed(1)} MB (${ck.tensors} tensors, F32 + BOOL attn.bias), `
    + `${ck.made ? `written in ${ck.seconds.toFixed(1)} s` : 'reused from build/bench/gpt2-small'}; forward: medians of ${RUNS} runs `
    + `after ${u8.warmUpRuns} (Node) / ${chrome ? chrome.file.warmUpRuns : '—'} (Chromium) warm-up runs.`, '');
  L.push('| where | measure | value |', '|---|---|---|');
  const row = (w, m, v) => L.push(`| ${w} | ${m} | ${v} |`);
  const mbps = (bytes, ms) => `${((bytes / 1e6) / (ms / 1000)).toFixed(0)} MB/s`;
  row('Node', 'loadPretrained(Uint8Array)', `${fmtMs(u8.loadMs)} (${mbps(u8.bytes, u8.loadMs)}; reading the file first: ${fmtMs(u8.readMs)})`);
  row('Node', '… peak RSS / arrayBuffers', `${fmtMB(u8.after.maxRss)} / ${fmtMB(u8.peakDuringLoad.arrayBuffers)} (before: RSS ${fmtMB(u8.before.rss)}, after load: RSS ${fmtMB(u8.after.rss)}, arrayBuffers ${fmtMB(u8.after.arrayBuffers)})`);
  row('Node', '… wasm memory after load', `${fmtMB(u8.after.wasm.heapSize)} heap, ${fmtMB(u8.after.wasm.allocated)} allocated (after delete: ${fmtMB(u8.afterDelete.wasm.allocated)})`);
  row('Node', 'loadPretrained(Blob) (fs.openAsBlob: file-backed)', `${fmtMs(blob.loadMs)} (${mbps(blob.bytes, blob.loadMs)}; ${blob.progressCalls} progress calls)`);
  row('Node', '… peak RSS / arrayBuffers', `${fmtMB(blob.after.maxRss)} / ${fmtMB(blob.peakDuringLoad.arrayBuffers)} (before: RSS ${fmtMB(blob.before.rss)}, after load: RSS ${fmtMB(blob.after.rss)})`);
  row('Node', '… wasm memory after load', `${fmtMB(blob.after.wasm.heapSize)} heap, ${fmtMB(blob.after.wasm.allocated)} allocated`);
  for (const n of TOKENS) {
    const f = u8.forward[n];
    row('Node', `forward ${n} tokens, trace 'weights' (${(f.weightFloats / 1e6).toFixed(2)} M attention floats)`,
      `${fmtMs(f.median)} (min ${fmtMs(Math.min(...f.times))}, max ${fmtMs(Math.max(...f.times))}; ${(n / (f.median / 1000)).toFixed(0)} tokens/s)`);
  }
  row('Node', "run of 1 token, trace 'none' (fixed cost per run: next-token head over 50,257 tied rows)", fmtMs(u8.oneToken.median));
  const g = u8.generate;
  row('Node', `generate ${g.tokens} new tokens (KV cache; prompt ${g.promptTokens} tokens)`,
    `${fmtMs(g.median)} → **${(g.tokens / (g.median / 1000)).toFixed(1)} tokens/s**${g.stoppedAtEnd ? ' (stopped at <|endoftext|>)' : ''}`);
  if (u8.noCache) {
    const c = u8.noCache;
    row('Node', `run over the growing prefix, ${c.tokens} steps (no cache)`,
      `${fmtMs(c.ms)} → ${(c.tokens / (c.ms / 1000)).toFixed(1)} tokens/s; generate is ${((c.ms / c.tokens) / (g.median / g.tokens)).toFixed(1)}× faster`
      + `; next id = generate's at ${c.agree} of the ${c.comparable} steps whose prefix re-tokenizes to the same ids`);
  }
  if (chrome) {
    const { file, blob: cb } = chrome;
    const rend = (p) => (p?.renderers?.length ? Math.max(...p.renderers.map((r) => r.hwm)) : null);
    row('Chromium', `loadPretrained(File) (<input type=file>, ${file.progressCalls} progress calls)`, `${fmtMs(file.loadMs)} (${mbps(file.bytes, file.loadMs)})`);
    row('Chromium', '… peak memory', `renderer RSS ${fmtMB(rend(file.procs.after))} (VmHWM), browser process ${fmtMB(file.procs.after?.browser.hwm)}; wasm heap ${fmtMB(file.after.wasm)}; JS heap ${fmtMB(file.peak.js)} (performance.memory)`);
    row('Chromium', `loadPretrained(Blob) (fetch → blob: ${fmtMs(cb.fetchMs)})`, `${fmtMs(cb.loadMs)} (${mbps(cb.bytes, cb.loadMs)})`);
    row('Chromium', '… peak memory', `renderer RSS ${fmtMB(rend(cb.procs.after))} (VmHWM), browser process ${fmtMB(cb.procs.after?.browser.hwm)}; wasm heap ${fmtMB(cb.after.wasm)}; JS heap ${fmtMB(cb.peak.js)}`);
    for (const n of TOKENS) {
      const f = file.forward[n];
      row('Chromium', `forward ${n} tokens, trace 'weights'`,
        `${fmtMs(f.median)} (min ${fmtMs(Math.min(...f.times))}, max ${fmtMs(Math.max(...f.times))}; ${(n / (f.median / 1000)).toFixed(0)} tokens/s)`);
    }
  } else {
    row('Chromium', '—', 'skipped (--no-browser, or /usr/bin/chromium missing)');
  }
  if (ortCmp) {
    L.push('', '## GPT-2 small forward, attnscope vs onnxruntime-web (Node, one process, round robin, medians)', '');
    L.push(`Both compute every layer's attention weights, the last hidden state and the last position's logits (ORT: bench/gpt2_onnx.py's torch.onnx.export; attnscope: run with trace 'weights'); ${RUNS} timed runs each after a warm-up.`, '');
    L.push('| tokens | threads | attnscope | attnscope FMA | ORT | ORT ÷ attnscope | ORT ÷ attnscope FMA (≥ 1.5) | outputs vs ORT: max abs difference attention / hidden, next id |', '|---:|---:|---:|---:|---:|---:|---:|---|');
    for (const [n, r] of Object.entries(ortCmp.tokens)) {
      const m = r.medians;
      for (const t of [1, 2]) {
        const [a, f, o] = [m[`attnscope ${t}t`], m[`attnscope FMA ${t}t`], m[`ORT ${t}t`]];
        L.push(`| ${n} | ${t} | ${fmtMs(a)} | ${fmtMs(f)} | ${fmtMs(o)} | ${(o / a).toFixed(2)} | ${(o / f).toFixed(2)} | ${t === 1 ? `${r.check.attention.toExponential(1)} / ${r.check.hidden.toExponential(1)}, ${r.check.nextAttnscope === r.check.nextOrt ? 'same' : 'DIFFERENT'}` : ''} |`);
      }
    }
    const hp = ortCmp.heap;
    L.push('', `attnscope's wasm heap with the checkpoint loaded, at ${hp.tokens} tokens: ${fmtMB(hp.before.heapSize)} (${fmtMB(hp.before.allocated)} allocated) before ${hp.runs} more runs, ${fmtMB(hp.after.heapSize)} (${fmtMB(hp.after.allocated)} allocated) after.`);
  }
  L.push('', `Total bench time ${((performance.now() - started.t) / 1000).toFixed(0)} s. Speed is reported, never asserted; the machine is shared (see the load average).`);
  return L.join('\n');
}

// ---- main

async function main() {
  if (PHASE === 'node-blob' || PHASE === 'node-u8') return phaseNode(PHASE.slice(5));
  if (PHASE === 'ort') return phaseOrt();
  if (PHASE !== undefined) throw new Error(`gpt2_bench: unknown phase '${PHASE}'`);
  const started = { t: performance.now(), load: os.loadavg().map((x) => x.toFixed(2)).join(' ') };
  for (const f of ['attnscope.mjs', 'attnscope.simd.wasm']) {
    if (!existsSync(join(ROOT, 'dist', f))) throw new Error(`gpt2_bench: dist/${f} is missing: build the module first (scripts/build.sh)`);
  }
  const ck = await ensureCheckpoint(argv.includes('--fresh'));
  console.error(`gpt2_bench: checkpoint ${FILES.weights} (${(ck.bytes / 1e6).toFixed(1)} MB) ${ck.made ? `written in ${ck.seconds.toFixed(1)} s` : 'reused'}`);
  console.error('gpt2_bench: Node, Blob load …');
  const blob = await runChild('blob');
  console.error('gpt2_bench: Node, Uint8Array load, forward, generate …');
  const u8 = await runChild('u8');
  let ortCmp = null;
  if (!argv.includes('--no-ort')) {
    ensureOnnx();
    console.error('gpt2_bench: Node, attnscope vs onnxruntime-web, 1 and 2 threads …');
    ortCmp = await runChild('ort');
  }
  let chrome = null;
  if (!argv.includes('--no-browser') && existsSync(CHROMIUM)) {
    const { server, base } = await startServer();
    try {
      const texts = Object.fromEntries(TOKENS.map((n) => [n, textOf(n)]));
      console.error('gpt2_bench: Chromium, File load and forward …');
      const file = await phaseChromium('file', base, texts);
      console.error('gpt2_bench: Chromium, fetch → Blob load …');
      const cblob = await phaseChromium('blob', base, texts);
      const version = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 2).join(' ');
      chrome = { file, blob: cblob, version };
    } finally {
      server.close();
    }
  }
  const table = report(ck, blob, u8, chrome, started, ortCmp);
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${table}\n`);
  writeFileSync(OUT.replace(/\.md$/, '') + '.json', JSON.stringify({ checkpoint: ck, node: { blob, u8 }, chromium: chrome, ort: ortCmp }, null, 1));
  console.log(table);
}

main().catch((e) => {
  console.error(e.stack ?? e);
  process.exit(1);
});
