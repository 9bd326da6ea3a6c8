// blockmax.test.js: web/render/blockmax.js (the page's big heatmaps' block maxima) against a straightforward
// reference: for every block, the cells it covers are found by testing each cell of the map on its own (which block
// of each axis holds it: the a with ⌊a·span/out⌋ ≤ offset < ⌊(a+1)·span/out⌋), and the maximum taken over them. Also:
// every cell is in exactly one block, a window of out = span gives the cells back, masked cells lose to any finite
// one, and bad windows are refused with the function named.
import test from 'node:test';
import assert from 'node:assert/strict';
import { blockMax, clampWindow } from '../../web/render/blockmax.js';
import { mulberry32 } from '../../web/rng.js';

/** Which of `out` blocks over `span` cells holds offset `k` (a linear search, independent of blockStart). */
function blockOf(k, span, out) {
  for (let a = 0; a < out; a++) if (Math.floor((a * span) / out) <= k && k < Math.floor(((a + 1) * span) / out)) return a;
  throw new Error(`offset ${k} is in no block`);
}

function reference(values, rows, cols, { r0, r1, c0, c1 }, outR, outC) {
  const out = new Array(outR * outC).fill(-Infinity);
  const count = new Array(outR * outC).fill(0);
  for (let i = r0; i < r1; i++) {
    for (let j = c0; j < c1; j++) {
      const q = blockOf(i - r0, r1 - r0, outR) * outC + blockOf(j - c0, c1 - c0, outC);
      count[q] += 1;
      const v = values[i * cols + j];
      if (Number.isFinite(v)) out[q] = Math.max(out[q], v);
    }
  }
  return { out, count };
}

test('blockMax equals the max over each block\'s cells (random maps, windows and block counts)', () => {
  const rand = mulberry32(11);
  let cases = 0;
  for (let trial = 0; trial < 60; trial++) {
    const rows = 1 + Math.floor(rand() * 70);
    const cols = 1 + Math.floor(rand() * 70);
    const values = Float32Array.from({ length: rows * cols }, () => (rand() < 0.1 ? -Infinity : rand() * 2 - 0.5));
    const r0 = Math.floor(rand() * rows);
    const r1 = r0 + 1 + Math.floor(rand() * (rows - r0));
    const c0 = Math.floor(rand() * cols);
    const c1 = c0 + 1 + Math.floor(rand() * (cols - c0));
    const outR = 1 + Math.floor(rand() * (r1 - r0));
    const outC = 1 + Math.floor(rand() * (c1 - c0));
    const win = { r0, r1, c0, c1 };
    const got = blockMax(values, rows, cols, win, outR, outC);
    const ref = reference(values, rows, cols, win, outR, outC);
    assert.equal(got.length, outR * outC);
    for (let q = 0; q < got.length; q++) {
      assert.ok(ref.count[q] >= 1, 'every block holds a cell');
      assert.equal(got[q], Math.fround(ref.out[q]), `trial ${trial} block ${q}`);
    }
    assert.equal(ref.count.reduce((a, b) => a + b, 0), (r1 - r0) * (c1 - c0), 'each cell is in one block');
    cases += 1;
  }
  assert.equal(cases, 60);
});

test('blockMax of a 2,048 × 2,048 map into 512 × 512 blocks: a lone peak and a thin diagonal survive', () => {
  const n = 2048;
  const values = new Float32Array(n * n);
  for (let i = 0; i < n; i++) values[i * n + i] = 0.25; // a diagonal one cell wide
  values[1000 * n + 7] = 0.9; // one strong link
  const got = blockMax(values, n, n, {}, 512, 512);
  for (let a = 0; a < 512; a++) assert.equal(got[a * 512 + a], 0.25); // each diagonal block holds a piece of it
  assert.equal(got[250 * 512 + 1], Math.fround(0.9)); // row 1000 → block 250, col 7 → block 1
  assert.equal(got[3 * 512 + 100], 0);
});

test('a window as many blocks as cells gives the cells back; all-masked blocks stay −∞', () => {
  const values = Float32Array.from([1, -Infinity, 3, 4, 5, 6]);
  assert.deepEqual(Array.from(blockMax(values, 2, 3, { r0: 0, r1: 2, c0: 1, c1: 3 }, 2, 2)), [-Infinity, 3, 5, 6]);
  assert.deepEqual(Array.from(blockMax(Float32Array.from([-Infinity, -Infinity]), 1, 2, {}, 1, 1)), [-Infinity]);
  assert.deepEqual(Array.from(blockMax(values, 2, 3, {}, 1, 1)), [6]);
});

test('bad windows and block counts are refused naming blockMax', () => {
  const v = new Float32Array(12);
  assert.throws(() => blockMax(v, 3, 3), /blockMax: values has 12 numbers for 3×3/);
  assert.throws(() => blockMax(v, 3, 4, { r0: 2, r1: 2 }), /blockMax: window rows \[2, 2\)/);
  assert.throws(() => blockMax(v, 3, 4, {}, 4, 1), /blockMax: 4×1 blocks for a 3×4 window/);
});

test('clampWindow keeps the window inside the map', () => {
  assert.deepEqual(clampWindow(100, 10, 50), [45, 55]);
  assert.deepEqual(clampWindow(100, 10, 2), [0, 10]);
  assert.deepEqual(clampWindow(100, 10, 99), [90, 100]);
  assert.deepEqual(clampWindow(100, 500, 10), [0, 100]);
  assert.deepEqual(clampWindow(100, 0.2, 10), [10, 11]);
});
