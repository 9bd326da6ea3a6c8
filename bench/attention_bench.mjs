// attention_bench.mjs: attnscope (SIMD128 and scalar wasm) against plain JS, onnxruntime-web (wasm,
// 1 and 2 threads) and tfjs-backend-wasm (SIMD), all in one Node process on the same seeded data.
// Layer: bench (uses only the public `attnscope` entry; never asserts time). Run: `npm run bench`
// (or `node bench/attention_bench.mjs [--quick] [--out FILE]`). How to read the output: bench/README.md.
//
// Method: every contestant's output is checked against a float64 reference on the small shapes (a wrong
// contestant is flagged, not ranked); warm-up until 5 runs or 200 ms; contestants interleaved in two
// passes (the second in reverse order); medians over >= 10 samples; ratios are median ÷ median from this
// one run only (the machine is shared, so absolute numbers from different runs do not compare).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createAttnScope } from 'attnscope';

import { gemmModel, mhaContribModel, mhaModel } from './onnx_models.mjs';
import { simdPeak } from './probes.mjs';
import { loadOrt, pkgDir } from './ort_node.mjs';
import {
  gemmF32, gemmF64, mhaF32, mhaF64, randomArray, relError, rng,
} from './plain_js.mjs';

const require = createRequire(import.meta.url);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---- options

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const ALL = argv.includes('--all'); // also measure cells predicted to take over VERY_SLOW_MS per run
const outIdx = argv.indexOf('--out');
const OUT = outIdx >= 0 ? resolve(argv[outIdx + 1]) : join(ROOT, 'build/bench/attention.md');
for (const a of argv) {
  if (a.startsWith('--') && !['--quick', '--all', '--out'].includes(a)) {
    console.error(`attention_bench: unknown option ${a} (use --quick, --all, --out FILE)`);
    process.exit(2);
  }
}

const MHA_SHAPES = QUICK
  ? [[64, 256, 4], [128, 512, 8]]
  : [[64, 256, 4], [128, 512, 8], [512, 768, 12], [1024, 768, 12]];
const GEMM_SIZES = QUICK ? [256] : [256, 512, 1024];
const PIPELINE_TOKENS = QUICK ? [32] : [32, 128, 512];
const CHECKED_MHA = new Set(['64x256x4', '128x512x8']); // float64 reference computed for these
const CHECKED_GEMM = new Set([256, 512]);
const TOLERANCE = 1e-4; // max |y − ref| / max |ref|; float32 results here sit near 1e-6

const WARMUP_RUNS = 5; // warm-up: until this many runs …
const WARMUP_MS = 200; // … or this much time, whichever comes first (at least one run)
const MIN_PER_PASS = 5; // two passes → >= 10 samples
const SLOW_RUN_MS = 2000; // a contestant slower than this per run gets SLOW_PER_PASS samples per pass
const SLOW_PER_PASS = 3;
const SETTLE_MS = 30; // idle time after a multi-threaded ORT run (see ortContestant)
const VERY_SLOW_MS = 6000; // predicted slower than this per run: skipped unless --all (keeps ~5 min)
const MAX_PER_PASS = 15;
const PASS_BUDGET_MS = QUICK ? 150 : 500; // target time per contestant per pass

const notes = []; // workarounds and gaps, printed under the table

// ---- environment facts

function cpuModel() {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1].trim();
  } catch { /* not Linux */ }
  return os.cpus()[0]?.model ?? 'unknown';
}

function pkgVersion(name) {
  try {
    let dir = dirname(require.resolve(name));
    while (dir !== '/') {
      try {
        const pj = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        if (pj.name === name) return pj.version;
      } catch { /* keep climbing */ }
      dir = dirname(dir);
    }
  } catch { /* not installed */ }
  return 'not installed';
}


const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

// ---- data (seeded; identical for every contestant)

function mhaData(n, d) {
  const next = rng(1000 * n + d);
  const s = 1 / Math.sqrt(d); // keeps the projections O(1) so the softmax is neither flat nor one-hot
  return {
    x: randomArray(n * d, next),
    w: {
      wq: randomArray(d * d, next, s), wk: randomArray(d * d, next, s),
      wv: randomArray(d * d, next, s), wo: randomArray(d * d, next, s),
      bq: randomArray(d, next, 0.1), bk: randomArray(d, next, 0.1),
      bv: randomArray(d, next, 0.1), bo: randomArray(d, next, 0.1),
    },
  };
}

function gemmData(m, n, k) {
  const next = rng(7 * m + n + k);
  return { a: randomArray(m * k, next), b: randomArray(k * n, next) };
}

// ---- contestants (each: name, kind, make(workload) → async () => Float32Array, or null if n/a)

async function loadAttnScope(simd, threads = 1, relaxedSimd = false) {
  // dist/ is rebuilt at times: retry a failed load (a .wasm caught mid-write) a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await createAttnScope({ simd, threads, relaxedSimd });
    } catch (e) {
      if (attempt >= 3) throw e;
      await sleep(2000);
    }
  }
}

function attnscopeContestant(as, name) {
  return {
    name,
    make(wl) {
      if (wl.kind === 'mha') {
        const { n, d, h, data: { x, w } } = wl;
        const args = { query: x, nq: n, dModel: d, numHeads: h, ...w, needWeights: false };
        return () => as.multiHeadAttention(args).output;
      }
      if (wl.kind === 'pipeline' && typeof as.createModel === 'function') {
        const model = as.createModel(wl.config);
        wl.cleanup.push(() => model.delete());
        return () => {
          const r = model.run(wl.text);
          wl.tokensSeen = r.tokens?.length ?? wl.tokensSeen;
          return r.output; // the last layer's output, compared with the SIMD build's
        };
      }
      return null; // no public GEMM in attnscope's API (see README)
    },
  };
}

// attnscope's prepared multi-head attention: the weights are copied into wasm once, when the module is
// created (outside the timed region, like ORT's session); each run copies only x in and the output out.
function preparedContestant(as, name) {
  return {
    name,
    make(wl) {
      if (wl.kind !== 'mha' || typeof as.createMultiHeadAttention !== 'function') return null;
      const { n, d, h, data: { x, w } } = wl;
      const mha = as.createMultiHeadAttention({ dModel: d, numHeads: h, ...w });
      wl.cleanup.push(() => mha.delete());
      const args = { query: x, nq: n, needWeights: false };
      return () => mha.forward(args).output;
    },
  };
}

const plainContestant = {
  name: 'plain JS',
  make(wl) {
    if (wl.kind === 'mha') {
      const { n, d, h, data: { x, w } } = wl;
      return () => mhaF32(x, n, d, h, w);
    }
    if (wl.kind === 'gemm') {
      const { m, data: { a, b } } = wl;
      return () => gemmF32(a, b, m, m, m);
    }
    return null;
  },
};

// onnxruntime-web keeps one wasm instance (and thread count) per module instance, read at init:
function ortContestant(ort, threads, fused) {
  return {
    name: `ORT ${fused ? 'Attention op' : 'graph'} ${threads}t`,
    // ORT's pool threads spin ~20 ms after a run (measured: the next contestant ran 2x slower); the
    // wasm build uses global thread pools, so the session option intra_op.allow_spinning has no effect.
    // Let them go idle before anyone else is timed.
    settleMs: threads > 1 ? SETTLE_MS : 0,
    async make(wl) {
      const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
      if (wl.kind === 'mha') {
        const { n, d, h, data: { x, w } } = wl;
        const session = await ort.InferenceSession.create(
          fused ? mhaContribModel(n, d, h, w) : mhaModel(n, d, h, w), opts);
        wl.cleanup.push(() => session.release());
        const dims = fused ? [1, n, d] : [n, d];
        return async () => (await session.run({ X: new ort.Tensor('float32', x, dims) })).Y.data;
      }
      if (wl.kind === 'gemm' && !fused) {
        const { m, data: { a, b } } = wl;
        const session = await ort.InferenceSession.create(gemmModel(m, m, m), opts);
        wl.cleanup.push(() => session.release());
        return async () => (await session.run({
          A: new ort.Tensor('float32', a, [m, m]), B: new ort.Tensor('float32', b, [m, m]),
        })).C.data;
      }
      return null;
    },
  };
}

async function loadTfjs() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // Local files, no network. Single-threaded SIMD build: the threaded one needs workers that the
  // Node build of the backend does not start (and would compete with ORT 2t for the 2 cores).
  wasm.setWasmPaths(`${join(pkgDir('@tensorflow/tfjs-backend-wasm'), 'dist')}/`);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  if (!(await tf.setBackend('wasm'))) throw new Error('setBackend("wasm") failed');
  await tf.ready();
  return tf;
}

function tfjsContestant(tf) {
  return {
    name: 'tfjs-wasm',
    make(wl) {
      if (wl.kind === 'mha') {
        const { n, d, h, data: { x, w } } = wl;
        const dh = d / h;
        const W = {
          wq: tf.tensor2d(w.wq, [d, d]), wk: tf.tensor2d(w.wk, [d, d]), wv: tf.tensor2d(w.wv, [d, d]),
          wo: tf.tensor2d(w.wo, [d, d]), bq: tf.tensor1d(w.bq), bk: tf.tensor1d(w.bk),
          bv: tf.tensor1d(w.bv), bo: tf.tensor1d(w.bo), scale: tf.scalar(1 / Math.sqrt(dh)),
        };
        wl.cleanup.push(() => Object.values(W).forEach((t) => t.dispose()));
        // Functional ops only: the ESM build of tfjs-core registers no chained (t.reshape) methods.
        const heads = (t) => tf.transpose(tf.reshape(t, [n, h, dh]), [1, 0, 2]); // [h, n, dh]
        return () => {
          const y = tf.tidy(() => {
            const X = tf.tensor2d(x, [n, d]);
            const lin = (a, w, b) => tf.fused.matMul({ a, b: w, bias: b }); // X·W + b in one kernel
            const q = heads(lin(X, W.wq, W.bq));
            const k = heads(lin(X, W.wk, W.bk));
            const v = heads(lin(X, W.wv, W.bv));
            const p = tf.softmax(tf.mul(tf.matMul(q, k, false, true), W.scale));
            const c = tf.reshape(tf.transpose(tf.matMul(p, v), [1, 0, 2]), [n, d]);
            return lin(c, W.wo, W.bo);
          });
          const out = y.dataSync();
          y.dispose();
          return out;
        };
      }
      if (wl.kind === 'gemm') {
        const { m, data: { a, b } } = wl;
        return () => {
          const c = tf.tidy(() => tf.matMul(tf.tensor2d(a, [m, m]), tf.tensor2d(b, [m, m])));
          const out = c.dataSync();
          c.dispose();
          return out;
        };
      }
      return null;
    },
  };
}

// ---- timing

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
};

/**
 * Measures one workload: builds every contestant's runner, checks its output (this first run also
 * starts the warm-up), warms up, then takes samples in two passes, the second in reverse order. Within
 * a pass the contestants take turns run by run (round robin), so a burst of load from other processes
 * falls on all of them, not on whoever happened to be running. `kind` carries, per kind of workload,
 * each contestant's time per FLOP from the previous shape (to predict very slow cells) and the
 * contestants found wrong (not ranked on later shapes either).
 * Returns rows { name, samples[], err, errKind, wrong, note, skipped }.
 */
async function measure(wl, contestants, kind) {
  const entries = [];
  for (const c of contestants) {
    let run = null;
    let note = '';
    try {
      run = await c.make(wl);
    } catch (e) {
      note = `failed to set up: ${e.message.split('\n')[0]}`;
    }
    if (!run && !note) continue; // not applicable to this workload
    const e = {
      name: c.name, run, note, samples: [], err: null, errKind: '', perPass: MIN_PER_PASS, settleMs: c.settleMs ?? 0,
    };
    e.wrong = kind.wrong.has(c.name);
    const predicted = (kind.msPerFlop.get(c.name) ?? 0) * wl.flop;
    if (run && predicted > VERY_SLOW_MS && !ALL) {
      e.run = null;
      e.skipped = predicted;
      e.note = `skipped: ~${(predicted / 1000).toFixed(0)} s per run predicted from the previous shape (--all runs it)`;
    }
    entries.push(e);
  }
  // Correctness: against the float64 reference when there is one; else, as a consistency check, against
  // the first contestant's output (attnscope SIMD; plain JS for GEMM).
  const anchor = wl.reference ?? null;
  let firstOut = null;
  for (const e of entries) {
    if (!e.run) continue;
    try {
      const t0 = performance.now();
      const out = await e.run();
      e.first = performance.now() - t0;
      if (anchor) {
        e.err = relError(out, anchor);
        e.errKind = 'ref';
        if (!(e.err <= TOLERANCE)) {
          e.wrong = true;
          kind.wrong.add(e.name);
        }
      } else if (firstOut) {
        e.err = relError(out, firstOut);
        e.errKind = 'consistency';
      } else {
        firstOut = out;
      }
    } catch (err) {
      e.note = `failed: ${err.message.split('\n')[0]}`;
      e.run = null;
    }
  }
  // Warm-up (the checking run counts): until WARMUP_RUNS runs or WARMUP_MS, whichever comes first.
  // Samples per pass follow from the last warm-up time: 5–15, or 3 for a contestant slower than 2 s.
  for (const e of entries) {
    if (!e.run) continue;
    let runs = 1;
    let spent = e.first;
    let last = e.first;
    while (runs < WARMUP_RUNS && spent < WARMUP_MS) {
      const t0 = performance.now();
      await e.run();
      last = performance.now() - t0;
      spent += last;
      runs++;
    }
    if (e.settleMs) await sleep(e.settleMs);
    e.perPass = last > SLOW_RUN_MS ? SLOW_PER_PASS
      : Math.min(MAX_PER_PASS, Math.max(MIN_PER_PASS, Math.ceil(PASS_BUDGET_MS / Math.max(last, 1e-3))));
  }
  const live = entries.filter((e) => e.run);
  for (const order of [live, [...live].reverse()]) {
    const rounds = Math.max(0, ...order.map((e) => e.perPass));
    for (let r = 0; r < rounds; r++) {
      for (const e of order) {
        // spread e's perPass samples evenly over the pass's rounds
        if (Math.floor(((r + 1) * e.perPass) / rounds) === Math.floor((r * e.perPass) / rounds)) continue;
        const t0 = performance.now();
        await e.run();
        e.samples.push(performance.now() - t0);
        if (e.settleMs) await sleep(e.settleMs);
      }
    }
  }
  for (const e of live) kind.msPerFlop.set(e.name, median(e.samples) / wl.flop);
  for (const f of wl.cleanup.splice(0)) {
    try { await f(); } catch { /* best effort */ }
  }
  return entries;
}

// ---- formatting

const fmt = (x, digits = 3) => {
  if (!Number.isFinite(x)) return '—';
  if (x >= 100) return x.toFixed(0);
  return x.toPrecision(digits);
};
const fmtErr = (e) => (e.err === null ? '—' : `${e.errKind === 'consistency' ? '≈' : ''}${e.err.toExponential(1)}${e.wrong ? ' **WRONG**' : ''}`);

function table(title, rows, { refName, refLabel, gflop }) {
  const lines = [`### ${title}`, ''];
  lines.push(`| workload | contestant | median ms | ${gflop ? 'GFLOP/s' : 'tokens/s'} | IQR % | samples | max rel err | ${refLabel} |`);
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const { label, flop, tokens, entries } of rows) {
    const ref = entries.find((e) => e.name === refName && e.samples.length);
    const refMed = ref ? median(ref.samples) : NaN;
    for (const e of entries) {
      if (!e.samples.length) {
        const guess = e.skipped ? `~${fmt(e.skipped)}` : '—';
        lines.push(`| ${label} | ${e.name} | ${guess} | — | — | 0 | — | ${e.note || 'n/a'} |`);
        continue;
      }
      const med = median(e.samples);
      const iqr = ((quantile(e.samples, 0.75) - quantile(e.samples, 0.25)) / med) * 100;
      const rate = gflop ? flop / (med * 1e6) : tokens / (med / 1000);
      const ratio = e.wrong ? 'not ranked (wrong)' : fmt(med / refMed);
      const n = e.samples.length < 2 * MIN_PER_PASS ? `${e.samples.length}†` : `${e.samples.length}`;
      lines.push(`| ${label} | ${e.name} | ${fmt(med)} | ${fmt(rate)} | ${fmt(iqr, 2)} | ${n} | ${fmtErr(e)} | ${ratio} |`);
    }
  }
  return lines;
}

function ratioTable(title, rows, names, refName, extra) {
  const lines = [`### ${title}`, ''];
  lines.push(`| workload | ${names.join(' | ')}${extra ? ` | ${extra.label}` : ''} |`);
  lines.push(`|---|${names.map(() => '---:').join('|')}|${extra ? '---:|' : ''}`);
  for (const { label, entries } of rows) {
    const get = (nm) => entries.find((e) => e.name === nm && e.samples.length && !e.wrong);
    const ref = get(refName);
    const cells = names.map((nm) => {
      const e = get(nm);
      return e && ref ? fmt(median(e.samples) / median(ref.samples)) : '—';
    });
    lines.push(`| ${label} | ${cells.join(' | ')}${extra ? ` | ${extra.value(get)}` : ''} |`);
  }
  return lines;
}

/**
 * Issue 16's targets for each MHA shape, from the same run: ORT's best op form (graph or Attention op) at a
 * thread count ÷ an attnscope configuration (> 1: attnscope faster). attnscope is taken prepared (weights in
 * wasm once, as ORT's initializers are); "best" is the fastest attnscope row of the shape.
 */
function targetsTable(rows) {
  const lines = ['### Issue 16 targets: ORT time ÷ attnscope time (> 1: attnscope is faster)', ''];
  lines.push('| workload | ORT 1t ÷ SIMD 1t (≥ 1.2) | ORT 1t ÷ FMA 1t (≥ 1.4) | ORT 1t ÷ best (≥ 2) | ORT 2t ÷ best (≥ 1.2) | SIMD 1t ÷ SIMD 2t (≥ 1.8, n ≥ 128) | best |');
  lines.push('|---|---:|---:|---:|---:|---:|---|');
  for (const { label, entries } of rows) {
    const ok = entries.filter((e) => e.samples.length && !e.wrong);
    const t = (nm) => { const e = ok.find((x) => x.name === nm); return e ? median(e.samples) : null; };
    const fastest = (names) => names.map(t).filter((x) => x != null).reduce((a, b) => Math.min(a, b), Infinity);
    const ort1 = fastest(['ORT graph 1t', 'ORT Attention op 1t']);
    const ort2 = fastest(['ORT graph 2t', 'ORT Attention op 2t']);
    const mine = ok.filter((e) => e.name.startsWith('attnscope') && !e.name.includes('scalar'));
    const best = mine.reduce((a, e) => (median(e.samples) < (a ? median(a.samples) : Infinity) ? e : a), null);
    const r = (a, b) => (a != null && b != null && Number.isFinite(a) && Number.isFinite(b) ? fmt(a / b) : '—');
    lines.push(`| ${label} | ${r(ort1, t('attnscope SIMD prepared'))} | ${r(ort1, t('attnscope SIMD FMA prepared'))} | ${r(ort1, best && median(best.samples))} | ${r(ort2, best && median(best.samples))} | ${r(t('attnscope SIMD prepared'), t('attnscope SIMD 2t prepared'))} | ${best ? best.name : '—'} |`);
  }
  return lines;
}

// Issue 30: one-thread MHA GFLOP/s ÷ the machine's SIMD128 probes measured in this run (bench/probes.mjs).
function probeTable(rows, probes) {
  const lines = ['### Issue 30: one-thread MHA ÷ this run\'s SIMD128 probes (targets ≥ 0.90 mul+add, ≥ 0.85 fused)', ''];
  const p = (x) => (x == null ? 'n/a' : `${x.toFixed(1)} GFLOP/s`);
  lines.push(`SIMD128 mul+add probe ${p(probes.muladd)}; relaxed_madd probe ${p(probes.relaxed)} (medians of probes taken before and after the MHA runs).`, '');
  lines.push('| workload | SIMD prepared GFLOP/s | ÷ mul+add probe | FMA prepared GFLOP/s | ÷ relaxed probe |');
  lines.push('|---|---:|---:|---:|---:|');
  for (const { label, flop, entries } of rows) {
    const g = (nm) => {
      const e = entries.find((x) => x.name === nm && x.samples.length && !x.wrong);
      return e ? flop / (median(e.samples) / 1e3) / 1e9 : null;
    };
    const simd = g('attnscope SIMD prepared'), fma = g('attnscope SIMD FMA prepared');
    const r = (a, b) => (a != null && b != null ? fmt(a / b) : '—');
    lines.push(`| ${label} | ${simd == null ? '—' : simd.toFixed(1)} | ${r(simd, probes.muladd)} | ${fma == null ? '—' : fma.toFixed(1)} | ${r(fma, probes.relaxed)} |`);
  }
  return lines;
}

// ---- main

async function main() {
  const started = new Date();
  const load0 = os.loadavg();
  const contestants = [];
  const versions = { attnscope: '?', ort: pkgVersion('onnxruntime-web'), tfjs: pkgVersion('@tensorflow/tfjs-backend-wasm') };

  let asSimd;
  let asScalar;
  let asThreads;
  try {
    // "attnscope SIMD" is one thread (the ratios' base); "attnscope SIMD 2t" the threaded build (issue 16).
    asSimd = await loadAttnScope(true, 1);
    asScalar = await loadAttnScope(false, 1);
    asThreads = await loadAttnScope(true, 2);
  } catch (e) {
    // The glue is imported once per process, so a dist/ caught mid-rebuild cannot be fixed in here:
    // exit 75 (EX_TEMPFAIL) and let scripts/bench.sh start a fresh process.
    console.error(`attention_bench: attnscope failed to load (dist/ being rebuilt?): ${e.message}`);
    process.exit(75);
  }
  versions.attnscope = asSimd.version;
  contestants.push(attnscopeContestant(asSimd, 'attnscope SIMD'), preparedContestant(asSimd, 'attnscope SIMD prepared'),
    attnscopeContestant(asScalar, 'attnscope scalar'), attnscopeContestant(asThreads, 'attnscope SIMD 2t'),
    preparedContestant(asThreads, 'attnscope SIMD 2t prepared'));
  // The fused multiply-add GEMM kernel (relaxed SIMD, one thread): Node 20 validates it only with
  // --experimental-wasm-relaxed-simd, which scripts/bench.sh passes; without it the row is left out and said so.
  try {
    const asFma = await createAttnScope({ simd: true, threads: 1, relaxedSimd: true });
    const asFma2 = await createAttnScope({ simd: true, threads: 2, relaxedSimd: true });
    contestants.push(attnscopeContestant(asFma, 'attnscope SIMD FMA'), preparedContestant(asFma, 'attnscope SIMD FMA prepared'),
      attnscopeContestant(asFma2, 'attnscope SIMD FMA 2t'), preparedContestant(asFma2, 'attnscope SIMD FMA 2t prepared'));
  } catch (e) {
    notes.push(`attnscope SIMD FMA not measured: ${e.message} (run node with --experimental-wasm-relaxed-simd)`);
  }
  contestants.push(plainContestant);
  for (const threads of [1, 2]) {
    try {
      const ort = await loadOrt(threads);
      contestants.push(ortContestant(ort, threads, false), ortContestant(ort, threads, true));
    } catch (e) {
      notes.push(`onnxruntime-web ${threads} thread(s) could not be loaded: ${e.message.split('\n')[0]}`);
    }
  }
  try {
    contestants.push(tfjsContestant(await loadTfjs()));
  } catch (e) {
    notes.push(`tfjs-backend-wasm could not be loaded: ${e.message.split('\n')[0]}`);
  }
  console.error(`contestants: ${contestants.map((c) => c.name).join(', ')}${QUICK ? ' (quick run)' : ''}`);

  const newKind = () => ({ msPerFlop: new Map(), wrong: new Set() });
  const [mhaKind, gemmKind, pipeKind] = [newKind(), newKind(), newKind()];
  const t0 = performance.now();
  const progress = (what) => console.error(`[${((performance.now() - t0) / 1000).toFixed(0)} s] ${what} …`);

  // The machine's SIMD128 ceilings, before and after the MHA runs (bench/probes.mjs).
  const probeSamples = { muladd: [], relaxed: [] };
  const takeProbes = async () => {
    for (const kind of ['muladd', 'relaxed']) {
      try {
        const v = await simdPeak(kind);
        if (v != null) probeSamples[kind].push(v);
      } catch (e) {
        notes.push(`SIMD probe ${kind} not measured: ${e.message.split('\n')[0]}`);
      }
    }
  };
  await takeProbes();

  // Multi-head self-attention.
  const mhaRows = [];
  for (const [n, d, h] of MHA_SHAPES) {
    const key = `${n}x${d}x${h}`;
    const data = mhaData(n, d);
    const flop = 8 * n * d * d + 4 * n * n * d;
    const wl = { kind: 'mha', n, d, h, data, flop, cleanup: [] };
    if (CHECKED_MHA.has(key)) wl.reference = mhaF64(data.x, n, d, h, data.w);
    progress(`mha ${key}`);
    mhaRows.push({ label: `MHA n=${n} d=${d} h=${h}`, flop, entries: await measure(wl, contestants, mhaKind) });
  }

  await takeProbes();
  const probes = {
    muladd: probeSamples.muladd.length ? median(probeSamples.muladd) : null,
    relaxed: probeSamples.relaxed.length ? median(probeSamples.relaxed) : null,
  };

  // GEMM (attnscope has no public GEMM: its GEMM kernels are measured by bench/kernels_bench.cpp).
  const gemmRows = [];
  for (const m of GEMM_SIZES) {
    const data = gemmData(m, m, m);
    const flop = 2 * m * m * m;
    const wl = { kind: 'gemm', m, data, flop, cleanup: [] };
    if (CHECKED_GEMM.has(m)) wl.reference = gemmF64(data.a, data.b, m, m, m);
    progress(`gemm ${m}`);
    gemmRows.push({ label: `GEMM ${m}³`, flop, entries: await measure(wl, contestants, gemmKind) });
  }

  // The page's pipeline: as.createModel({ dModel: 256, numHeads: 8, numLayers: 4 }).run(text).
  const pipeRows = [];
  if (typeof asSimd.createModel === 'function') {
    const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'looked', 'at', 'bird', 'in', 'tree', 'while', 'sun', 'rose'];
    for (const tokens of PIPELINE_TOKENS) {
      const next = rng(tokens);
      const text = Array.from({ length: tokens }, () => words[Math.floor(((next() + 1) / 2) * words.length)]).join(' ');
      // flop: a rough count (4 layers of attention + FFN with dFF = 4·dModel), used only to predict run time
      const flop = 4 * (24 * tokens * 256 * 256 + 4 * tokens * tokens * 256);
      const wl = {
        kind: 'pipeline', text, tokensSeen: tokens, flop, cleanup: [],
        config: { dModel: 256, numHeads: 8, numLayers: 4 },
      };
      progress(`pipeline ${tokens} tokens`);
      const entries = await measure(wl, contestants, pipeKind);
      pipeRows.push({ label: `pipeline ${wl.tokensSeen} tokens`, tokens: wl.tokensSeen, entries });
    }
  } else {
    notes.push('GAP: `as.createModel` is not in the loaded build (dist/), so the pipeline was not measured.');
  }

  // Idle check: a spinning thread pool would steal the other core from everyone measured after it.
  const cpu0 = process.cpuUsage();
  await sleep(500);
  const cpu = process.cpuUsage(cpu0);
  const idleCpuPct = ((cpu.user + cpu.system) / 1e3 / 500) * 100;

  // ---- report
  const L = [];
  L.push('## attnscope comparative benchmark (Node, one process)', '');
  L.push(`- date: ${started.toISOString()}${QUICK ? ' — **quick run** (smoke test, small shapes only)' : ''}`);
  L.push(`- CPU: ${cpuModel()}, ${os.availableParallelism?.() ?? os.cpus().length} logical cores; load average at start ${load0.map((x) => x.toFixed(2)).join(' ')}, at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  L.push(`- Node ${process.version} (V8 ${process.versions.v8}); attnscope ${versions.attnscope}; onnxruntime-web ${versions.ort}; @tensorflow/tfjs-backend-wasm ${versions.tfjs}`);
  L.push(`- medians of two interleaved passes (second reversed) after warm-up (${WARMUP_RUNS} runs or ${WARMUP_MS} ms); ratio = median time ÷ median time of the reference column in the same run (> 1: slower than the reference)`);
  L.push('');
  L.push(...table('Multi-head self-attention forward (FLOPs = 8·n·d² + 4·n²·d)', mhaRows,
    { refName: 'attnscope SIMD', refLabel: 't ÷ t(attnscope SIMD)', gflop: true }), '');
  const mhaNames = ['attnscope SIMD prepared', 'attnscope SIMD FMA', 'attnscope SIMD FMA prepared', 'attnscope SIMD FMA 2t prepared', 'attnscope SIMD 2t', 'attnscope SIMD 2t prepared', 'attnscope scalar', 'plain JS', 'ORT graph 1t', 'ORT graph 2t', 'ORT Attention op 1t', 'ORT Attention op 2t', 'tfjs-wasm'];
  L.push(...ratioTable('Ratios: each contestant\'s time ÷ attnscope SIMD\'s time (> 1: attnscope SIMD is faster)', mhaRows,
    mhaNames, 'attnscope SIMD', {
      label: 'plain JS ÷ attnscope scalar',
      value: (get) => {
        const p = get('plain JS');
        const s = get('attnscope scalar');
        return p && s ? fmt(median(p.samples) / median(s.samples)) : '—';
      },
    }), '');
  L.push(...targetsTable(mhaRows), '');
  L.push(...probeTable(mhaRows, probes), '');
  L.push(...table('GEMM C = A·B, square (FLOPs = 2·M·N·K); attnscope has no public GEMM — see kernels bench', gemmRows,
    { refName: 'plain JS', refLabel: 't ÷ t(plain JS)', gflop: true }), '');
  if (pipeRows.length) {
    L.push(...table('Pipeline: createModel({ dModel: 256, numHeads: 8, numLayers: 4 }).run(text), full trace', pipeRows,
      { refName: 'attnscope SIMD', refLabel: 't ÷ t(attnscope SIMD)', gflop: false }), '');
  }
  L.push('Notes:', '');
  L.push('- † fewer than 10 samples: one run took over 2 s, so that contestant got 3 per pass; a cell predicted (from the previous shape) to take over 6 s per run is skipped and its predicted time shown with "~" (`--all` measures it). Both keep a full run near 5 minutes.');
  L.push('- within each pass the contestants take turns run by run (round robin), so load bursts from other processes are shared.');
  L.push(`- max rel err = max|y − ref| / max|ref| against a float64 reference (independent naive float64 code) on the small shapes, tolerance ${TOLERANCE}; "≈" = the same measure against the first contestant's output (attnscope SIMD; plain JS for GEMM) where no reference was computed, a consistency check only.`);
  L.push('- attnscope copies its inputs (x and all weights) into wasm and its output out on every call (its stateless `multiHeadAttention`); "attnscope SIMD prepared" is `createMultiHeadAttention` (weights copied into wasm once, at creation, outside the timed region) then `forward({ query: x })`; ORT and tfjs hold weights as initializers/tensors; every contestant returns a fresh Float32Array.');
  L.push('- ORT "graph" = MatMul/Add/Reshape/Transpose/Mul/Softmax ONNX graph; "Attention op" = com.microsoft Attention (fused QKV projection + attention) then MatMul/Add for W_O.');
  if (idleCpuPct > 20) L.push(`- WARNING: the process used ${idleCpuPct.toFixed(0)} % CPU while idle after the runs (a spinning thread pool?).`);
  for (const n of notes) L.push(`- ${n}`);
  const md = `${L.join('\n')}\n`;
  process.stdout.write(md);
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, md);
  console.error(`[${((performance.now() - t0) / 1000).toFixed(0)} s] written to ${OUT}`);
}

main().then(
  () => process.exit(0), // ORT's pthread pool would keep Node alive (TOOLCHAIN.md §10)
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
