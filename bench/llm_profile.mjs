// llm_profile.mjs: where attnscope's time goes on bench/llm_engines.mjs's checkpoint — V8's sampling CPU profiler
// (node:inspector, Profiler domain) around a prefill (run, trace 'none') and a decode (generate), self time summed per
// function (wasm functions are named from the module's name section). Layer: bench; one thread; reports, asserts
// nothing. Run after llm_engines.mjs has made the checkpoint:
//   node bench/llm_profile.mjs [--shape smollm2] [--weights8] [--tokens 128] [--new 32] [--top 12]
import { openAsBlob, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAttnScope } from 'attnscope';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (name, fallback) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : fallback; };
const DIR = join(ROOT, 'build', 'bench', `llm-${arg('shape', 'smollm2')}`);
const weights8 = argv.includes('--weights8');
const n = Number(arg('tokens', '128')), newTokens = Number(arg('new', '32')), top = Number(arg('top', '12'));
const prompt = (k) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(k / 45) + 1).slice(0, k);

const as = await createAttnScope({ simd: true, threads: 1 });
const [config, tokenizer] = ['config.json', 'tokenizer.json'].map((f) => readFileSync(join(DIR, f), 'utf8'));
const model = await as.loadPretrained({ config, tokenizer, weights: await openAsBlob(join(DIR, 'model.safetensors')), weights8 });
model.run(prompt(8), { trace: 'none', topK: 1 });  // warm-up (tier-up)

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 500 });

async function profile(what, fn) {
  await session.post('Profiler.start');
  const t0 = performance.now();
  fn();
  const ms = performance.now() - t0;
  const { profile: p } = await session.post('Profiler.stop');
  const self = new Map();
  let total = 0;
  for (const node of p.nodes) {
    const name = node.callFrame.functionName || `(${node.callFrame.url.split('/').pop() || 'anonymous'})`;
    self.set(name, (self.get(name) ?? 0) + (node.hitCount ?? 0));
    total += node.hitCount ?? 0;
  }
  console.log(`\n### ${what}: ${ms.toFixed(0)} ms wall, ${total} samples; self time by function`);
  console.log('| function | share |\n|---|---:|');
  for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| \`${name.length > 70 ? `${name.slice(0, 67)}...` : name}\` | ${((100 * hits) / total).toFixed(1)} % |`);
  }
}

console.log(`## attnscope ${weights8 ? 'weights8' : 'BF16'}, ${DIR.split('/').pop()}, one thread (Node ${process.version})`);
await profile(`prefill ${n} tokens (run, trace 'none')`, () => model.run(prompt(n), { trace: 'none', topK: 1 }));
await profile(`decode: generate ${newTokens} new tokens after ${n}`, () => model.generate(prompt(n), { maxNewTokens: newTokens }));
model.delete();
