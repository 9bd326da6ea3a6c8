// generate_bench.mjs: greedy generation speed of the bundled models, tokens per second, with the key/value cache
// (model.generate) and without it (a loop of model.run over the growing prefix, taking next.ids[0] each time).
// Layer: bench (public `attnscope` entry only; never asserts time). Run: `node bench/generate_bench.mjs
// [--simd true|false] [--tokens N]`. Method: one warm-up, then 15 timed runs per way, medians; the ratio is
// median ÷ median of this one run (the machine is shared, so absolute numbers from different runs do not compare).
//
// Without the cache, `dates` (encoder-decoder) reruns source and target every step. Its run() reads the target
// without a leading '<s>' (the core does not prepend it yet), so the uncached loop replays the cached run's own
// tokens as the target prefix: prefix k has k rows, exactly the rows a '<s>' + (k-1 tokens) prefix would have, so
// the work measured is that of a real uncached decoder. The decoder-only `english` loop decodes for real, and its
// tokens are checked to equal generate()'s.
import { createAttnScope } from 'attnscope';

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const simd = { true: true, false: false }[arg('simd', 'auto')] ?? 'auto';
const maxNewTokens = Number(arg('tokens', '64'));
const REPEATS = 15;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function time(fn) {
  fn();  // warm-up
  const ms = [];
  let out;
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    out = fn();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), out };
}

// decoder-only: the prompt grows by the argmax of each run's next-token head
function uncachedDecoder(model, prompt, n) {
  let text = prompt;
  const tokens = [];
  for (let i = 0; i < n; i++) {
    const r = model.run(text, { trace: 'none', topK: 1 });
    if (r.next.tokens[0] === '</s>') break;
    tokens.push(r.next.tokens[0]);
    text += r.next.tokens[0];
  }
  return tokens;
}

// encoder-decoder: source and target prefix rerun for every new token (see the header for the target rows)
function uncachedEncoderDecoder(model, source, tokens) {
  const out = [];
  const rows = [...tokens, tokens[0] ?? '0'];  // one filler token: the last step has tokens + 1 rows
  for (let k = 1; k <= tokens.length + 1; k++) {
    const target = rows.slice(0, k).join('');
    const r = model.run({ source, target }, { trace: 'none', topK: 1 });
    out.push(r.next.ids[0]);
  }
  return out;
}

const as = await createAttnScope({ simd });
console.log(`generate_bench: attnscope ${as.version}, ${as.simd ? 'SIMD128' : 'scalar'} build, medians of ${REPEATS}`);
const rows = [];

{
  const model = await as.loadBundled('english');
  const prompt = 'a small domesticated carnivorous mammal with soft fur';
  const cached = time(() => model.generate(prompt, { maxNewTokens }));
  const n = cached.out.tokens.length;
  const uncached = time(() => uncachedDecoder(model, prompt, n));
  if (uncached.out.join('') !== cached.out.tokens.join('')) {
    throw new Error(`english: the uncached loop decoded ${JSON.stringify(uncached.out.join(''))}, generate ${JSON.stringify(cached.out.text)}`);
  }
  rows.push({ model: 'english', prompt: `${prompt.length} chars`, tokens: n, cached: cached.ms, uncached: uncached.ms });
  model.delete();
}
{
  const model = await as.loadBundled('dates');
  const source = 'Sunday, 22 November 2026';
  const cached = time(() => model.generate(source, { maxNewTokens }));
  const { tokens } = cached.out;
  const uncached = time(() => uncachedEncoderDecoder(model, source, tokens));
  // every step ran (the last one predicts </s>): tokens + 1 steps both ways
  rows.push({ model: 'dates', prompt: `${source.length} chars`, tokens: tokens.length + 1, cached: cached.ms, uncached: uncached.ms });
  model.delete();
}

for (const r of rows) {
  const perSec = (ms) => (r.tokens / (ms / 1000)).toFixed(0);
  console.log(`${r.model.padEnd(8)} prompt ${r.prompt.padEnd(9)} ${String(r.tokens).padStart(3)} tokens: `
    + `cache ${r.cached.toFixed(2)} ms (${perSec(r.cached)} tok/s), `
    + `no cache ${r.uncached.toFixed(2)} ms (${perSec(r.uncached)} tok/s), ×${(r.uncached / r.cached).toFixed(2)}`);
}
