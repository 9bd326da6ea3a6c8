// long-page.test.js: the page's long-input helpers that run without a DOM — web/long.js (which texts may be over
// 512 tokens, the heads whose maps a long run asks for) — against hand-worked cases, and a long run of the bundled
// english-rope model through web/long.js: n > the limit gives summaries for every layer, the listed maps only, and
// the maps equal the materialised run's rows (trace 'weights').
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import { mayBeLong, looksShort, longHeads, longRun, LONG_HEADS } from '../../web/long.js';
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
    assert.deepEqual(tr.long, { layer: 1, heads: [3], topK: 5 });
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
