// translate-view.test.js: the translation view's worker step (web/translate-work.js) and its numbers
// (web/translate-model.js) against the module itself and hand computations: the bundled 'dates' model and a random
// Marian-shaped checkpoint read through its source.spm / target.spm / vocab.json (tests/browser/marian-shaped.js).
// The cross-attention shown is that of the returned sequence: model.run on generate's ids, one row per step that
// wrote a returned token (and the end token); the mean / max over heads and the word merge are checked cell by cell
// in float64; the alignment figure draws one line per weight above its floor and escapes the tokens.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAs, root } from './helpers.js';
import { Pipeline } from '../../web/pipeline.js';
import { translateWork, END } from '../../web/translate-work.js';
import { crossMap, crossFigure, alignmentTree, toSvgText, strongest } from '../../web/translate-model.js';
import { toCsv } from '../../web/render/index.js';
import { marianShaped } from '../browser/marian-shaped.js';

const as = await loadAs();
const state = (model, text) => ({ mode: 'text', model, text });

/** Runs `fn(pipeline, model)` with the Marian-shaped checkpoint as the pipeline's loaded checkpoint, then frees it. */
async function withMarian(fn) {
  const model = await as.loadPretrained(marianShaped(root).load);
  const p = new Pipeline(as);
  p.checkpoint = model;
  try {
    await fn(p, model);
  } finally {
    model.delete();
  }
}

test('translateWork: the bundled dates model; rows are the steps that wrote the returned tokens and the end token', async () => {
  const p = new Pipeline(as);
  const text = '22 Nov 2026';
  const tr = await translateWork(p, state('dates', text));
  const model = await p.loaded('dates');
  const g = model.generate(text, { maxNewTokens: 31 });
  assert.equal(tr.text, g.text);
  assert.equal(tr.text, '2026-11-22');
  assert.deepEqual(tr.written.tokens, [...g.tokens, END]);
  const r = model.run({ source: text, target: g.text }, { trace: 'weights' });
  assert.deepEqual(tr.read.tokens, r.tokens);
  assert.deepEqual(tr.source.tokens, r.source.tokens);
  assert.equal(tr.cross.length, r.layers.length);
  tr.cross.forEach((w, l) => assert.deepEqual(w, r.layers[l].cross.weights, `layer ${l}`));
  assert.equal(tr.cross[0].length, tr.numHeads * tr.written.tokens.length * tr.source.tokens.length);
  // beam search: the returned sequence is beam search's
  const b = await translateWork(p, state('dates', '2026年11月22日'), { numBeams: 3 });
  assert.equal(b.text, model.generate('2026年11月22日', { maxNewTokens: 31, numBeams: 3 }).text);
  assert.equal(b.numBeams, 3);
  await assert.rejects(() => translateWork(p, state('reverse', '1 2 3>')), /^Error: translate: a decoder model does not translate$/);
  await assert.rejects(() => translateWork(p, state('random', 'x')), /^Error: translate: choose a trained encoder–decoder model/);
});

test('translateWork: a Marian-shaped checkpoint (source.spm, target.spm, vocab.json): run on the generated ids', async () => {
  await withMarian(async (p, model) => {
    const text = 'Hello world 你好';
    for (const numBeams of [1, 3]) {
      const tr = await translateWork(p, state('checkpoint', text), { numBeams });
      const g = model.generate(text, { maxNewTokens: 64, numBeams });
      assert.deepEqual(tr.written.ids.filter((x) => x !== null), Array.from(g.ids));
      const kept = g.stoppedAtEnd ? g.ids.length : g.ids.length - 1;
      const r = model.run({ source: text, targetIds: Array.from(g.ids.subarray(0, kept)) }, { trace: 'weights' });
      assert.equal(tr.written.tokens.length, kept + 1, 'one row per step that wrote a returned token (or the end token)');
      // MarianTokenizer's pieces: '好' is one of the pieces marian_vocab.json leaves out, so it reads as <unk>
      assert.deepEqual(tr.source.tokens, ['▁', 'H', 'e', 'l', 'l', 'o', '▁world', '▁你', '<unk>', '</s>']);
      tr.cross.forEach((w, l) => assert.deepEqual(w, r.layers[l].cross.weights, `beams ${numBeams} layer ${l}`));
      console.log(`marian-shaped, ${numBeams} beam(s): ${g.ids.length} tokens, stopped at the end: ${g.stoppedAtEnd}`);
    }
  });
});

test('crossMap: mean / max over heads, one head, words merged on both sides, in float64 by hand', async () => {
  await withMarian(async (p) => {
    const tr = await translateWork(p, state('checkpoint', 'Hello world 你好'));
    const H = tr.numHeads;
    const T = tr.written.tokens.length;
    const S = tr.source.tokens.length;
    const w = tr.cross[1];
    const at = (hd, i, j) => w[hd * T * S + i * S + j];
    const mean = crossMap(tr, { layer: 1, head: 'mean' });
    const max = crossMap(tr, { layer: 1, head: 'max' });
    const one = crossMap(tr, { layer: 1, head: 2 });
    let err = 0;
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        let m = 0;
        let x = -Infinity;
        for (let hd = 0; hd < H; hd++) {
          m += at(hd, i, j) / H;
          x = Math.max(x, at(hd, i, j));
        }
        err = Math.max(err, Math.abs(mean.values[i * S + j] - m));
        assert.equal(max.values[i * S + j], x);
        assert.equal(one.values[i * S + j], at(2, i, j));
      }
    }
    assert.ok(err < 1e-6, `mean within 1e-6 (${err})`);
    // words: the source's pieces ▁ H e l l o → 'Hello', '▁world', '▁你', '<unk>', '</s>'; columns summed, rows averaged
    const merged = crossMap(tr, { layer: 1, head: 0, words: true });
    assert.deepEqual(merged.cols, ['Hello', 'world', '你', '<unk>', '</s>']);
    const want = Array.from({ length: merged.rows.length }, () => new Float64Array(5));
    const count = new Float64Array(merged.rows.length);
    for (let i = 0; i < T; i++) {
      const r = merged.rowGroups[i];
      count[r] += 1;
      for (let j = 0; j < S; j++) want[r][merged.colGroups[j]] += at(0, i, j);
    }
    for (let r = 0; r < merged.rows.length; r++) {
      let sum = 0;
      for (let c = 0; c < 5; c++) {
        assert.ok(Math.abs(merged.values[r * 5 + c] - want[r][c] / count[r]) < 1e-6, `word cell ${r},${c}`);
        sum += merged.values[r * 5 + c];
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `a merged row still sums to 1 (${sum})`);
    }
    assert.deepEqual(strongest(one, 0), { j: Array.from(one.values.subarray(0, S)).indexOf(Math.max(...one.values.subarray(0, S))), weight: Math.max(...one.values.subarray(0, S)) });
    assert.throws(() => crossMap(tr, { layer: 2 }), /^RangeError: crossMap: layer \(2\) must be in \[0, 1\]$/);
    assert.throws(() => crossMap(tr, { head: 4 }), /^RangeError: crossMap: head \(4\) must be a head index in \[0, 3\], mean or max$/);
    // the CSV export holds exactly the map drawn
    const csv = toCsv(crossFigure(tr, mean, { layer: 1, head: 'mean', title: 'x' })).trim().split('\r\n');
    assert.equal(csv.length, T + 1);
    csv.slice(1).forEach((line, i) => {
      const cells = line.split(',').slice(-S).map(Number);
      cells.forEach((v, j) => assert.equal(v, mean.values[i * S + j]));
    });
  });
});

test('alignmentTree: one line per weight above the floor, the chosen step strong, tokens escaped in the SVG', async () => {
  const p = new Pipeline(as);
  const tr = await translateWork(p, state('dates', '22.11.2026'));
  const map = crossMap(tr, { layer: 1, head: 'max' });
  const { tree, width, height } = alignmentTree(map, { width: 300, selected: 2, floor: 0.05, title: 'a <b>' });
  const lines = tree[2].find((g) => g[1].class === 'al-lines')[2];
  assert.equal(lines.length, Array.from(map.values).filter((v) => v > 0.05).length);
  const opacity = (i) => lines.filter((l) => l[1]['data-row'] === i).map((l) => Number(l[1]['stroke-opacity']));
  assert.ok(Math.min(...opacity(2)) >= 0.12 && Math.max(...opacity(0)) <= 0.07, 'the chosen step stands out');
  assert.ok(width >= 300 && height > 100);
  const svg = toSvgText(tree);
  assert.match(svg, /<text[^>]*>&lt;\/s&gt;<\/text>/, 'the end token written escaped');
  assert.match(svg, /a &lt;b&gt;/);
  assert.doesNotMatch(svg, /<b>/);
});

test("model.config.checkpoint.modelType of an encoder–decoder checkpoint is its config.json's model_type (it read 'gpt2')", async () => {
  const dir = path.join(root, 'tests', 'fixtures', 'encdec');
  for (const name of ['marian-f32', 'bart-f16', 'mbart-bf16-untied', 't5-f32-relu-untied', 'mt5-f16']) {
    const read = (f) => readFileSync(path.join(dir, name, f));
    const config = read('config.json').toString('utf8');
    const model = await as.loadPretrained({ config, weights: read('model.safetensors'), tokenizer: read('tokenizer.json').toString('utf8') });
    try {
      assert.equal(model.config.checkpoint.modelType, JSON.parse(config).model_type, name);
    } finally {
      model.delete();
    }
  }
});
