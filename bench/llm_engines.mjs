// llm_engines.mjs (`npm run bench:llm`): issue 30's LLM comparison — attnscope against llama.cpp's WebAssembly build
// (npm @wllama/wllama) and onnxruntime-web on a random checkpoint of a modern decoder's shape, in headless Chromium
// (where wllama runs), 1 and 2 threads, plus attnscope in Node. Layer: bench (public entries only; speed is reported,
// never asserted).
//
// The checkpoint (made at bench time under build/bench/llm-<shape>/, never committed): bench/llm_ref.py writes the
// Hugging Face Llama layout (config.json, BF16 model.safetensors, the byte-level tokenizer.json of tests/fixtures/
// modern: id = byte value), the float64 reference (ref.json: next-token top-5 after the 128- and 512-byte prompts, the
// greedy continuation of the 128-byte one) and the ONNX exports (onnx-128/model.onnx, onnx-512/model.onnx: torch.onnx
// of the same forward in float32, logits of the last position; the 1B shape's tensors as external data files beside
// them, since protobuf stops at 2 GB). bench/gguf_writer.mjs converts the same safetensors to GGUF
// at F16 and Q8_0 (Q/K rows permuted for llama.cpp's RoPE). Every engine reads the same ASCII prompt, which each
// tokenizer turns into one token per byte (checked: the prompt token counts are reported).
//
// Contestants: attnscope BF16 (weights kept 2 bytes) and weights8 (Q8_0 projections), wllama F16 and Q8_0,
// onnxruntime-web FP32 and FP16 (prefill only: the export has no KV cache; FP16 is the FP32 export converted by
// bench/onnx_fp16.mjs: weights stored in float16, but ORT's wasm CPU provider has no float16 MatMul / Add / Mul /
// Softmax kernels and computes those in float32 between Casts, bench/ort_fp16_kernels.mjs), each at 1 and 2 threads, each in a fresh browser
// (COOP/COEP headers: SharedArrayBuffer for the threaded builds). Measures: load (fetch excluded), prefill of 128 and
// 512 tokens (attnscope: run with trace 'none'; wllama: llama-server's timings.prompt_ms of a 1-token completion with
// cache_prompt false; ORT: session.run), decode tokens/s over 64 new tokens (attnscope: generate(64) − generate(1)
// wall time; wllama: timings.predicted_per_second), peak resident memory of the renderer (VmHWM). Cross-checks: the
// next token after each prompt and the first greedy tokens against the float64 reference. Rounds are interleaved
// (every contestant once per round, in turn); the tables give medians over rounds.
//
// Run: `node bench/llm_engines.mjs [--quick] [--shape smollm2|llama1b] [--rounds N] [--only attnscope,wllama,ort,ort16,node]
//   [--threads 1,2] [--lengths 128,512] [--out FILE] [--dir DIR] [--split-mb 1500] [--wllama F16,Q8_0]` (output: build/bench/llm-<shape>.md
// and .json; DIR holds the files, build/bench/llm-<shape>/ by default; GGUF files over --split-mb MB are written as
// gguf-split parts, since wllama reads no file over 2 GB). `--lengths 128`
// skips the 512-token prefills (a decode-only comparison: decode always follows the first length's prompt).
// A memory-copy probe (probes.mjs memCopyRate, Node, one thread) runs at the start of every round; decode's BF16
// weight bytes per second are divided by its median.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, TYPES, chromiumMemory, inChromium } from './chromium_support.mjs';
import { writeLlamaGguf } from './gguf_writer.mjs';
import { externalFiles, toFloat16 } from './onnx_fp16.mjs';
import { pkgDir } from './ort_node.mjs';
import { memCopyRate, simdPeak } from './probes.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (name, fallback) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : fallback; };
const SHAPE = arg('shape', 'smollm2');
const QUICK = argv.includes('--quick');  // scripts/bench.sh --quick: one round, one thread
const ROUNDS = Number(arg('rounds', QUICK ? '1' : '3'));
const ONLY = arg('only', 'attnscope,wllama,ort,ort16,node').split(',');
const THREADS = arg('threads', QUICK ? '1' : '1,2').split(',').map(Number);
const DIR = resolve(arg('dir', join(ROOT, 'build', 'bench', `llm-${SHAPE}`)));  // --dir: another folder for the files
const OUT = arg('out', join(ROOT, 'build', 'bench', `llm-${SHAPE}.md`));
const SEED = 1;
const SPLIT_MB = Number(arg('split-mb', '1500'));
const WLLAMA = arg('wllama', 'F16,Q8_0').split(',');  // the GGUF types llama.cpp runs  // GGUF files of at most this many MB of tensors
const NEW_TOKENS = 64;
const LENGTHS = arg('lengths', '128,512').split(',').map(Number);  // prompt lengths (each must be in ref.json)

const median = (xs) => { const s = xs.filter((x) => x != null).sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : null; };
// the same text as llm_ref.py's prompt(n): n ASCII bytes, one token each
const prompt = (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45) + 1).slice(0, n);

// ---- the checkpoint, its reference, GGUF and ONNX files

function prepare() {
  mkdirSync(DIR, { recursive: true });
  const ort = ONLY.includes('ort') || ONLY.includes('ort16');
  const need = ['model.safetensors', 'ref.json', ...(ort ? LENGTHS.map((n) => `onnx-${n}/model.onnx`) : [])];
  if (need.some((f) => !existsSync(join(DIR, f)))) {
    // a checkpoint with its reference needs only the exports (the 1B reference took an hour)
    const exportsOnly = existsSync(join(DIR, 'model.safetensors')) && existsSync(join(DIR, 'ref.json'));
    console.error(`llm_engines: writing the ${SHAPE} ${exportsOnly ? 'ONNX exports' : 'checkpoint, its float64 reference and ONNX exports'} (bench/llm_ref.py) …`);
    const r = spawnSync('/usr/bin/python3', [join(ROOT, 'bench', 'llm_ref.py'), DIR, SHAPE, String(SEED),
      ...(ort ? ['--onnx', ...LENGTHS.map(String)] : []), ...(exportsOnly ? ['--onnx-only'] : [])], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('llm_engines: bench/llm_ref.py failed');
  }
  // FP16 for onnxruntime-web: the float32 export converted (bench/onnx_fp16.mjs; torch 1.13 cannot trace float16 on
  // the CPU); past 2 GB the float32 export's tensors are external data (one file per tensor), the FP16 model's are in
  // one file, onnx-<n>/model-fp16.onnx.data
  for (const n of ONLY.includes('ort16') ? LENGTHS : []) {
    const out = join(DIR, `onnx-${n}`, 'model-fp16.onnx');
    if (existsSync(out)) continue;
    const src = readFileSync(join(DIR, `onnx-${n}`, 'model.onnx'));
    const t0 = performance.now();
    const { bytes, ops } = toFloat16(src, externalFiles(src).length ? { dir: join(DIR, `onnx-${n}`), data: `${out}.data` } : {});
    writeFileSync(out, bytes);
    console.error(`llm_engines: ${out} (${(bytes.length / 1e6).toFixed(0)} MB${existsSync(`${out}.data`) ? ` + ${(statSync(`${out}.data`).size / 1e6).toFixed(0)} MB of external data` : ''}, ${((performance.now() - t0) / 1e3).toFixed(0)} s; ops ${ops.join(', ')})`);
  }
  // the external data files of each ONNX model, which the page passes to onnxruntime-web (`externalData`)
  const external = {};
  for (const suffix of [...(ONLY.includes('ort') ? [''] : []), ...(ONLY.includes('ort16') ? ['-fp16'] : [])]) {
    for (const n of LENGTHS) external[`${n}${suffix}`] = externalFiles(readFileSync(join(DIR, `onnx-${n}`, `model${suffix}.onnx`)));
  }
  const config = JSON.parse(readFileSync(join(DIR, 'config.json'), 'utf8'));
  // GGUF for llama.cpp, in files of at most --split-mb (1,500 MB) (wllama reads no file over 2 GB: an ArrayBuffer's limit; the
  // 1B shape is 2.47 GB at F16); model-<type>.json lists them once all are written
  for (const type of ['F16', 'Q8_0']) {
    const list = join(DIR, `model-${type}.json`);
    if (!ONLY.includes('wllama') || existsSync(list)) continue;
    const t0 = performance.now();
    const { bytes, paths } = writeLlamaGguf({ safetensors: join(DIR, 'model.safetensors'), config, out: join(DIR, `model-${type}.gguf`), type, maxBytes: SPLIT_MB * 1e6 });
    writeFileSync(list, JSON.stringify(paths.map((p) => basename(p))));
    console.error(`llm_engines: ${paths.join(', ')} (${(bytes / 1e6).toFixed(0)} MB, ${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
  }
  return { config, ref: JSON.parse(readFileSync(join(DIR, 'ref.json'), 'utf8')), external };
}

// ---- loopback server with cross-origin isolation

const PAGE = '<!doctype html><meta charset="utf-8"><title>attnscope LLM engines bench</title><link rel="icon" href="data:,">\n';
function startServer() {
  const roots = { '/bindings/js/': join(ROOT, 'bindings', 'js'), '/dist/': join(ROOT, 'dist'), '/model/': DIR,
    '/wllama/': join(pkgDir('@wllama/wllama'), 'esm'), '/ort/': join(pkgDir('onnxruntime-web'), 'dist') };
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'no-store' };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/') { res.writeHead(200, { 'Content-Type': TYPES['.html'], ...isolation }).end(PAGE); return; }
    const prefix = Object.keys(roots).find((p) => url.pathname.startsWith(p));
    const name = prefix && decodeURIComponent(url.pathname.slice(prefix.length));
    if (!name || name.split('/').some((s) => s === '..' || s === '')) { res.writeHead(404).end(); return; }
    const file = join(roots[prefix], name);
    let size;
    try { size = statSync(file).size; } catch { res.writeHead(404).end(); return; }
    const ext = name.slice(name.lastIndexOf('.'));
    res.writeHead(200, { 'Content-Type': TYPES[ext] ?? 'application/octet-stream', 'Content-Length': size, ...isolation });
    createReadStream(file).pipe(res);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, base: `http://127.0.0.1:${server.address().port}/` })));
}

// ---- what runs in the page (serialised with toString: no closure over this module)

// prefill (run with trace 'none') at each length, decode tokens/s (generate(newTokens) − generate(1)), greedy ids;
// called in the page (passed as source) and in Node
async function measureAttnscope(model, prompt, lengths, newTokens) {
  const res = { prefill: {}, next: {}, promptTokens: {} };
  model.run(prompt(8), { trace: 'none', topK: 1 });  // warm-up
  let t;
  for (const n of lengths) {
    t = performance.now();
    const r = model.run(prompt(n), { trace: 'none', topK: 5 });
    res.prefill[n] = performance.now() - t;
    res.next[n] = Array.from(r.next.ids);
    res.promptTokens[n] = r.ids.length;
  }
  t = performance.now();
  model.generate(prompt(lengths[0]), { maxNewTokens: 1 });
  const one = performance.now() - t;
  t = performance.now();
  const g = model.generate(prompt(lengths[0]), { maxNewTokens: newTokens });
  res.decode = { tokens: g.ids.length, perS: (g.ids.length - 1) / ((performance.now() - t - one) / 1e3) };
  res.greedy = Array.from(g.ids);
  return res;
}

async function pageAttnscope({ threads, weights8, lengths, newTokens, promptSrc, measureSrc }) {
  const prompt = new Function(`return (${promptSrc})`)();
  const measure = new Function(`return (${measureSrc})`)();
  const { createAttnScope } = await import('/bindings/js/index.js');
  const as = await createAttnScope({ simd: true, threads });
  const [config, tokenizer] = await Promise.all(['config.json', 'tokenizer.json'].map((f) => fetch(`/model/${f}`).then((r) => r.text())));
  const weights = await (await fetch('/model/model.safetensors')).blob();
  const t = performance.now();
  const model = await as.loadPretrained({ config, weights, tokenizer, weights8 });
  const loadMs = performance.now() - t;
  const res = { threads: as.threads, loadMs, ...(await measure(model, prompt, lengths, newTokens)) };
  res.heap = as.memoryStats().heapSize >>> 0;
  model.delete();
  return res;
}

async function pageWllama({ threads, type, lengths, newTokens, promptSrc }) {
  const prompt = new Function(`return (${promptSrc})`)();
  const { Wllama } = await import('/wllama/index.js');
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true });
  const names = await (await fetch(`/model/model-${type}.json`)).json();  // one file, or gguf-split's parts in order
  const files = [];
  for (const name of names) files.push(new File([await (await fetch(`/model/${name}`)).blob()], name));
  let t = performance.now();
  await w.loadModel(files, { n_threads: threads, n_ctx: 1024, n_batch: 512, n_ubatch: 512 });
  const res = { threads, loadMs: performance.now() - t, prefill: {}, prefillWall: {}, next: {}, promptTokens: {}, text: {} };
  // greedy, no prompt cache (every prefill is computed), end token ignored (64 tokens always)
  const complete = (p, max) => w.createCompletion({ prompt: p, max_tokens: max, temperature: 0, top_k: 1,
    cache_prompt: false, ignore_eos: true, seed: 1 });
  // generated text back to ids: the placeholders "<|rN|>" are token N, other characters are byte tokens
  const ids = (s) => [...s.matchAll(/<\|r(\d+)\|>|[\s\S]/gu)].map((m) => (m[1] ? Number(m[1]) : m[0].codePointAt(0)));
  await complete(prompt(8), 1);  // warm-up
  for (const n of lengths) {
    t = performance.now();
    const r = await complete(prompt(n), 1);
    res.prefillWall[n] = performance.now() - t;
    res.prefill[n] = r.timings.prompt_ms;
    res.text[n] = r.choices[0].text;
    res.next[n] = ids(r.choices[0].text);
    res.promptTokens[n] = r.usage.prompt_tokens;
  }
  const g = await complete(prompt(lengths[0]), newTokens);
  res.decode = { tokens: g.timings.predicted_n, perS: g.timings.predicted_per_second };
  res.greedy = ids(g.choices[0].text);
  res.context = w.getLoadedContextInfo?.();
  await w.exit();
  return res;
}

async function pageOrt({ threads, lengths, promptSrc, suffix = '', external }) {
  const prompt = new Function(`return (${promptSrc})`)();
  const ort = await import('/ort/ort.wasm.bundle.min.mjs');
  ort.env.wasm.numThreads = threads;
  const res = { threads, loadMs: null, loadMsByLength: {}, prefill: {}, next: {}, promptTokens: {} };
  for (const n of lengths) {
    const bytes = new Uint8Array(await (await fetch(`/model/onnx-${n}/model${suffix}.onnx`)).arrayBuffer());
    let t = performance.now();
    // external data (models past 2 GB): onnxruntime-web fetches each file itself (past 1 GB into one buffer of the
    // file's size) and copies the tensors into its wasm memory at session creation
    const externalData = external[`${n}${suffix}`].map((f) => ({ path: f, data: `/model/onnx-${n}/${f}` }));
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      ...(externalData.length ? { externalData } : {}) });
    res.loadMsByLength[n] = performance.now() - t;
    res.loadMs ??= res.loadMsByLength[n];
    const ids = new ort.Tensor('int64', BigInt64Array.from([...new TextEncoder().encode(prompt(n))].map(BigInt)), [n]);
    await session.run({ input_ids: ids });  // warm-up
    t = performance.now();
    const out = await session.run({ input_ids: ids });
    res.prefill[n] = performance.now() - t;
    const logits = out.logits.data;
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    res.next[n] = [best];
    res.promptTokens[n] = n;
    await session.release();
  }
  return res;
}

async function runInChromium(base, job) {
  return inChromium('attnscope-llm-', base, async (page, profile, errors) => {
    if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error('llm_engines: the page is not cross-origin isolated');
    const fn = { attnscope: pageAttnscope, wllama: pageWllama, ort: pageOrt, ort16: pageOrt }[job.engine];
    const out = await page.evaluate(`(${fn.toString()})(${JSON.stringify({ ...job, lengths: LENGTHS, newTokens: NEW_TOKENS, promptSrc: prompt.toString(), measureSrc: measureAttnscope.toString() })})`);
    const mem = chromiumMemory(profile);
    out.peakRenderer = mem ? Math.max(...mem.renderers.map((r) => r.hwm)) : null;
    if (errors.length) out.pageErrors = errors;
    return out;
  });
}

// ---- attnscope in Node (a child process per job: its own heap and peak RSS)

async function phaseNode() {
  const job = JSON.parse(arg('job'));
  const { openAsBlob } = await import('node:fs');
  const { createAttnScope } = await import('attnscope');
  const as = await createAttnScope({ simd: true, threads: job.threads });
  const weights = await openAsBlob(join(DIR, 'model.safetensors'));
  const [config, tokenizer] = ['config.json', 'tokenizer.json'].map((f) => readFileSync(join(DIR, f), 'utf8'));
  const t = performance.now();
  const model = await as.loadPretrained({ config, weights, tokenizer, weights8: job.weights8 });
  const res = { threads: as.threads, loadMs: performance.now() - t, ...(await measureAttnscope(model, prompt, LENGTHS, NEW_TOKENS)) };
  res.peakRss = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify(res));
  process.exit(0);  // pool workers keep Node alive otherwise
}

function runInNode(job) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--phase', 'node', '--shape', SHAPE, '--job', JSON.stringify(job)],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', (code) => (code === 0 ? res(JSON.parse(out)) : rej(new Error(`llm_engines: node job exited ${code}`))));
  });
}

// ---- report

function check(r, ref) {
  // next token after each prompt vs the float64 top-1; greedy: the leading tokens that equal the reference's
  const next = LENGTHS.map((n) => `${r.next?.[n]?.[0] === ref.prompts[n].ids[0] ? '✓' : `✗ ${r.next?.[n]?.[0]}`}`);
  const want = ref.greedy128.ids;
  let agree = 0;
  while (r.greedy && agree < want.length && r.greedy[agree] === want[agree]) agree++;
  return { next, greedy: r.greedy ? `${agree}/${want.length}` : '—' };
}

function report(results, failures, ref, config, meta) {
  const L = [];
  const fmt = (x, d = 0) => (x == null ? '—' : x.toFixed(d));
  const key = (j) => `${j.label}|${j.threads}`;
  const groups = new Map();
  for (const r of results) {
    if (!groups.has(key(r.job))) groups.set(key(r.job), { job: r.job, runs: [] });
    groups.get(key(r.job)).runs.push(r.out);
  }
  const med = (g, f) => median(g.runs.map((o) => { try { return f(o); } catch { return null; } }));
  const c = config, hd = c.head_dim;
  const perLayer = c.hidden_size * c.num_attention_heads * hd * 2 + c.hidden_size * c.num_key_value_heads * hd * 2 + 3 * c.hidden_size * c.intermediate_size;
  const params = c.num_hidden_layers * perLayer + c.vocab_size * c.hidden_size;
  L.push(`## ${SHAPE === 'smollm2' ? 'SmolLM2-135M' : 'Llama-3.2-1B'}-shaped random checkpoint: attnscope vs llama.cpp (wllama) vs onnxruntime-web`, '');
  L.push(`${meta.date}, ${meta.cpu}, ${os.cpus().length} cores shared with other jobs (load average ${meta.load.map((x) => x.toFixed(1)).join(' / ')} at the start, ${meta.loadEnd.map((x) => x.toFixed(1)).join(' / ')} at the end), ${meta.chromium}, Node ${process.version}, @wllama/wllama ${meta.wllama}, onnxruntime-web ${meta.ort}. ${ROUNDS} interleaved round(s), medians; wall-clock ms. ${(params / 1e6).toFixed(0)} M weights in matrix products per token; SIMD128 mul+add probe ${fmt(meta.probe, 1)} GFLOP/s (one thread, Node).`, '');
  L.push('| engine | threads | load ms | prefill 128 ms | prefill 512 ms | GFLOP/s at 512 | decode tok/s | peak MB | next token 128 / 512 | greedy | prompt tokens |');
  L.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const g of groups.values()) {
    const p512 = med(g, (o) => o.prefill[512]);
    const ck = check(g.runs[0], ref);
    const peak = med(g, (o) => o.peakRenderer ?? o.peakRss);
    L.push(`| ${g.job.label} | ${g.job.threads} | ${fmt(med(g, (o) => o.loadMs))} | ${fmt(med(g, (o) => o.prefill[128]))} | ${fmt(p512)} | ${p512 ? fmt(2 * params * 512 / (p512 / 1e3) / 1e9, 1) : '—'} | ${fmt(med(g, (o) => o.decode.perS), 1)} | ${fmt(peak == null ? null : peak / 1e6)} | ${ck.next.join(' / ')} | ${ck.greedy} | ${LENGTHS.map((n) => g.runs[0].promptTokens?.[n] ?? '—').join(' / ')} |`);
  }
  L.push('', 'Float64 reference: next token after 128 / 512 bytes ' + LENGTHS.map((n) => `${ref.prompts[n].ids[0]} (margin ${(ref.prompts[n].logits[0] - ref.prompts[n].logits[1]).toFixed(1)} over the second)`).join(' / ')
    + `; greedy continuation of the 128-byte prompt ${ref.greedy128.ids.join(', ')} (margins ${ref.greedy128.margins.map((m) => m.toFixed(1)).join(', ')}).`);
  // ratios, same threads
  const get = (label, t, f) => { const g = groups.get(`${label}|${t}`); return g ? med(g, f) : null; };
  const ratio = (a, b) => (a && b ? (a / b).toFixed(2) + '×' : '—');
  L.push('', '| ratio (same threads) | target | 1 thread | 2 threads |', '|---|---|---|---|');
  const rows = [
    ['prefill 128, attnscope BF16 vs llama.cpp F16', '≥ 10×', (t) => ratio(get('wllama F16', t, (o) => o.prefill[128]), get('attnscope BF16', t, (o) => o.prefill[128]))],
    ['prefill 512, attnscope BF16 vs llama.cpp F16', '≥ 10×', (t) => ratio(get('wllama F16', t, (o) => o.prefill[512]), get('attnscope BF16', t, (o) => o.prefill[512]))],
    ['prefill 128, attnscope BF16 vs llama.cpp Q8_0', '≥ 6×', (t) => ratio(get('wllama Q8_0', t, (o) => o.prefill[128]), get('attnscope BF16', t, (o) => o.prefill[128]))],
    ['prefill 512, attnscope BF16 vs llama.cpp Q8_0', '≥ 6×', (t) => ratio(get('wllama Q8_0', t, (o) => o.prefill[512]), get('attnscope BF16', t, (o) => o.prefill[512]))],
    ['decode, attnscope BF16 vs llama.cpp Q8_0', '≥ 2×', (t) => ratio(get('attnscope BF16', t, (o) => o.decode.perS), get('wllama Q8_0', t, (o) => o.decode.perS))],
    ['decode, attnscope weights8 vs llama.cpp Q8_0', '≥ 3×', (t) => ratio(get('attnscope weights8', t, (o) => o.decode.perS), get('wllama Q8_0', t, (o) => o.decode.perS))],
    ['prefill 128, attnscope BF16 vs onnxruntime-web FP32', '≥ 1.2×', (t) => ratio(get('onnxruntime-web FP32', t, (o) => o.prefill[128]), get('attnscope BF16', t, (o) => o.prefill[128]))],
    ['prefill 512, attnscope BF16 vs onnxruntime-web FP32', '≥ 1.2×', (t) => ratio(get('onnxruntime-web FP32', t, (o) => o.prefill[512]), get('attnscope BF16', t, (o) => o.prefill[512]))],
    ['prefill 128, attnscope BF16 vs onnxruntime-web FP16', '≥ 1.2×', (t) => ratio(get('onnxruntime-web FP16', t, (o) => o.prefill[128]), get('attnscope BF16', t, (o) => o.prefill[128]))],
    ['prefill 512, attnscope BF16 vs onnxruntime-web FP16', '≥ 1.2×', (t) => ratio(get('onnxruntime-web FP16', t, (o) => o.prefill[512]), get('attnscope BF16', t, (o) => o.prefill[512]))],
    ['prefill 512 GFLOP/s, attnscope BF16 / SIMD128 probe', '≥ 0.8', (t) => { const p = get('attnscope BF16', t, (o) => o.prefill[512]); return p && meta.probe ? (2 * params * 512 / (p / 1e3) / 1e9 / meta.probe / t).toFixed(2) + (t > 1 ? ' (per thread)' : '') : '—'; }],
  ];
  for (const [name, target, f] of rows) L.push(`| ${name} | ${target} | ${THREADS.includes(1) ? f(1) : '—'} | ${THREADS.includes(2) ? f(2) : '—'} |`);
  const scale = (label, f) => ratio(get(label, 1, f), get(label, 2, f));
  L.push(`| 2 threads vs 1, prefill 512 (not per thread count: attnscope BF16 in the first column, wllama F16 in the second) | ≥ 1.8× | ${scale('attnscope BF16', (o) => o.prefill[512])} | ${scale('wllama F16', (o) => o.prefill[512])} |`);
  const bytesPerToken = 2 * (c.num_hidden_layers * perLayer + c.vocab_size * c.hidden_size);
  const gbs = (t) => { const d = get('attnscope BF16', t, (o) => o.decode.perS); return d ? d * bytesPerToken / 1e9 : null; };
  L.push(`| decode, attnscope BF16: weight bytes read per second ÷ memory-copy probe | ≥ 0.6 | ${[1, 2].map((t) => (THREADS.includes(t) && gbs(t) && meta.copy ? `${gbs(t).toFixed(2)} GB/s ÷ ${meta.copy.toFixed(2)} = ${(gbs(t) / meta.copy).toFixed(2)}` : '—')).join(' | ')} |`);
  L.push('', `Decode reads ${(bytesPerToken / 1e6).toFixed(0)} MB of BF16 weights per token (projections + the tied head). Memory-copy probe (\`memory.copy\` of 64 MiB, Node, one thread, bytes copied per second) at the start of each round: ${meta.copies.map((x) => x.toFixed(2)).join(', ')} GB/s.`);
  for (const r of results) if (r.out.pageErrors) L.push(`Page errors (${r.job.label}, ${r.job.threads} threads): ${r.out.pageErrors.join('; ')}`);
  for (const f of failures) L.push('', `Failed (${f.job.label}, ${f.job.threads} thread(s), round ${f.round + 1}): ${f.error}`);
  return L.join('\n');
}

async function main() {
  if (arg('phase') === 'node') return phaseNode();
  const started = new Date();
  const load = os.loadavg();
  const { config, ref, external } = prepare();
  const probe = await simdPeak('muladd');
  const jobs = [];
  for (const t of THREADS) {
    if (ONLY.includes('attnscope')) jobs.push({ engine: 'attnscope', label: 'attnscope BF16', weights8: false, threads: t },
      { engine: 'attnscope', label: 'attnscope weights8', weights8: true, threads: t });
    if (ONLY.includes('wllama')) jobs.push(...WLLAMA.map((type) => ({ engine: 'wllama', label: `wllama ${type}`, type, threads: t })));
    if (ONLY.includes('ort')) jobs.push({ engine: 'ort', label: 'onnxruntime-web FP32', external, threads: t });
    if (ONLY.includes('ort16')) jobs.push({ engine: 'ort16', label: 'onnxruntime-web FP16', suffix: '-fp16', external, threads: t });
    if (ONLY.includes('node')) jobs.push({ engine: 'node', label: 'attnscope BF16 (Node)', weights8: false, threads: t });
  }
  const { server, base } = await startServer();
  const results = [];
  const failures = [];
  const copies = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      copies.push(await memCopyRate());
      for (const job of jobs) {
        const t0 = performance.now();
        try {
          const out = job.engine === 'node' ? await runInNode(job) : await runInChromium(base, job);
          results.push({ job, round, out });
          console.error(`llm_engines: round ${round + 1}/${ROUNDS} ${job.label} ×${job.threads}: load ${out.loadMs.toFixed(0)} ms, prefill ${LENGTHS.map((n) => out.prefill[n]?.toFixed(0)).join(' / ')} ms, decode ${out.decode?.perS?.toFixed(1) ?? '—'} tok/s, next ${LENGTHS.map((n) => out.next[n]?.[0]).join(' / ')} (ref ${LENGTHS.map((n) => ref.prompts[n].ids[0]).join(' / ')}), greedy ${out.greedy?.slice(0, 4).join(',') ?? '—'} (${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
        } catch (e) {
          console.error(`llm_engines: ${job.label} ×${job.threads} failed: ${e.message}`);
          failures.push({ job, round, error: e.message.split('\n')[0] });  // the table says so (first line: no stack)
        }
      }
    }
  } finally {
    server.close();
  }
  const chromium = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '?';
  const version = (p) => JSON.parse(readFileSync(join(pkgDir(p), 'package.json'), 'utf8')).version;
  const cpu = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [0, '?'])[1];
  const meta = { date: started.toISOString().slice(0, 16).replace('T', ' ') + ' UTC', cpu, load, loadEnd: os.loadavg(), chromium,
    wllama: version('@wllama/wllama'), ort: version('onnxruntime-web'), probe, copy: median(copies), copies };
  const table = report(results, failures, ref, config, meta);
  console.log(table);
  writeFileSync(OUT, table + '\n');
  writeFileSync(OUT.replace(/\.md$/, '.json'), JSON.stringify({ meta, ref, results, failures }, null, 1));
}

await main();
