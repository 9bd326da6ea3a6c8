// probe_ratio.mjs: issue 30's ceiling check in one short run — one-thread multi-head self-attention GFLOP/s (the
// prepared module, createMultiHeadAttention().forward, at the four shapes of bench/attention_bench.mjs) divided by
// this machine's SIMD128 mul+add probe, and the fused (relaxed-SIMD) kernel's by the relaxed_madd probe
// (bench/probes.mjs), in paired rounds (pairedRounds below). Layer: bench (never asserts time). Timings are process CPU
// time (process.cpuUsage; one thread), so a loaded shared machine still gives comparable ratios; wall-clock medians
// are printed beside them. Run: `node --experimental-wasm-relaxed-simd bench/probe_ratio.mjs` (attention_bench.mjs
// reports the same ratios from its own wall-clock medians). `--old=DIR` adds another built checkout to the same rounds
// (before/after speed-ups); `--rounds=N` (default 15).
import os from 'node:os';
import { createAttnScope } from 'attnscope';
import { simdPeak } from './probes.mjs';

const SHAPES = [[64, 256, 4], [128, 512, 8], [512, 768, 12], [1024, 768, 12]];
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function rand(n, seed, scale = 1) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    a[i] = ((s >>> 8) / 16777216 - 0.5) * 2 * scale;
  }
  return a;
}

// One MHA of shape (n, d, h) ready to time: run() returns the CPU and wall milliseconds of one forward (the mean of
// enough forwards for ~10 ms).
function makeMha(as, n, d, h) {
  const s = 1 / Math.sqrt(d);
  const w = { wq: rand(d * d, 1, s), wk: rand(d * d, 2, s), wv: rand(d * d, 3, s), wo: rand(d * d, 4, s),
    bq: rand(d, 5, 0.1), bk: rand(d, 6, 0.1), bv: rand(d, 7, 0.1), bo: rand(d, 8, 0.1) };
  const mha = as.createMultiHeadAttention({ dModel: d, numHeads: h, ...w });
  const args = { query: rand(n * d, 9), nq: n, needWeights: false };
  for (let i = 0; i < 3; i++) mha.forward(args);
  const reps = Math.max(1, Math.round(3e8 / (8 * n * d * d + 4 * n * n * d)));  // >= ~10 ms per timing
  return {
    run() {
      const t0 = performance.now(), c0 = cpuMs();
      for (let i = 0; i < reps; i++) mha.forward(args);
      return { cpu: (cpuMs() - c0) / reps, wall: (performance.now() - t0) / reps };
    },
    delete: () => mha.delete(),
  };
}

// Paired rounds (the machine is shared: its speed drifts by tens of percent within seconds, so a ratio is only taken
// between measurements made side by side): each round takes the probe, then one forward of each contestant, then the
// probe again, and divides each forward's GFLOP/s (CPU time) by the mean of the two probes around it. The table gives
// the median of those per-round ratios (and its interquartile range), not a ratio of medians.
async function pairedRounds(n, d, h, contestants, rounds) {
  const flop = 8 * n * d * d + 4 * n * n * d;
  const mhas = contestants.map((c) => (c.as ? makeMha(c.as, n, d, h) : null));
  const ratios = contestants.map(() => []), rates = contestants.map(() => []), walls = contestants.map(() => []);
  const probes = { muladd: [], relaxed: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      const before = {}, after = {};
      for (const c of contestants) if (c.as && !(c.probe in before)) before[c.probe] = await simdPeak(c.probe, 3, cpuMs);
      const times = mhas.map((m) => (m ? m.run() : null));
      for (const c of contestants) if (c.as && !(c.probe in after)) after[c.probe] = await simdPeak(c.probe, 3, cpuMs);
      contestants.forEach((c, i) => {
        if (!times[i]) return;
        const rate = flop / (times[i].cpu / 1e3) / 1e9, probe = (before[c.probe] + after[c.probe]) / 2;
        rates[i].push(rate);
        walls[i].push(times[i].wall);
        ratios[i].push(rate / probe);
        probes[c.probe].push(probe);
      });
    }
  } finally {
    for (const m of mhas) m?.delete();
  }
  return { ratios, rates, walls, probes };
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

const simd = await createAttnScope({ simd: true, threads: 1, relaxedSimd: false });
let fma = null;
try {
  fma = await createAttnScope({ simd: true, threads: 1, relaxedSimd: true });
} catch (e) {
  console.error(`fused kernel not measured: ${e.message} (run node with --experimental-wasm-relaxed-simd)`);
}
const rounds = Number(process.argv.find((x) => x.startsWith('--rounds='))?.slice(9) ?? 15);
const lines = [`## One-thread MHA ÷ SIMD128 probes (${new Date().toISOString()}, ${os.cpus()[0].model}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}, ${rounds} paired rounds per shape)`, '',
  'Ratio columns: the median over rounds of (MHA GFLOP/s ÷ the mean of the probes taken just before and after it), with the interquartile range; GFLOP/s per CPU second.', '',
  '| (n, d, h) | mul+add probe GFLOP/s | SIMD MHA GFLOP/s | ratio (≥ 0.90) | relaxed probe | FMA MHA GFLOP/s | ratio (≥ 0.85) | SIMD wall ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|'];
const contestants = [{ as: simd, probe: 'muladd' }, { as: fma, probe: 'relaxed' }];
// --old=DIR: another checkout (built: DIR/dist) run in the same rounds, for a before/after speed-up per round
const oldDir = process.argv.find((x) => x.startsWith('--old='))?.slice(6);
if (oldDir) {
  const { pathToFileURL } = await import('node:url');
  const { createAttnScope: createOld } = await import(pathToFileURL(`${oldDir}/bindings/js/index.js`).href);
  contestants.push({ as: await createOld({ simd: true, threads: 1, relaxedSimd: false }), probe: 'muladd' });
  contestants.push({ as: fma ? await createOld({ simd: true, threads: 1, relaxedSimd: true }) : null, probe: 'relaxed' });
  lines[lines.length - 2] += ' this ÷ old, SIMD | this ÷ old, FMA |';
  lines[lines.length - 1] += '---:|---:|';
}
for (const [n, d, h] of SHAPES) {
  const r = await pairedRounds(n, d, h, contestants, n >= 512 ? Math.max(5, Math.round(rounds / 2)) : rounds);
  const f = (x) => (x == null || Number.isNaN(x) ? '—' : x.toFixed(1));
  const ratio = (xs) => (xs.length ? `${median(xs).toFixed(2)} (${quantile(xs, 0.25).toFixed(2)}–${quantile(xs, 0.75).toFixed(2)})` : '—');
  const med = (xs) => (xs.length ? median(xs) : null);
  // per-round speed-up of this build over --old (both timed in the same round)
  const speedup = (i, j) => (r.rates[j]?.length ? r.rates[i].map((x, k) => x / r.rates[j][k]) : []);
  const extra = oldDir ? ` ${ratio(speedup(0, 2))} | ${ratio(speedup(1, 3))} |` : '';
  lines.push(`| ${n}, ${d}, ${h} | ${f(med(r.probes.muladd))} | ${f(med(r.rates[0]))} | ${ratio(r.ratios[0])} | ${f(med(r.probes.relaxed))} | ${f(med(r.rates[1]))} | ${ratio(r.ratios[1])} | ${f(med(r.walls[0]))} |${extra}`);
  console.error(lines.at(-1));
}
console.log(lines.join('\n'));
process.exit(0);
