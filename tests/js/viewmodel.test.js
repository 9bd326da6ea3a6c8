// web/viewmodel.js (pure, no DOM): what the page's panels draw, on small traces worked by hand. The trace shape is
// bindings/js's (layers[l].attention.weights [H, n, n] row-major, `full` on layers run in full).
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  shownLayer, traceHas, mergeCompletion, wordTrace, shownToken, firstPiece, aggregateMap, filteredTrace, modelSections, toPlain,
} from '../../web/viewmodel.js';

const f32 = (a) => Float32Array.from(a);
// two heads over two tokens: head 0 = [[1, 0], [.5, .5]], head 1 = [[0, 1], [.5, .5]]
const TWO = [1, 0, 0.5, 0.5, 0, 1, 0.5, 0.5];
const trace2 = (layers = 2) => ({
  n: 2, numHeads: 2, tokens: ['a', 'b'], complete: false,
  layers: Array.from({ length: layers }, (_, l) => ({ attention: { weights: f32(TWO) }, ...(l === 0 ? { full: {} } : {}) })),
});

test('shownLayer: the layer asked for, clamped to the trace', () => {
  assert.equal(shownLayer(trace2(), 1), 1);
  assert.equal(shownLayer(trace2(), 9), 1);
});

test('traceHas: full / layer / all, and everything once complete', () => {
  const t = trace2();
  assert.equal(traceHas(t, 0, 'full'), true);
  assert.equal(traceHas(t, 1, 'full'), false);
  assert.equal(traceHas(t, 1, 'layer'), true);
  assert.equal(traceHas(t, 0, 'all'), true);
  delete t.layers[1].attention.weights;
  assert.equal(traceHas(t, 1, 'layer'), false);
  assert.equal(traceHas(t, 0, 'all'), false);
  // a source side without weights: not 'all'
  const s = { ...trace2(), source: { layers: [{ attention: {} }] } };
  assert.equal(traceHas(s, 0, 'all'), false);
  assert.equal(traceHas({ ...t, complete: true }, 1, 'full'), true);
});

test('mergeCompletion: the completion\'s layers replace the trace\'s, which is then complete', () => {
  const t = trace2();
  const full = trace2();
  mergeCompletion(t, full);
  assert.equal(t.layers, full.layers);
  assert.equal(t.complete, true);
});

test('wordTrace: pieces merged into words (sum over key pieces, mean over query pieces)', () => {
  // 'un', '##do', 'it': WordPiece pieces → words 'undo', 'it'. One head, uniform rows except the last.
  const w = [1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0, 0, 1];
  const t = { n: 3, tokens: ['un', '##do', 'it'], layers: [{ kind: 'self', attention: { weights: f32(w) } }] };
  const m = wordTrace(t);
  assert.deepEqual(m.tokens, ['undo', 'it']);
  assert.equal(m.n, 2);
  assert.deepEqual([...m.groups], [0, 0, 1]);
  assert.deepEqual(m.first, [0, 2]);
  // row 'undo' = mean of rows 0, 1: keys undo = 2/3, it = 1/3; row 'it' = [0, 1]
  const got = [...m.layers[0].attention.weights];
  [2 / 3, 1 / 3, 0, 1].forEach((v, k) => assert.ok(Math.abs(got[k] - v) < 1e-6, `cell ${k}: ${got[k]} ≠ ${v}`));
  assert.equal(shownToken(m, 1), 0); // piece 1 ('##do') is in word 0
  assert.equal(shownToken(t, 1), 1); // an unmerged trace: the token itself
  assert.equal(firstPiece(m, 1), 2);
  assert.equal(firstPiece(t, 1), 1);
});

test('aggregateMap: mean / max over heads, rollout, none for each head', () => {
  const t = trace2();
  assert.deepEqual([...aggregateMap(t, 0, 'mean')], [0.5, 0.5, 0.5, 0.5]);
  assert.deepEqual([...aggregateMap(t, 0, 'max')], [1, 1, 0.5, 0.5]);
  // rollout of one layer: (mean + I) row-normalised = [[.75, .25], [.25, .75]]
  assert.deepEqual([...aggregateMap(t, 0, 'rollout')], [0.75, 0.25, 0.25, 0.75]);
  assert.equal(aggregateMap(t, 0, 'heads'), null);
});

test('filteredTrace: the same object without a filter, else the shown layer filtered head by head', () => {
  const t = trace2();
  assert.equal(filteredTrace(t, 0, { threshold: 0, topK: 0 }), t);
  const f = filteredTrace(t, 1, { threshold: 0.6, topK: 0 });
  assert.notEqual(f, t);
  assert.equal(f.layers[0], t.layers[0]); // other layers untouched
  assert.deepEqual([...f.layers[1].attention.weights], [1, 0, 0, 0, 0, 1, 0, 0]);
  assert.deepEqual([...t.layers[1].attention.weights], TWO); // the trace itself is not changed
  // top-1 per row, ties to the lower key
  assert.deepEqual([...filteredTrace(t, 0, { threshold: 0, topK: 1 }).layers[0].attention.weights], [1, 0, 0.5, 0, 0, 1, 0.5, 0]);
});

test('modelSections: one grid for self-attention, three for an encoder–decoder; metrics per head', () => {
  const titles = { encoder: 'E', decoder: 'D', self: 'S', cross: 'C' };
  const tr = trace2();
  const one = modelSections(tr, titles);
  assert.equal(one.H, 2);
  assert.deepEqual(one.sections.map((s) => [s.key, s.title, s.n, s.m, s.open]), [['self', 'S', 2, 2, true]]);
  // head 0: rows [1, 0] (entropy 0) and [.5, .5] (ln 2): mean ln2/2; distance: row 0 → 0, row 1 → .5: mean .25
  const s = one.sections[0];
  assert.ok(Math.abs(s.entropy[0][0] - Math.LN2 / 2) < 1e-9);
  assert.ok(Math.abs(s.distance[0][0] - 0.25) < 1e-9);
  assert.equal(modelSections(tr, titles).sections[0].entropy[0], s.entropy[0], 'computed once per weights array');
  const t = trace2(1);
  t.layers[0].cross = { weights: f32([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]) }; // [2 heads, 2 queries, 3 keys]
  t.source = { n: 3, layers: [{ attention: { weights: f32(Array(18).fill(1 / 3)) } }] };
  const three = modelSections(t, titles);
  assert.deepEqual(three.sections.map((x) => [x.key, x.title, x.n, x.m, x.open, x.distance === null]),
    [['encoder', 'E', 3, 3, false, false], ['self', 'D', 2, 2, true, false], ['cross', 'C', 2, 3, true, true]]);
});

test('toPlain: typed arrays to arrays, non-finite numbers to null, nested', () => {
  assert.deepEqual(toPlain({ a: f32([1, -Infinity, Number.NaN]), b: [{ c: 'x' }], d: 2 }), { a: [1, null, null], b: [{ c: 'x' }], d: 2 });
});
