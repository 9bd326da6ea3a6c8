// llama1b_bench.mjs: a Llama-3.2-1B-shaped random BF16 checkpoint (hidden 2048, 16 layers, 32 heads sharing 8 K/V
// heads, intermediate 8192, vocab 128256, tied head: 2.47 GB of BF16, 4.9 GB as float32 — more than wasm32's 4 GiB),
// written at bench time to a temporary folder (never committed) and loaded in Node from a Blob (fs.openAsBlob: read
// in chunks, the file never in the JS heap). Layer: bench (public `attnscope` entry only; never asserts time).
// Issue 30: weights stay 2 bytes in the wasm heap and are widened inside the GEMM / GEMV kernels.
//
// Reports: load time, peak RSS, wasm heap; forward (run, trace 'none') at 64 and 512 tokens; decode tokens/s of
// generate (KV cache; one GEMV per weight matrix per token) and the bytes of weights that reads per second, against
// a memory-copy probe measured in this same run (Uint8Array.copyWithin over 256 MiB: V8's memmove, the machine's
// copy bandwidth; bytes READ per second are compared). Medians of the timed repeats; one run, one machine; CPU-time
// figures (process.cpuUsage) beside wall-clock, since the machine is shared.
// Run: `node bench/llama1b_bench.mjs [--threads N] [--quick] [--keep DIR] [--weights8]` (--quick: 64 tokens only, 1
// repeat; --keep: write the checkpoint to DIR once and reuse it; --weights8: the 8-bit option, Q8_0 projections).
import { openAsBlob } from 'node:fs';
import { mkdtempSync, rmSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { CFG, writeCheckpoint } from './llama1b_checkpoint.mjs';

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const quick = argv.includes('--quick');
const longest = Number(arg('tokens', '512'));  // the longer forward (512; a loaded machine may need less)
const threads = Number(arg('threads', '1'));
const keep = arg('keep', null);
const weights8 = argv.includes('--weights8');  // loadPretrained({ weights8: true }): Q8_0 projections

// CFG and writeCheckpoint(dir): ./llama1b_checkpoint.mjs (the page benchmark writes the same checkpoint)

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// This 2-core machine is shared (load average 15-30 while this was written): besides wall-clock, every timing is also
// taken in process CPU time (user + system), which counts only the time this process ran. With one thread the two
// agree on an idle machine; the CPU-time figures are the ones comparable across loads.
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
const gb = (b) => (b / 1e9).toFixed(2);

// Memory-copy probe: copyWithin over 256 MiB (128 MiB read + 128 MiB written per pass); bytes read per second.
function copyProbe() {
  const buf = new Uint8Array(256 << 20);
  buf.fill(1);
  const half = buf.length / 2;
  const rates = [];
  for (let r = 0; r < 7; r++) {
    const t0 = cpuMs();
    buf.copyWithin(0, half, buf.length);
    buf.copyWithin(half, 0, half);
    rates.push((2 * half) / ((cpuMs() - t0) / 1e3));
  }
  return median(rates);
}

const fixture = new URL('../tests/fixtures/modern/llama-bf16-tied-mqa-headdim-linear-v5/tokenizer.json', import.meta.url);
const tokenizer = readFileSync(fixture, 'utf8');  // byte-level, no merges: one token per byte
const dir = keep ?? mkdtempSync(join(tmpdir(), 'attnscope-llama1b-'));
if (keep && !existsSync(dir)) mkdirSync(dir, { recursive: true });
try {
  let t0 = performance.now();
  const file = keep && existsSync(join(dir, 'model.safetensors')) ? { path: join(dir, 'model.safetensors') } : writeCheckpoint(dir);
  const writeMs = performance.now() - t0;
  const probe = copyProbe();

  const as = await createAttnScope({ simd: true, threads });
  const heap0 = as.memoryStats().heapSize;
  const weights = await openAsBlob(file.path);
  t0 = performance.now();
  const loadCpu0 = cpuMs();
  const model = await as.loadPretrained({ config: JSON.stringify(CFG), weights, tokenizer, weights8 });
  const loadMs = performance.now() - t0;
  const loadCpuMs = cpuMs() - loadCpu0;
  console.error(`loaded in ${(loadMs / 1e3).toFixed(1)} s`);
  const heapLoaded = as.memoryStats();
  const rssLoad = process.resourceUsage().maxRSS * 1024;

  const text = (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);
  const fwd = {};
  for (const n of quick ? [64] : [64, longest]) {
    const reps = quick || n >= 512 ? 1 : 3;
    const ms = [], cms = [];
    model.run(text(8), { trace: 'none', topK: 1 });  // warm-up
    for (let r = 0; r < reps; r++) {
      const a = performance.now(), ac = cpuMs();
      const out = model.run(text(n), { trace: 'none', topK: 1 });
      ms.push(performance.now() - a);
      cms.push(cpuMs() - ac);
      if (out.ids.length !== n) throw new Error(`expected ${n} tokens, got ${out.ids.length}`);
    }
    fwd[n] = { ms: median(ms), cpu: median(cms), reps };
    console.error(`forward ${n}: ${(fwd[n].ms / 1e3).toFixed(2)} s wall, ${(fwd[n].cpu / 1e3).toFixed(2)} s cpu`);
  }

  // decode: generate's steps after the prompt are one-row GEMVs over every weight matrix + the tied head
  const newTokens = quick ? 4 : 8;
  const prompt = text(16);
  model.generate(prompt, { maxNewTokens: 1 });  // warm-up
  const decodeRates = [], decodeWall = [];
  for (let r = 0; r < (quick ? 1 : 3); r++) {
    const a = performance.now(), ac = cpuMs();
    model.generate(prompt, { maxNewTokens: 1 });
    const prefill = performance.now() - a, prefillCpu = cpuMs() - ac;
    const b = performance.now(), bc = cpuMs();
    const g = model.generate(prompt, { maxNewTokens: newTokens });
    const all = performance.now() - b, allCpu = cpuMs() - bc;
    const steps = g.ids.length - 1;  // the first new token comes from the prompt's forward
    decodeRates.push(steps / ((allCpu - prefillCpu) / 1e3));
    decodeWall.push(steps / ((all - prefill) / 1e3));
    console.error(`decode: ${decodeRates.at(-1).toFixed(3)} tokens/s (cpu), ${decodeWall.at(-1).toFixed(3)} (wall)`);
  }
  const tokS = median(decodeRates);
  const c = CFG, d = c.hidden_size, hd = c.head_dim;
  const perLayer = d * c.num_attention_heads * hd * 2 + d * c.num_key_value_heads * hd * 2 + 3 * d * c.intermediate_size;
  // BF16 (or Q8_0: 32 bytes + a float32 scale per 32 weights) projections + the tied head's table (weights8: Q8_0 too)
  const weightBytes = (weights8 ? 36 / 32 : 2) * (c.num_hidden_layers * perLayer + c.vocab_size * d);
  const readRate = tokS * weightBytes;
  const params = c.num_hidden_layers * perLayer + c.vocab_size * d;  // weights in matrix products per token
  const rss = process.resourceUsage().maxRSS * 1024;

  const lines = [
    `## Llama-3.2-1B-shaped random BF16 checkpoint in Node${weights8 ? ', loaded with weights8 (Q8_0)' : ''} (${new Date().toISOString().slice(0, 10)}, ${cpus()[0].model}, ${cpus().length} cores, threads ${as.threads})`,
    '',
    '| measure | value |',
    '|---|---|',
    `| checkpoint file (BF16) | ${gb(file.bytes ?? weights.size)} GB (${file.bytes ? `written in ${(writeMs / 1e3).toFixed(1)} s` : 'reused from --keep'}) |`,
    `| load (loadPretrained from a Blob) | ${(loadMs / 1e3).toFixed(1)} s wall, ${(loadCpuMs / 1e3).toFixed(1)} s CPU |`,
    // memoryStats() reports above 2 GiB as negative 32-bit numbers: read them unsigned
    `| wasm heap after load | ${gb(heapLoaded.heapSize >>> 0)} GB (malloc'd ${gb(heapLoaded.allocated >>> 0)} GB; before ${gb(heap0 >>> 0)} GB) |`,
    `| peak RSS after load / at the end | ${gb(rssLoad)} / ${gb(rss)} GB |`,
    ...Object.entries(fwd).map(([n, f]) => `| forward, ${n} tokens (run, trace 'none') | ${(f.cpu / 1e3).toFixed(2)} s CPU, ${(f.ms / 1e3).toFixed(2)} s wall (${f.reps === 1 ? '1 run' : `median of ${f.reps}`}; ${(2 * params * n / (f.cpu / 1e3) / 1e9).toFixed(1)} GFLOP/s of weight products per CPU second) |`),
    `| decode (generate, KV cache) | ${tokS.toFixed(2)} tokens/s per CPU second, ${median(decodeWall).toFixed(2)} wall (median of ${quick ? 1 : 3}, ${newTokens} new tokens) |`,
    `| weights read per token | ${gb(weightBytes)} GB |`,
    `| weights read per CPU second | ${gb(readRate)} GB/s |`,
    `| memory-copy probe (bytes read per CPU second) | ${gb(probe)} GB/s |`,
    `| decode bandwidth / probe | ${(readRate / probe).toFixed(2)} (target ≥ 0.6) |`,
  ];
  console.log(lines.join('\n'));
  model.delete();
  if (threads > 1) process.exit(0);  // pool workers keep Node alive otherwise
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
