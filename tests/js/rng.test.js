// web/rng.js: the one mulberry32 (seeded data of the page, the guided path and the attention-family worker).
// The expected draws are those of the copies it replaced (web/learn/numbers.js `uniform`, web/family-worker.js
// `uniforms`), which agreed with it on 1,000 draws for seeds 0, 1, 42, 2³¹−1, 2³²−1, −5 and 123456789.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../web/rng.js';
import { gaussians } from '../../web/learn/numbers.js';

const draws = (seed, k) => {
  const r = mulberry32(seed);
  return Array.from({ length: k }, () => r());
};

test('mulberry32: the first draws of seeds 0, 1 and 42', () => {
  assert.deepEqual(draws(0, 3), [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197]);
  assert.deepEqual(draws(1, 3), [0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
  assert.deepEqual(draws(42, 3), [0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
});

test('mulberry32: the seed is taken as a uint32 (−1 and 2³²−1 give one sequence)', () => {
  assert.deepEqual(draws(-1, 5), draws(2 ** 32 - 1, 5));
  assert.deepEqual(draws(2 ** 32 + 7, 5), draws(7, 5));
});

test('mulberry32: every draw is in [0, 1), and two generators of one seed do not share state', () => {
  const a = mulberry32(9);
  const b = mulberry32(9);
  for (let i = 0; i < 10_000; i++) {
    const x = a();
    assert.ok(x >= 0 && x < 1, `draw ${i}: ${x}`);
    assert.equal(b(), x);
  }
});

test('gaussians: Box–Muller over mulberry32, pairs from two draws', () => {
  // u1, u2 = the first two draws of seed 42: r = sqrt(−2 ln(1 − u1)), angle 2π·u2; out = r·cos, r·sin
  const [u1, u2] = draws(42, 2);
  const r = Math.sqrt(-2 * Math.log(1 - u1));
  const g = gaussians(3, 42);
  assert.equal(g[0], Math.fround(r * Math.cos(2 * Math.PI * u2)));
  assert.equal(g[1], Math.fround(r * Math.sin(2 * Math.PI * u2)));
});
