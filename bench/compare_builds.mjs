// Compares model.run between two checkouts of attnscope (each built: dist/ present), interleaved in one process,
// medians of repeated runs, SIMD build. Usage:
//   node bench/compare_builds.mjs <old checkout> [<new checkout> = this one] [tokens = 128]
// Prints, per trace level, each build's median and old ÷ new (> 1: the new build is faster). Used for issue 10's
// "model.run time before and after" (README, Performance).
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [oldDir, newDir = here, tokensArg = '128'] = process.argv.slice(2);
if (!oldDir) {
  console.error('usage: node bench/compare_builds.mjs <old checkout> [<new checkout>] [tokens]');
  process.exit(2);
}
const tokens = Number(tokensArg);
const load = async (dir) => (await import(pathToFileURL(path.join(path.resolve(dir), 'bindings/js/index.js')).href)).createAttnScope({ simd: true });
const builds = [['old', await load(oldDir)], ['new', await load(newDir)]];
const words = 'the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing matches'.split(' ');
const text = Array.from({ length: tokens }, (_, i) => words[i % words.length]).join(' ');
const config = { dModel: 256, numHeads: 8, numLayers: 4, tokenizer: 'word', seed: 1 };
const models = builds.map(([name, as]) => [name, as.createModel(config)]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`model.run, ${tokens} tokens x 4 layers x 8 heads x dModel 256, SIMD; medians of 25 interleaved runs`);
for (const trace of ['weights', 'full']) {
  const times = { old: [], new: [] };
  for (const [, m] of models) m.run(text, { trace });  // warm-up
  for (let i = 0; i < 25; i++) {
    for (const [name, m] of models) {
      const t0 = performance.now();
      m.run(text, { trace });
      times[name].push(performance.now() - t0);
    }
  }
  const o = median(times.old), n = median(times.new);
  console.log(`trace '${trace}': old ${o.toFixed(2)} ms, new ${n.toFixed(2)} ms, old / new ${(o / n).toFixed(2)}`);
}
for (const [, m] of models) m.delete();
