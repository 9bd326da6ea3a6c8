// long-page.test.js: the page's long-input helpers that run without a DOM — web/long.js (which texts may be over
// 512 tokens, the heads whose maps a long run asks for) — against hand-worked cases, and a long run of the bundled
// english-rope model through web/long.js: n > the limit gives summaries for every layer, the listed maps only, and
// the maps equal the materialised run's rows (trace 'weights').
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import {
  mayBeLong, looksShort, longHeads, longRun, usualBytes, usualMax, LONG_HEADS, MAX_TOKENS, USUAL_BUDGET,
} from '../../web/long.js';
import { DEFAULTS } from '../../web/state.js';

test('mayBeLong: a token covers at least one UTF-8 byte, plus room for special tokens', () => {
  assert.equal(mayBeLong('a'.repeat(504), 512), false);
  assert.equal(mayBeLong('a'.repeat(505), 512), true);
  assert.equal(mayBeLong('中'.repeat(168), 512), false); // 504 bytes
  assert.equal(mayBeLong('中'.repeat(169), 512), true); // 507 bytes
});

test('looksShort: by the last text\'s bytes per token, with a third of margin; unknown ratio: never', () => {
  assert.equal(looksShort(1500, 4, 512), true); // ~375 tokens < 384
  assert.equal(looksShort(1540, 4, 512), false); // ~385
  assert.equal(looksShort(100, 0, 512), false);
});

test('usualMax: 512 tokens up to GPT-2 small / BERT base\'s maps at 512, fewer for a model whose maps are bigger', async () => {
  // hand-worked: (L + 2) · H · n² · 4 bytes against (12 + 2) · 12 · 512² · 4 = 176,160,768
  assert.equal(MAX_TOKENS, 512);
  assert.equal(USUAL_BUDGET, 176160768);
  assert.equal(usualBytes({ numLayers: 12, numHeads: 12 }, 512), USUAL_BUDGET);
  assert.equal(usualMax({ numLayers: 12, numHeads: 12 }), 512); // GPT-2 small, BERT base: unchanged
  assert.equal(usualMax({ numLayers: 6, numHeads: 12 }), 512); // distilgpt2
  // Llama-3.2-1B, 16 × 32: 2,304 bytes per n²; 276² · 2,304 = 175,509,504 fits, 277² · 2,304 = 176,783,616 does not
  assert.equal(usualMax({ numLayers: 16, numHeads: 32 }), 276);
  assert.equal(usualMax({ numLayers: 4, numHeads: 32 }), 478); // its 4-layer cut (bench/page_memory.mjs): 478² · 768 ≤ budget < 479² · 768
  assert.equal(usualMax({ numLayers: 24, numHeads: 16 }), 325); // GPT-2 medium / BERT large: 1,664 per n²
  assert.equal(usualMax({ numLayers: 2 }), 512); // no heads (a GRU): nothing to hold
  assert.equal(usualMax({}), 512);
  // every bundled model with attention heads keeps the usual path up to 512 tokens
  const as = await loadAs();
  for (const { name, architecture } of as.bundledModels) {
    if (!['decoder', 'encoder'].includes(architecture)) continue; // encoder–decoders never take the long path
    const model = await as.loadBundled(name);
    assert.equal(usualMax(model.config), 512, name);
    model.delete();
  }
});

test('longHeads: the shown layer (clamped) and its first selected heads, at most LONG_HEADS', () => {
  assert.equal(LONG_HEADS, 2);
  assert.deepEqual(longHeads({ ...DEFAULTS, layer: 9, heads: 'all' }, 4, 8), [{ layer: 3, head: 0 }, { layer: 3, head: 1 }]);
  assert.deepEqual(longHeads({ ...DEFAULTS, layer: 1, heads: '5' }, 4, 8), [{ layer: 1, head: 5 }]);
  assert.deepEqual(longHeads({ ...DEFAULTS, layer: 0, heads: '6,2,7' }, 4, 8), [{ layer: 0, head: 2 }, { layer: 0, head: 6 }]);
});

test('longRun through english-rope: summaries of every layer, the listed maps only, equal to the materialised weights', async () => {
  const as = await loadAs();
  const model = await as.loadBundled('english-rope');
  try {
    const max = model.config.maxPositions;
    const text = 'the cat sat on the mat because it was tired. '.repeat(20).slice(0, max - 1);
    const s = { ...DEFAULTS, text, layer: 1, heads: '3' };
    assert.equal(longRun(model, { ...s, text: 'short' }, 100), null, 'at most `max` tokens: the usual run');
    const limit = Math.floor(max / 2); // a small limit stands for 512: this model's context is short
    const tr = longRun(model, s, limit);
    assert.ok(tr.n > limit);
    assert.deepEqual(tr.long, { layer: 1, heads: [3], topK: 5, limit });
    assert.equal(tr.layers.length, model.config.numLayers);
    assert.ok(tr.layers.every((ly) => !ly.attention?.weights && ly.attention.summary.entropy.length === model.config.numHeads));
    assert.deepEqual(tr.heads.map((x) => [x.layer, x.head]), [[1, 3]]);
    const full = model.run(text, { trace: 'weights' });
    const n = full.n;
    const w = full.layers[1].attention.weights.subarray(3 * n * n, 4 * n * n);
    let err = 0;
    for (let i = 0; i < n * n; i++) err = Math.max(err, Math.abs(tr.heads[0].weights[i] - w[i]));
    assert.ok(err < 1e-5, `listed map within 1e-5 of the materialised one (max ${err})`);
  } finally {
    model.delete();
  }
});
