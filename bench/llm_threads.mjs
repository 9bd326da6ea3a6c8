// llm_threads.mjs: issue 30's "2 threads vs 1 at n ≥ 128" on a modern decoder in Node — attnscope's prefill (run,
// trace 'none') of 128 and 512 tokens and its decode tokens/s, at 1 and 2 threads, optionally for two checkouts side
// by side (A/B: the old build's dist/ against this one's, in one process, interleaved). Layer: bench (the public
// `attnscope` entry of each checkout only; speed is reported, never asserted).
//
// The checkpoint: a random BF16 one of the SmolLM2-135M shape (hidden 576, 9 heads sharing 3 K/V heads,
// intermediate 1,536, vocab 49,152, tied head) or the Llama-3.2-1B shape (hidden 2,048, 32 heads sharing 8,
// intermediate 8,192, vocab 128,256, tied head), with --layers of its blocks (default: SmolLM2's 30; the 1B shape's
// 2, which keeps four loaded copies at 0.8 GB each — its per-layer work is the full model's, and the tied head, 68 %
// of a decoding step's weights at 16 layers, weighs more here). Written once by bench/llama1b_checkpoint.mjs's writer
// under build/bench/threads-<shape>-<layers>/ (never committed). One token per byte (the byte-level tokenizer of
// tests/fixtures/modern), the same ASCII prompt as bench/llm_engines.mjs.
//
// Every (build, threads) pair is its own createAttnScope instance with the model loaded; each round runs every pair
// once per measure, in turn, and the tables give medians over rounds, the load average beside them (the machine is
// shared: compare ratios within one run), and the 2-thread ratios also of each pair's best round (on this VM the
// same 2-thread forward took 0.65 s in one round and 1.02 s in the next, at load 1, while 1 thread held). Decode: generate(prompt, maxNewTokens N + 1) − generate(prompt, 1), per
// new token, after a short prompt (16 tokens: its prefill is then a small part of both timings). Each pair's next
// token after every prompt is printed: all pairs must agree (threads and builds give the same logits bit for bit,
// tests/js/threads.test.js). At the start of each round the machine's own 2-core scaling is probed (probeScaling,
// below): on a shared machine the forward's ratio is only comparable with it.
// Run: `node --experimental-wasm-relaxed-simd bench/llm_threads.mjs [--shape smollm2|llama1b] [--layers N]
//   [--old DIR] [--threads 1,2] [--lengths 128,512] [--new 32] [--decode-prompt 16] [--rounds 3]` (DIR: another
//   checkout, built).
import { existsSync, mkdirSync, openAsBlob, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

import { CFG, writeCheckpoint } from './llama1b_checkpoint.mjs';
import { memCopyRate, simdPeak } from './probes.mjs';

// The machine's own 2-core scaling at the moment, the ceiling of any 2-threads ÷ 1 figure: the SIMD probe of
// bench/probes.mjs (the relaxed multiply-add loop, or mul + add without relaxed SIMD; prefill is bound by it) and its
// memory-copy probe (decoding is bound by reading weights), each on one thread alone, then on two threads at once
// (worker_threads started together after their warm-up): the total rate of two ÷ one. A shared or hyper-threaded
// core, or memory bandwidth that one thread nearly saturates, shows here as well as in the forward.
if (!isMainThread) {
  const measure = workerData.kind === 'copy' ? (n) => memCopyRate(64, n) : (n) => simdPeak(workerData.kind, n);
  await measure(3);  // tier-up, pages touched
  const flag = new Int32Array(workerData.sab);
  Atomics.add(flag, 1, 1);
  Atomics.wait(flag, 0, 0);
  parentPort.postMessage(await measure(15));
} else {
  await main();
}

async function probeRate(threads, kind) {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const workers = Array.from({ length: threads }, () => new Worker(new URL(import.meta.url), { workerData: { kind, sab: flag.buffer } }));
  while (Atomics.load(flag, 1) < threads) await new Promise((r) => setTimeout(r, 5));
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  const rates = await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  await Promise.all(workers.map((w) => w.terminate()));
  return rates.reduce((a, b) => a + b, 0);
}

// { simd, copy }: two threads' total rate ÷ one thread's
async function probeScaling() {
  const kind = (await simdPeak('relaxed', 1)) ? 'relaxed' : 'muladd';
  const out = {};
  for (const [name, k] of [['simd', kind], ['copy', 'copy']]) out[name] = (await probeRate(2, k)) / (await probeRate(1, k));
  return out;
}

async function main() {
  const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const argv = process.argv.slice(2);
  const arg = (name, fallback) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : fallback; };
  const SHAPE = arg('shape', 'smollm2');
  const SHAPES = {
    smollm2: { ...CFG, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9,
      num_key_value_heads: 3, head_dim: 64, vocab_size: 49152, rope_theta: 100000.0, rope_scaling: undefined },
    llama1b: { ...CFG, num_hidden_layers: 2 },
  };
  if (!SHAPES[SHAPE]) throw new Error(`llm_threads: --shape ${SHAPE}: smollm2 or llama1b`);
  const cfg = { ...SHAPES[SHAPE], num_hidden_layers: Number(arg('layers', SHAPES[SHAPE].num_hidden_layers)) };
  const OLD = arg('old', null);
  const THREADS = arg('threads', '1,2').split(',').map(Number);
  const LENGTHS = arg('lengths', '128,512').split(',').map(Number);
  const NEW = Number(arg('new', '32'));
  const DECODE_PROMPT = Number(arg('decode-prompt', '16'));
  const ROUNDS = Number(arg('rounds', '3'));
  const prompt = (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45) + 1).slice(0, n);
  const median = (xs) => { const s = xs.filter((x) => x != null).sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : null; };
  const load = () => os.loadavg()[0].toFixed(1);

  const dir = join(ROOT, 'build', 'bench', `threads-${SHAPE}-${cfg.num_hidden_layers}`);
  if (!existsSync(join(dir, 'model.safetensors'))) {
    mkdirSync(dir, { recursive: true });
    console.error(`llm_threads: writing ${dir} …`);
    writeCheckpoint(dir, cfg);
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg));
  copyFileSync(join(ROOT, 'tests', 'fixtures', 'modern', 'llama-bf16-tied-mqa-headdim-linear-v5', 'tokenizer.json'), join(dir, 'tokenizer.json'));
  const [config, tokenizer] = ['config.json', 'tokenizer.json'].map((f) => readFileSync(join(dir, f), 'utf8'));
  const weights = await openAsBlob(join(dir, 'model.safetensors'));

  const builds = OLD ? [['old', resolve(OLD)], ['new', ROOT]] : [['this', ROOT]];
  const pairs = [];
  for (const [name, checkout] of builds) {
    const { createAttnScope } = await import(pathToFileURL(join(checkout, 'bindings', 'js', 'index.js')).href);
    for (const threads of THREADS) {
      const as = await createAttnScope({ simd: true, threads });
      if (as.threads !== threads) throw new Error(`llm_threads: ${name} started ${as.threads} threads, not ${threads}`);
      const model = await as.loadPretrained({ config, tokenizer, weights });
      model.run(prompt(8), { trace: 'none', topK: 1 });  // warm-up (tier-up)
      pairs.push({ name, threads, relaxed: as.relaxedSimd, model, t: {}, next: {} });
    }
  }

  const loads = [load()], probes = [];
  for (let r = 0; r < ROUNDS; r++) {
    probes.push(await probeScaling());
    for (const n of LENGTHS) {
      for (const p of pairs) {
        const t0 = performance.now();
        const out = p.model.run(prompt(n), { trace: 'none', topK: 1 });
        (p.t[`prefill ${n}`] ??= []).push(performance.now() - t0);
        p.next[n] = out.next.ids[0];
      }
    }
    for (const p of pairs) {
      let t0 = performance.now();
      p.model.generate(prompt(DECODE_PROMPT), { maxNewTokens: 1 });
      const one = performance.now() - t0;
      t0 = performance.now();
      const g = p.model.generate(prompt(DECODE_PROMPT), { maxNewTokens: NEW + 1 });
      const all = performance.now() - t0;
      (p.t.decode ??= []).push((g.ids.length - 1) / ((all - one) / 1e3));
    }
    loads.push(load());
    console.error(`llm_threads: round ${r + 1}/${ROUNDS} done (load ${loads.at(-1)})`);
  }

  const measures = [...LENGTHS.map((n) => `prefill ${n}`), 'decode'];
  const fmt = (m, x) => (x == null ? '—' : m === 'decode' ? `${x.toFixed(2)} tok/s` : `${x.toFixed(0)} ms`);
  const L = [];
  L.push(`## attnscope in Node, ${SHAPE === 'smollm2' ? 'SmolLM2-135M' : 'Llama-3.2-1B'}-shaped random BF16 checkpoint, ${cfg.num_hidden_layers} layers`, '');
  L.push(`${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus()[0].model}, ${os.cpus().length} cores, Node ${process.version}, relaxed SIMD ${pairs[0].relaxed}; ${ROUNDS} interleaved rounds, medians; load average (1 min) ${loads.join(' → ')}. Decode: ${NEW} new tokens after a ${DECODE_PROMPT}-token prompt.`, '');
  L.push(`| build | threads | ${measures.join(' | ')} | next token ${LENGTHS.join(' / ')} |`, `|---|---:|${measures.map(() => '---:').join('|')}|---|`);
  for (const p of pairs) L.push(`| ${p.name} | ${p.threads} | ${measures.map((m) => fmt(m, median(p.t[m]))).join(' | ')} | ${LENGTHS.map((n) => p.next[n]).join(' / ')} |`);
  // best of the rounds: the fastest time (highest tokens/s), the figure least moved by the host's other work
  const best = (m, xs) => (xs.length ? (m === 'decode' ? Math.max(...xs) : Math.min(...xs)) : null);
  const get = (name, threads, m, f = median) => {
    const xs = pairs.find((p) => p.name === name && p.threads === threads)?.t[m] ?? [];
    return f === median ? median(xs) : best(m, xs);
  };
  const speed = (m, a, b) => (a && b ? (m === 'decode' ? b / a : a / b) : null);  // > 1: b is faster than a
  if (THREADS.includes(1) && THREADS.includes(2)) {
    L.push('', `| 2 threads ÷ 1 (target ≥ 1.8×) | ${measures.join(' | ')} |`, `|---|${measures.map(() => '---:').join('|')}|`);
    for (const [name] of builds) {
      for (const [what, f] of [['medians', median], ['best rounds', best]]) {
        L.push(`| ${name}, ${what} | ${measures.map((m) => `${speed(m, get(name, 1, m, f), get(name, 2, m, f))?.toFixed(2) ?? '—'}×`).join(' | ')} |`);
      }
    }
  }
  if (OLD) {
    L.push('', `| new ÷ old (> 1: faster) | ${measures.join(' | ')} |`, `|---|${measures.map(() => '---:').join('|')}|`);
    for (const t of THREADS) L.push(`| ${t} thread${t > 1 ? 's' : ''} | ${measures.map((m) => `${speed(m, get('old', t, m), get('new', t, m))?.toFixed(2) ?? '—'}×`).join(' | ')} |`);
  }
  const probeList = (k) => `${probes.map((x) => `${x[k].toFixed(2)}×`).join(', ')} (median ${median(probes.map((x) => x[k])).toFixed(2)}×)`;
  L.push('', `The machine's 2-core scaling beside them, two threads at once ÷ one at the start of each round: SIMD probe ${probeList('simd')}; memory-copy probe ${probeList('copy')}.`);
  const nexts = new Set(pairs.map((p) => LENGTHS.map((n) => p.next[n]).join('/')));
  L.push('', nexts.size === 1 ? 'Every build and thread count gave the same next tokens.' : `**Next tokens differ between pairs: ${[...nexts].join(', ')}**`);
  console.log(L.join('\n'));
  for (const p of pairs) p.model.delete();
  process.exit(0);  // pool workers keep Node alive otherwise
}
