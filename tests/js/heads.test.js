// heads.test.js: what the bundled transformers' heads do, measured through attnscope. Every model with
// `headScores` in its config.json (written by training/label_heads.py from an independent float64 NumPy forward)
// is run here on the same heldout.json inputs with model.run(..., { trace: 'weights' }); each head's score and the
// uniform baseline must come out within tolerance, and the labels in `heads` must be exactly the ones the stated
// rule gives on attnscope's own scores. Runs against either build: ATTNSCOPE_SIMD=false selects the scalar one.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAs, root } from './helpers.js';

const as = await loadAs();
const json = (name, file) => JSON.parse(readFileSync(path.join(root, 'models', name, file), 'utf8'));

// training/label_heads.py's rule and names
const LABEL_RATIO = 3;
const MIN_EXCESS = 0.1;
const PUNCTUATION = ",;:.()'\"-";
const LABELS = {
  previousToken: 'previous token', space: 'spaces', punctuation: 'punctuation', induction: 'induction',
  copy: 'copies the digit to write', field: 'source field being written', previousLine: 'same position of the previous line',
  sameOffset: 'same offset of the previous line', firstToken: 'first token (sink)', digit: 'source digit being written',
};
const UNLABELLED = new Set(['copyArgmax', 'digitArgmax']);

/** Per-layer per-head sums of one number per (query, key set) pair, and the uniform row's number. */
class Measure {
  constructor(layers, heads) {
    this.sum = Array.from({ length: layers }, () => new Float64Array(heads));
    this.base = 0;
    this.n = 0;
  }

  /** f(weights of layer l, head h) -> this pair's number; baseline: what a uniform row gives. */
  add(layerWeights, heads, f, baseline) {
    layerWeights.forEach((w, l) => { for (let h = 0; h < heads; h++) this.sum[l][h] += f(w, h); });
    this.base += baseline;
    this.n += 1;
  }

  result() {
    return { pairs: this.n, uniform: this.base / this.n, perHead: this.sum.map((row) => Array.from(row, (v) => v / this.n)) };
  }
}

// weights [H, n, nk] flat: the entry of head h, query i, key j
const at = (w, n, nk) => (h, i, j) => w[(h * n + i) * nk + j];

// one run on the text's first maxPositions characters (as label_heads.py truncates the ids)
function selfWeights(model, text) {
  const r = model.run([...text].slice(0, model.config.maxPositions).join(''), { trace: 'weights' });
  const n = r.ids.length;
  return { n, layers: r.layers.map((l) => at(l.attention.weights, n, n)) };
}

function english(model, cfg, held) {
  const { numLayers: L, numHeads: H } = cfg;
  const prev = new Measure(L, H);
  const space = new Measure(L, H);
  const punct = new Measure(L, H);
  for (const text of held.texts) {
    const { n, layers } = selfWeights(model, text);
    const chars = [...text].slice(0, n);
    const isSpace = chars.map((c) => (c === ' ' ? 1 : 0));
    const isPunct = chars.map((c) => (PUNCTUATION.includes(c) ? 1 : 0));
    const share = (on, i) => (w, h) => { let s = 0; for (let j = 0; j <= i; j++) s += on[j] * w(h, i, j); return s; };
    const mean = (on, i) => on.slice(0, i + 1).reduce((a, b) => a + b, 0) / (i + 1);
    for (let i = 1; i < n; i++) {
      prev.add(layers, H, (w, h) => w(h, i, i - 1), 1 / (i + 1));
      space.add(layers, H, share(isSpace, i), mean(isSpace, i));
      punct.add(layers, H, share(isPunct, i), mean(isPunct, i));
    }
  }
  const ind = new Measure(L, H);
  for (const text of held.induction.texts) {
    const { n, layers } = selfWeights(model, text);
    const half = Math.floor(n / 2);
    for (let i = half; i < n - 1; i++) ind.add(layers, H, (w, h) => w(h, i, i - half + 1), 1 / (i + 1));
  }
  return { previousToken: prev.result(), space: space.result(), punctuation: punct.result(), induction: ind.result() };
}

// english's measures and the attention sink (label_heads.py english_rope): weight of query i >= 1 on key 0
function englishRope(model, cfg, held) {
  const first = new Measure(cfg.numLayers, cfg.numHeads);
  for (const text of held.texts) {
    const { n, layers } = selfWeights(model, text);
    for (let i = 1; i < n; i++) first.add(layers, cfg.numHeads, (w, h) => w(h, i, 0), 1 / (i + 1));
  }
  return { ...english(model, cfg, held), firstToken: first.result() };
}

function reverse(model, cfg, held) {
  const { numLayers: L, numHeads: H } = cfg;
  const copy = new Measure(L, H);
  const argmax = new Measure(L, H);
  for (const { input, target } of held.items) {
    const { layers } = selfWeights(model, input + target);
    const digits = target.length;
    for (let k = 0; k < digits; k++) {
      const q = input.length + k - 1; // the query that predicts output digit k
      const key = 2 * (digits - 1 - k); // the prompt digit it copies ('3 9 1>': digits at 0, 2, 4)
      copy.add(layers, H, (w, h) => w(h, q, key), 1 / (q + 1));
      argmax.add(layers, H, (w, h) => {
        let best = 0;
        for (let j = 1; j <= q; j++) if (w(h, q, j) > w(h, q, best)) best = j;
        return best === key ? 1 : 0;
      }, 1 / (q + 1));
    }
  }
  return { copy: copy.result(), copyArgmax: argmax.result() };
}

// The year / month / day character ranges of a dates input (training/label_heads.py's date_fields).
function dateFields(text) {
  const runs = [...text.matchAll(/[0-9]+|[A-Za-z]+/g)].map((m) => ({ a: m.index, b: m.index + m[0].length, s: m[0] }));
  const words = runs.filter((r) => /^[A-Za-z]/.test(r.s) && text[r.b] !== ',');
  const nums = runs.filter((r) => /^[0-9]/.test(r.s));
  const year = nums.find((r) => r.s.length === 4);
  const month = words.length > 0 ? words[0] : nums[1];
  const day = nums.find((r) => r !== year && r !== month);
  return { year, month, day };
}

function dates(model, cfg, held) {
  const { numDecoderLayers: L, numHeads: H } = cfg;
  const share = new Measure(L, H);
  for (const { input, target } of held.items) {
    const r = model.run({ source: input, target }, { trace: 'weights' });
    const n = r.ids.length;
    const m = r.source.ids.length;
    const layers = r.layers.map((l) => at(l.cross.weights, n, m));
    const fields = dateFields(input);
    for (let t = 0; t < 10; t++) {
      const field = t < 4 ? 'year' : t === 5 || t === 6 ? 'month' : t >= 8 ? 'day' : null;
      if (field === null) continue;
      const { a, b } = fields[field];
      share.add(layers, H, (w, h) => { let s = 0; for (let j = a; j < b; j++) s += w(h, t, j); return s; }, (b - a) / m);
    }
  }
  return { field: share.result() };
}

// translate-en-zh: the weight of the query writing target character t on the source digit it reads (heldout.json's
// align pairs), and whether that digit is the row's maximum (first on ties)
function translate(model, cfg, held) {
  const { numDecoderLayers: L, numHeads: H } = cfg;
  const digit = new Measure(L, H);
  const argmax = new Measure(L, H);
  for (const { input, target, align } of held.items) {
    if (align.length === 0) continue;
    const r = model.run({ source: input, target }, { trace: 'weights' });
    const n = r.ids.length;
    const m = r.source.ids.length;
    const layers = r.layers.map((l) => at(l.cross.weights, n, m));
    for (const [t, s] of align) {
      digit.add(layers, H, (w, h) => w(h, t, s), 1 / m);
      argmax.add(layers, H, (w, h) => {
        let best = 0;
        for (let j = 1; j < m; j++) if (w(h, t, j) > w(h, t, best)) best = j;
        return best === s ? 1 : 0;
      }, 1 / m);
    }
  }
  return { digit: digit.result(), digitArgmax: argmax.result() };
}

// [(query, key)]: offset o of line k >= 1 and offset o of line k - 1 (lines end with '\n'), queries < n; with
// `writes` the query is the one that writes (predicts) offset o of line k, one position earlier
function linePairs(text, n, writes = false) {
  const chars = [...text];
  const lines = [];
  for (let a = 0; a < chars.length;) {
    const nl = chars.indexOf('\n', a);
    const b = nl < 0 ? chars.length : nl + 1;
    lines.push([a, b]);
    a = b;
  }
  const pairs = [];
  for (let k = 1; k < lines.length; k++) {
    const [a1, b1] = lines[k - 1];
    const [a2, b2] = lines[k];
    const back = writes ? 1 : 0;
    for (let o = 0; o < Math.min(b1 - a1, b2 - a2); o++) if (a2 + o - back < n) pairs.push([a2 + o - back, a1 + o]);
  }
  return pairs;
}

function chinese(model, cfg, held) {
  const { numLayers: L, numHeads: H } = cfg;
  const writes = new Measure(L, H);
  const same = new Measure(L, H);
  for (const text of held.texts) {
    const { n, layers } = selfWeights(model, text);
    for (const [q, k] of linePairs(text, n, true)) writes.add(layers, H, (w, h) => w(h, q, k), 1 / (q + 1));
    for (const [q, k] of linePairs(text, n)) same.add(layers, H, (w, h) => w(h, q, k), 1 / (q + 1));
  }
  return { previousLine: writes.result(), sameOffset: same.result() };
}

const MEASURES = { english, 'english-rope': englishRope, reverse, dates, 'chinese-poems': chinese, 'translate-en-zh': translate };
const CROSS = new Set(['dates', 'translate-en-zh']);

function labels(scores, attention) {
  const out = [];
  for (const [measure, s] of Object.entries(scores)) {
    if (UNLABELLED.has(measure)) continue;
    s.perHead.forEach((row, layer) => row.forEach((v, head) => {
      if (v >= LABEL_RATIO * s.uniform && (v - s.uniform) / (1 - s.uniform) >= MIN_EXCESS) {
        out.push({ layer, head, attention, label: LABELS[measure], measure });
      }
    }));
  }
  return out.sort((x, y) => x.layer - y.layer || x.head - y.head || x.measure.localeCompare(y.measure));
}

const withHeads = as.bundledModels.filter(({ name }) => name in MEASURES);

test('heads: every bundled transformer has measured head scores and labels in its config.json', () => {
  assert.ok(withHeads.length >= 3);
  for (const { name } of withHeads) {
    const cfg = json(name, 'config.json');
    assert.ok(cfg.headScores && Array.isArray(cfg.heads), `${name}: run training/label_heads.py ${name}`);
  }
});

for (const { name } of withHeads) {
  test(`heads: ${name}'s head scores and labels are what attnscope measures`, async (t) => {
    const model = await as.loadBundled(name);
    try {
      const cfg = json(name, 'config.json');
      const got = MEASURES[name](model, cfg, json(name, 'heldout.json'));
      for (const [measure, want] of Object.entries(cfg.headScores)) {
        const g = got[measure];
        assert.equal(g.pairs, want.pairs, `${name} ${measure}: pairs`);
        assert.ok(Math.abs(g.uniform - want.uniform) < 1e-4, `${name} ${measure}: uniform ${g.uniform} vs ${want.uniform}`);
        // stored to 4 digits; float32 vs float64; an argmax share may flip on a near-tie (one pair in 1,950)
        const tol = measure === 'copyArgmax' || measure === 'digitArgmax' ? 2e-3 : 2e-4;
        g.perHead.forEach((row, l) => row.forEach((v, h) => {
          assert.ok(Math.abs(v - want.perHead[l][h]) <= tol,
            `${name} ${measure} layer ${l} head ${h}: attnscope ${v.toFixed(5)}, stored ${want.perHead[l][h]}`);
        }));
        t.diagnostic(`${name} ${measure} (uniform ${g.uniform.toFixed(4)}): ${g.perHead.map((r) => r.map((v) => v.toFixed(3)).join(' ')).join(' | ')}`);
      }
      const attention = CROSS.has(name) ? 'cross' : 'self';
      const stored = cfg.heads.map(({ layer, head, attention: a, label, measure }) => ({ layer, head, attention: a, label, measure }))
        .sort((x, y) => x.layer - y.layer || x.head - y.head || x.measure.localeCompare(y.measure));
      assert.deepEqual(stored, labels(got, attention), `${name}: labels`);
      for (const h of cfg.heads) assert.equal(h.score, cfg.headScores[h.measure].perHead[h.layer][h.head]);
    } finally {
      model.delete();
    }
  });
}

test('heads: the dates field finder and the line pairs on hand-worked inputs', () => {
  const f = dateFields('Sunday, 22 November 2026');
  assert.deepEqual([f.year.s, f.month.s, f.day.s], ['2026', 'November', '22']);
  const g = dateFields('2026年11月2日');
  assert.deepEqual([g.year.a, g.month.a, g.month.b, g.day.a], [0, 5, 7, 8]);
  const h = dateFields('Nov 22, 2026');
  assert.deepEqual([h.year.s, h.month.s, h.day.s], ['2026', 'Nov', '22']);
  // two 5-character couplets: offset o of line 1 (starting at 13) looks at offset o of line 0
  const poem = '白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n';
  const pairs = linePairs(poem, 26);
  assert.equal(pairs.length, 13);
  assert.deepEqual(pairs[0], [13, 0]);
  assert.deepEqual(pairs[12], [25, 12]);
  assert.deepEqual(linePairs(poem, 20).length, 7);
  // the query that writes offset 0 of line 1 is the line break ending line 0 (position 12)
  assert.deepEqual(linePairs(poem, 26, true)[0], [12, 0]);
  assert.deepEqual(linePairs(poem, 26, true)[12], [24, 12]);
});
