// inside_bench.mjs: the "looking inside" sweeps of issue 27 at GPT-2-small shape (12 layers, 12 heads, dModel 768,
// dFF 3072, pre-norm, random weights): a 144-head ablation sweep at 64 tokens (each head one forward from its layer
// on, from the cached run), activation patching per head and per residual position at 64 tokens, a full forward for
// comparison, and attention flow at 128 tokens. Layer: bench (public `attnscope` entry only; reports, never
// asserts time). Run: `node bench/inside_bench.mjs [--simd true|false] [--quick]` after a build (dist/): a few
// minutes; --quick keeps the three figures issue 27 asks for (the 144-head sweep, patching per head, flow at 128).
// The model is createModel's (character tokenizer), so its next-token head spans the text's own characters, not
// GPT-2's 50,257 rows: the figures time the partial forwards, which are the same as GPT-2 small's.
import { createAttnScope } from 'attnscope';

const argv = process.argv.slice(2);
const simdArg = argv.includes('--simd') ? argv[argv.indexOf('--simd') + 1] : 'auto';
const simd = simdArg === 'true' ? true : simdArg === 'false' ? false : 'auto';
const quick = argv.includes('--quick');
const as = await createAttnScope({ simd, threads: 1 });

const model = as.createModel({
  architecture: 'decoder', tokenizer: 'char', dModel: 768, numHeads: 12, numLayers: 12, dFF: 3072, normFirst: true,
  activation: 'gelu', positional: 'learned', maxPositions: 256, seed: 3,
});
// the character tokenizer skips whitespace: 64 letters, 64 tokens
const text64 = 'thequickbrownfoxjumpsoverthelazydogwhileacatsatonthematbythedoor';
const tokens = model.run(text64, { trace: 'none' }).n;
const clean = 'when mary and john went to the store john gave a drink to';
const corrupted = 'when mary and john went to the store mary gave a drink to';

function time(fn, reps = 3) {
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
async function once(fn) {
  const t0 = performance.now();
  const out = await fn();
  return { ms: performance.now() - t0, out };
}

console.log(`attnscope ${as.version}, ${as.simd ? 'SIMD128' : 'scalar'} build, single-threaded, Node ${process.version}`);
console.log(`GPT-2-small-shaped random decoder (12 x 12 heads, dModel 768, dFF 3072), ${tokens} tokens\n`);
console.log('| what | sites | ms | ms per site |\n|---|---|---|---|');
const fwd = time(() => model.run(text64, { trace: 'none' }), quick ? 1 : 3);
console.log(`| one full forward (run, trace 'none') | 1 | ${fwd.toFixed(0)} | ${fwd.toFixed(0)} |`);
const fwdFull = quick ? NaN : time(() => model.run(text64));
if (!quick) console.log(`| one full forward, every intermediate kept (what a sweep caches) | 1 | ${fwdFull.toFixed(0)} | ${fwdFull.toFixed(0)} |`);
const sweep = await once(() => as.ablationSweep(model, text64));
console.log(`| ablationSweep, loss, 144 heads | ${sweep.out.values.length} | ${sweep.ms.toFixed(0)} | ${(sweep.ms / 144).toFixed(1)} |`);
const sweepLogit = quick ? null : await once(() => as.ablationSweep(model, text64, { metric: 'logit', tokens: ['a'] }));
if (sweepLogit) console.log(`| ablationSweep, logit, 144 heads | 144 | ${sweepLogit.ms.toFixed(0)} | ${(sweepLogit.ms / 144).toFixed(1)} |`);
const ph = await once(() => as.patch(model, { clean, corrupted, tokens: ['m', 'j'] }));
console.log(`| patch, per head (clean + corrupted traced once) | ${ph.out.values.length} | ${ph.ms.toFixed(0)} | ${(ph.ms / ph.out.values.length).toFixed(1)} |`);
const pr = quick ? null : await once(() => as.patch(model, { clean, corrupted, tokens: ['m', 'j'], granularity: 'residual' }));
if (pr) console.log(`| patch, per residual position | ${pr.out.values.length} | ${pr.ms.toFixed(0)} | ${(pr.ms / pr.out.values.length).toFixed(1)} |`);
console.log(`\nTwo full runs per site (the naive way) would be about ${(2 * fwd).toFixed(0)} ms per site; a sweep site re-runs on average`
  + ' half of the 12 layers.');

// attention flow at 128 tokens, on this model's own attention
const text128 = text64 + text64;
const r = model.run(text128, { trace: 'weights' });
const flowOne = time(() => as.attentionFlow({ layers: r.layers.map((l) => l.attention.weights), numHeads: 12, n: r.n, output: r.n - 1 }));
console.log(`\n| attentionFlow, one output position (${r.n} max-flows), 12 layers x 12 heads x ${r.n} tokens | ${flowOne.toFixed(1)} ms |`);
const flowAll = quick ? NaN : time(() => as.attentionFlow({ layers: r.layers.map((l) => l.attention.weights), numHeads: 12, n: r.n }), 1);
if (!quick) console.log(`| attentionFlow, every output position (${r.n * r.n} max-flows) | ${flowAll.toFixed(0)} ms |`);
// the page's way (web/flow-work.js): the head means go in (numHeads 1, the same graph), and above 64 tokens one call
// per output position, so the page shows progress and can cancel between rows
const means = r.layers.map((l) => {
  const w = l.attention.weights;
  const n = r.n;
  const m = new Float32Array(n * n);
  for (let h = 0; h < 12; h++) for (let c = 0; c < n * n; c++) m[c] += w[h * n * n + c] / 12;
  return m;
});
const flowPage = quick ? NaN : time(() => { for (let o = 0; o < r.n; o++) as.attentionFlow({ layers: means, numHeads: 1, n: r.n, output: o }); }, 1);
if (!quick) console.log(`| attentionFlow as the page computes it (head means, ${r.n} calls of one output each) | ${flowPage.toFixed(0)} ms |`);
model.delete();
