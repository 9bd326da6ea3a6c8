// long_context_bench.mjs: the wasm heap of one run at 2,048 and 8,192 tokens through a Llama-3.2-1B-shaped model
// (hidden 2048, 32 query heads sharing 8 K/V heads of 64, SwiGLU 8192, BF16 weights; fewer layers than the real
// 16 so it fits one machine's time and RAM, stated in the output), with run option heads: 'none' (tiled,
// online-softmax attention: no [n, n] matrix, src/attention/tiled.h) against heads: 'all' (trace 'weights': every
// layer keeps [32, n, n]). Issue 30: the heap must grow with n × layers, not n² × layers × heads.
//
//   node bench/long_context_bench.mjs [--layers 2] [--tokens 2048,8192] [--modes tiled,materialised] [--vocab 258]
//     [--layer-outputs] [--stream]
//
// --vocab: 128256 for the real embedding (tied head; 525 MB of BF16 more in the heap unless streamed). --layer-outputs:
// the tiled run keeps every layer's [n, 2048] output (run option layerOutputs: true; off by default with heads 'none'
// since 2026-11-27), as every run before that did. --stream: loadPretrained's streamWeights (the layers and the token
// table stay in the bytes given, in Node's memory: each layer is read into one layer buffer before its forward, the
// run's embedding rows before the first, the tied head's table in 8 MiB pieces after the last; the wasm heap holds the
// final norm, that buffer and the read piece; issue 28).
//
// Each measurement runs in a fresh Node process (a wasm memory never shrinks, so heapSize after the run is the
// run's peak plus the model). Not a test: it takes minutes and its figures depend on the machine.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { llamaCheckpoint } from '../tests/js/support/llama.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const LAYERS = Number(arg('--layers', '2'));
const TOKENS = arg('--tokens', '2048,8192').split(',').map(Number);
const MODES = arg('--modes', 'tiled,materialised').split(',');  // e.g. --modes tiled
const VOCAB = Number(arg('--vocab', '258'));
const LAYER_OUTPUTS = process.argv.includes('--layer-outputs');
const STREAM = process.argv.includes('--stream');
const SHAPE = { hidden: 2048, heads: 32, kv: 8, headDim: 64, ff: 8192 };
// the byte-level BPE tokenizer of the Llama test checkpoint: one token per byte of plain ASCII text
const TOKENIZER_DIR = join(ROOT, 'tests/fixtures/modern/llama-f32-untied-gqa-llama3');

function config(layers, positions) {
  return {
    model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: VOCAB, hidden_size: SHAPE.hidden,
    intermediate_size: SHAPE.ff, num_hidden_layers: layers, num_attention_heads: SHAPE.heads,
    num_key_value_heads: SHAPE.kv, head_dim: SHAPE.headDim, max_position_embeddings: positions, rms_norm_eps: 1e-5,
    rope_theta: 500000, tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
    rope_scaling: { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
  };
}

// BF16 safetensors of seeded uniform weights (std 0.02; norms 1), in memory.
const checkpoint = (cfg) => llamaCheckpoint(cfg, { seed: 12345, scale: 0.0693 }); // uniform, std 0.02

async function child(n, mode) {
  const { createAttnScope } = await import(join(ROOT, 'bindings/js/index.js'));
  // threads: 1, the single-threaded SIMD128 module, as the header says ('auto' took the threaded build in Node)
  const as = await createAttnScope({ simd: true, threads: 1 });
  const cfg = config(LAYERS, Math.max(...TOKENS));
  const model = await as.loadPretrained({
    config: cfg, weights: checkpoint(cfg),
    tokenizer: readFileSync(join(TOKENIZER_DIR, 'tokenizer.json'), 'utf8'), streamWeights: STREAM,
  });
  const afterLoad = as.memoryStats().heapSize;
  const allocatedLoad = as.memoryStats().allocated;
  // on stderr, so that a long run shows it got past the load (run's out-of-memory refusal comes at once, before
  // any layer runs)
  console.error(`  [${n} tokens] loaded: heap ${(afterLoad >>> 0) / 2 ** 20 | 0} MB; running…`);
  const words = 'the quick brown fox jumps over the lazy dog ';
  const text = words.repeat(Math.ceil(n / words.length)).slice(0, n);
  const t0 = performance.now();
  const r = model.run(text, mode === 'tiled'
    ? { heads: 'none', summaries: true, ...(LAYER_OUTPUTS ? { layerOutputs: true } : {}) }
    : { trace: 'weights', summaries: true });
  const ms = performance.now() - t0;
  const tokens = r.ids.length;
  // heapSize: the wasm memory, grown by run()'s reservation (an upper estimate, bindings/embind/memory_reserve.h)
  // and never shrunk; kept: what is still malloc'd while the result is alive (the run's own output); >>> 0: above
  // 2 GiB memoryStats() is a negative 32-bit number
  const stats = as.memoryStats();
  console.log(`@@RESULT ${JSON.stringify({ n: tokens, mode, afterLoad: afterLoad >>> 0, heap: stats.heapSize >>> 0, kept: (stats.allocated >>> 0) - (allocatedLoad >>> 0), ms })}`);
}

function runChild(n, mode) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', String(n), mode,
      '--layers', String(LAYERS), '--tokens', TOKENS.join(','), '--modes', MODES.join(','), '--vocab', String(VOCAB),
      ...(LAYER_OUTPUTS ? ['--layer-outputs'] : []), ...(STREAM ? ['--stream'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (line) resolve(JSON.parse(line.slice(9)));
      else reject(new Error(`long_context_bench: child ${n} ${mode} failed (exit ${code})\n${out}`));
    });
  });
}

const MB = (b) => (b / 2 ** 20).toFixed(0);

async function main() {
  const c = process.argv.indexOf('--child');
  if (c > 0) return child(Number(process.argv[c + 1]), process.argv[c + 2]);
  console.log(`long_context_bench: Llama-3.2-1B-shaped (hidden ${SHAPE.hidden}, ${SHAPE.heads} heads / ${SHAPE.kv} K/V, ` +
    `head ${SHAPE.headDim}, FFN ${SHAPE.ff}, BF16), ${LAYERS} layers (the real model has 16), vocab ${VOCAB}, one thread, ` +
    `SIMD128${LAYER_OUTPUTS ? ', layerOutputs: true' : ''}${STREAM ? ', streamWeights: true' : ''}`);
  const rows = [];
  for (const n of TOKENS) {
    for (const mode of MODES) {
      const weightsBytes = LAYERS * SHAPE.heads * n * n * 4;
      if (mode === 'materialised' && weightsBytes > 3 * 2 ** 30) {
        rows.push({ n, mode, skipped: `would hold ${MB(weightsBytes)} MB of weights (> the 4 GB wasm memory)` });
        continue;
      }
      let r;
      try {
        r = await runChild(n, mode);
      } catch (e) { // e.g. run's out-of-memory Error: a row, and the other sizes still run
        rows.push({ n, mode, skipped: `failed (the child's error is above): ${e.message.split('\n')[0]}` });
        continue;
      }
      rows.push(r);
      console.log(`  n ${r.n} ${mode}: heap ${MB(r.heap)} MB (model loaded: ${MB(r.afterLoad)} MB; run adds ` +
        `${MB(r.heap - r.afterLoad)} MB; the result keeps ${MB(r.kept)} MB), ${(r.ms / 1000).toFixed(1)} s`);
    }
  }
  for (const r of rows) if (r.skipped) console.log(`  n ${r.n} ${r.mode}: skipped, ${r.skipped}`);
  const tiled = rows.filter((r) => r.mode === 'tiled' && !r.skipped);
  if (tiled.length === 2) {
    const [a, b] = tiled;
    console.log(`  tiled: run heap growth ${MB(a.heap - a.afterLoad)} MB -> ${MB(b.heap - b.afterLoad)} MB for ` +
      `${a.n} -> ${b.n} tokens (x${((b.heap - b.afterLoad) / (a.heap - a.afterLoad)).toFixed(2)}; n grew ` +
      `x${(b.n / a.n).toFixed(0)}, n² x${((b.n / a.n) ** 2).toFixed(0)})`);
  }
  return undefined;
}

await main();
