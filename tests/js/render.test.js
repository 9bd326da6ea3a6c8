// web/render (DOM-free SVG, raster and CSV/JSON exports) against independent checks: each SVG is read by a
// strict little XML reader written here (not the renderer's code), its cells counted and each fill compared
// with d3-scale-chromatic's colour of the module's own number; the raster twin's pixels with the SVG's
// cells; CSV and JSON read back to the exact float32 numbers of a model run (ATTNSCOPE_SIMD picks the build).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as chromatic from 'd3-scale-chromatic';
import { loadAs } from './helpers.js';
import {
  paletteFrom, heatmapSvg, heatmapGrid, overviewSvg, overviewGrid, linesSvg, linesLayout, gridRaster, linesRaster,
  toCsv, toJson, escapeXml, figureOf, figureSvg, figureRaster,
} from '../../web/render/index.js';
import { meanOverHeads, rollout } from '../../web/aggregates.js';

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(s, where) {
  return s.replace(/&([^;]*);?/g, (m, name) => {
    if (!m.endsWith(';')) throw new Error(`xml: bare '&' in ${where}`);
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    if (!(name in ENTITIES)) throw new Error(`xml: unknown entity &${name}; in ${where}`);
    return ENTITIES[name];
  });
}

/** Parses an XML document into { name, attrs, children: (element | string)[] }; throws when malformed. */
function parseXml(text) {
  let pos = 0;
  const root = { name: '#document', attrs: {}, children: [] };
  const stack = [root];
  const tagRe = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
  while (pos < text.length) {
    const lt = text.indexOf('<', pos);
    const chunk = text.slice(pos, lt < 0 ? text.length : lt);
    if (chunk.includes('>')) throw new Error(`xml: stray '>' at ${pos}`);
    if (chunk.trim()) {
      if (stack.length === 1) throw new Error(`xml: text outside the root element at ${pos}`);
      stack[stack.length - 1].children.push(decode(chunk, `text at ${pos}`));
    }
    if (lt < 0) break;
    tagRe.lastIndex = lt;
    const m = tagRe.exec(text);
    if (!m) throw new Error(`xml: malformed tag at ${lt}: ${text.slice(lt, lt + 60)}`);
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      const open = stack.pop();
      if (open.name !== name) throw new Error(`xml: </${name}> closes <${open.name}> at ${lt}`);
    } else {
      const attrs = {};
      for (const a of attrText.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
        if (a[1] in attrs) throw new Error(`xml: attribute ${a[1]} twice on <${name}>`);
        attrs[a[1]] = decode(a[2] ?? a[3], `<${name} ${a[1]}>`);
      }
      const el = { name, attrs, children: [] };
      if (stack.length === 1 && root.children.length) throw new Error('xml: more than one root element');
      stack[stack.length - 1].children.push(el);
      if (!selfClose) stack.push(el);
    }
    pos = m.index + m[0].length;
  }
  if (stack.length !== 1) throw new Error(`xml: <${stack[stack.length - 1].name}> is never closed`);
  return root.children[0];
}

/** Every element below `el` (depth first, document order) that matches pred. */
function findAll(el, pred, out = []) {
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (pred(c)) out.push(c);
    findAll(c, pred, out);
  }
  return out;
}

const textOf = (el) => el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');

/** RFC 4180 CSV → array of rows of strings. */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (c === '"') { quoted = false; i += 1; continue; }
      field += c;
      i += 1;
      continue;
    }
    if (c === '"' && field === '') { quoted = true; i += 1; continue; }
    if (c === ',') { row.push(field); field = ''; i += 1; continue; }
    if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i += 2; continue; }
    if (c === '"' || c === '\n' || c === '\r') throw new Error(`csv: unexpected ${JSON.stringify(c)} at ${i}`);
    field += c;
    i += 1;
  }
  if (field !== '' || row.length) throw new Error('csv: last line lacks CRLF');
  return rows;
}

/** The '#rrggbb' d3 gives for t in [0, 1] of an interpolator (the reference colour of a cell). */
function hexColor(color) {
  const m = color.match(/\d+/g);
  if (color.startsWith('#')) return color.toLowerCase();
  return `#${m.slice(0, 3).map((x) => Number(x).toString(16).padStart(2, '0')).join('')}`;
}

const viridis = paletteFrom(chromatic.interpolateViridis);
// the reference colour of a value: d3's own viridis at the page's quantisation round((v − lo)·255/(hi − lo))
const refFill = (v, lo, hi) => hexColor(chromatic.interpolateViridis(Math.min(255, Math.max(0, Math.round(((v - lo) * 255) / (hi - lo)))) / 255));
const MASKED_HEX = '#d6d6d6';
const cellsOf = (svg) => findAll(svg, (e) => e.name === 'rect' && e.attrs.class === 'cell');
const maxOf = (a) => a.reduce((m, v) => (v > m ? v : m), 0);

async function runModel(config, text) {
  const as = await loadAs();
  const model = as.createModel(config);
  try {
    return model.run(text, { trace: 'weights', full: [0] });
  } finally {
    model.delete();
  }
}

test('heatmapSvg: one cell per matrix entry, each filled with the palette colour of the module\'s number', async () => {
  const r = await runModel({ dModel: 16, numHeads: 2, numLayers: 2, seed: 3 }, 'the cat sat on the mat');
  const { n } = r;
  const w = r.layers[1].attention.weights; // [2, n, n]
  const hi = maxOf(w);
  const svg = parseXml(heatmapSvg({
    tokens: r.tokens, matrix: w, rows: n, cols: n, palette: viridis, title: 'layer 1', panelTitles: ['head 0', 'head 1'],
  }));
  assert.equal(svg.name, 'svg');
  const cells = cellsOf(svg);
  assert.equal(cells.length, 2 * n * n);
  cells.forEach((c, k) => assert.equal(c.attrs.fill, refFill(w[k], 0, hi), `cell ${k} (weight ${w[k]})`));
  // every token is a row label and a column label of each panel, in order
  const labels = findAll(svg, (e) => e.name === 'text').map(textOf);
  for (const t of r.tokens) assert.ok(labels.filter((x) => x === t).length >= 4, `label ${t}`);
  // the legend states the domain
  assert.ok(labels.includes('0.00') && labels.includes(hi.toFixed(2)));
  // deterministic
  const one = { tokens: r.tokens, matrix: w.subarray(0, n * n), rows: n, cols: n, palette: viridis };
  assert.equal(heatmapSvg(one), heatmapSvg({ ...one, matrix: Float32Array.from(one.matrix) }));
});

test('heatmapSvg: masked cells are grey and the legend says so', async () => {
  const r = await runModel({ architecture: 'decoder', dModel: 8, numHeads: 1, numLayers: 1, seed: 1 }, 'a b c d');
  const { n } = r;
  const A = r.layers[0].attention;
  const masked = Uint8Array.from(A.scores, (s) => (s === -Infinity ? 1 : 0));
  assert.equal(masked.reduce((s, x) => s + x, 0), (n * (n - 1)) / 2); // causal: the upper triangle
  const svg = parseXml(heatmapSvg({ tokens: r.tokens, matrix: A.weights, rows: n, cols: n, palette: viridis, masked }));
  const cells = cellsOf(svg);
  const hi = maxOf(A.weights);
  cells.forEach((c, k) => assert.equal(c.attrs.fill, masked[k] ? MASKED_HEX : refFill(A.weights[k], 0, hi)));
  assert.ok(findAll(svg, (e) => e.name === 'text').map(textOf).includes('masked'));
});

test('heatmapSvg: text is escaped and reads back unchanged', () => {
  const tokens = ['<b>', 'a&b', '"q"', "it's", 'x\u0001y', '\ud800'];
  const title = 'title <svg> & "quotes" \'apos\'';
  const svg = parseXml(heatmapSvg({
    tokens, matrix: new Float32Array(36).fill(0.5), rows: 6, cols: 6, palette: viridis, title,
  }));
  const texts = findAll(svg, (e) => e.name === 'text').map(textOf);
  assert.ok(texts.includes(title));
  for (const t of ['<b>', 'a&b', '"q"', "it's", 'xy', '\ufffd']) assert.ok(texts.includes(t), `label ${t}`);
  assert.equal(escapeXml('<&>"\''), '&lt;&amp;&gt;&quot;&apos;');
});

test('gridRaster: 2× pixels of the SVG, each cell\'s pixels in the SVG cell\'s fill', async () => {
  const r = await runModel({ dModel: 16, numHeads: 2, numLayers: 1, seed: 5, tokenizer: 'char' }, 'attention');
  const { n } = r;
  const w = r.layers[0].attention.weights;
  const opts = { tokens: r.tokens, matrix: w, rows: n, cols: n, palette: viridis, panelTitles: ['h0', 'h1'] };
  const svg = parseXml(heatmapSvg(opts));
  const img = gridRaster(heatmapGrid(opts), 2);
  assert.equal(img.width, 2 * Number(svg.attrs.width));
  assert.equal(img.height, 2 * Number(svg.attrs.height));
  assert.equal(img.data.length, img.width * img.height * 4);
  for (const c of cellsOf(svg)) {
    const cx = Math.floor(2 * (Number(c.attrs.x) + Number(c.attrs.width) / 2));
    const cy = Math.floor(2 * (Number(c.attrs.y) + Number(c.attrs.height) / 2));
    const k = (cy * img.width + cx) * 4;
    const px = `#${[0, 1, 2].map((o) => img.data[k + o].toString(16).padStart(2, '0')).join('')}`;
    assert.equal(px, c.attrs.fill);
  }
  assert.equal(img.data[3], 255); // opaque white background
  assert.deepEqual(Array.from(img.data.subarray(0, 3)), [255, 255, 255]);
});

test('linesSvg: one link per weight ≥ threshold, coloured by head, opacity = weight', async () => {
  const r = await runModel({ dModel: 16, numHeads: 2, numLayers: 1, seed: 7 }, 'one two three four five');
  const { n } = r;
  const w = r.layers[0].attention.weights;
  const colors = [chromatic.schemeTableau10[0], chromatic.schemeTableau10[1]];
  const threshold = 0.1;
  const svg = parseXml(linesSvg({ tokens: r.tokens, weights: w, rows: n, cols: n, colors, threshold }));
  const links = findAll(svg, (e) => e.name === 'line' && e.attrs.class === 'link');
  const want = [];
  for (let k = 0; k < w.length; k++) if (w[k] >= threshold) want.push(k);
  assert.equal(links.length, want.length);
  assert.ok(want.length > 0 && want.length < w.length);
  links.forEach((l, idx) => {
    const k = want[idx];
    const [p, i, j] = [Math.floor(k / (n * n)), Math.floor(k / n) % n, k % n];
    assert.deepEqual([Number(l.attrs['data-p']), Number(l.attrs['data-i']), Number(l.attrs['data-j'])], [p, i, j]);
    assert.equal(l.attrs.stroke, colors[p]);
    assert.ok(Math.abs(Number(l.attrs['stroke-opacity']) - Math.min(1, w[k] * 0.9)) <= 5e-5);
    assert.ok(Number(l.attrs.y1) < Number(l.attrs.y1) + 1); // numbers, not NaN
  });
  // the raster twin has the layout's size at 2× and is not blank between the token columns
  const L = linesLayout({ tokens: r.tokens, weights: w, rows: n, cols: n, colors, threshold });
  const img = linesRaster({ tokens: r.tokens, weights: w, rows: n, cols: n, colors, threshold }, 2);
  assert.equal(img.width, 2 * L.width);
  assert.equal(img.height, 2 * L.height);
  let inked = 0;
  for (let k = 0; k < img.data.length; k += 4) if (img.data[k] < 250 || img.data[k + 1] < 250) inked += 1;
  assert.ok(inked > 100, `raster has ${inked} inked pixels`);
});

test('overviewSvg: every layer × head, each thumbnail scaled to its own largest weight', async () => {
  const r = await runModel({ dModel: 12, numHeads: 3, numLayers: 2, seed: 2 }, 'a small overview test');
  const { n } = r;
  const layers = r.layers.map((ly) => ly.attention.weights);
  const svg = parseXml(overviewSvg({ layers, heads: 3, rows: n, cols: n, palette: viridis }));
  const cells = cellsOf(svg);
  assert.equal(cells.length, 2 * 3 * n * n);
  const panels = findAll(svg, (e) => e.name === 'g' && e.attrs.class === 'panel');
  assert.equal(panels.length, 6);
  panels.forEach((g, p) => {
    const [l, hd] = [Math.floor(p / 3), p % 3];
    assert.deepEqual([g.attrs['data-layer'], g.attrs['data-head']], [String(l), String(hd)]);
    const tile = layers[l].subarray(hd * n * n, (hd + 1) * n * n);
    const mx = maxOf(tile);
    cellsOf(g).forEach((c, k) => assert.equal(c.attrs.fill, refFill(tile[k], 0, mx)));
  });
  const img = gridRaster(overviewGrid({ layers, heads: 3, rows: n, cols: n, palette: viridis }), 2);
  assert.equal(img.width, 2 * Number(svg.attrs.width));
});

test('toCsv: rows and columns are the matrix, the numbers exactly the module\'s', async () => {
  const r = await runModel({ dModel: 16, numHeads: 2, numLayers: 1, seed: 4 }, 'comma, "quote" and more');
  const { n } = r;
  const w = r.layers[0].attention.weights;
  const panels = [0, 1].map((hd) => ({ layer: 0, head: hd, aggregate: 'head', values: w.subarray(hd * n * n, (hd + 1) * n * n) }));
  const rows = parseCsv(toCsv({ view: 'heatmap', tokens: r.tokens, ids: r.ids, rows: n, cols: n, panels }));
  assert.deepEqual(rows[0], ['layer', 'head', 'query_index', 'query_token', ...r.tokens]);
  assert.equal(rows.length, 1 + 2 * n);
  for (let hd = 0; hd < 2; hd++) {
    for (let i = 0; i < n; i++) {
      const row = rows[1 + hd * n + i];
      assert.equal(row.length, 4 + n);
      assert.deepEqual(row.slice(0, 4), ['0', String(hd), String(i), r.tokens[i]]);
      row.slice(4).forEach((v, j) => assert.equal(Number(v), w[(hd * n + i) * n + j]));
    }
  }
  // an aggregate names itself in the head column
  const agg = parseCsv(toCsv({ tokens: r.tokens, rows: n, cols: n, panels: [{ layer: 0, head: null, aggregate: 'mean', values: w.subarray(0, n * n) }] }));
  assert.equal(agg[1][1], 'mean');
});

test('toJson: tokens, ids, shapes, which layer/head, and the exact numbers', async () => {
  const r = await runModel({ dModel: 16, numHeads: 2, numLayers: 2, seed: 6 }, 'json holds the numbers');
  const { n } = r;
  const w = r.layers[1].attention.weights;
  const f = {
    view: 'heatmap', model: 'random', text: 'json holds the numbers', tokens: r.tokens, ids: r.ids, rows: n, cols: n,
    panels: [{ layer: 1, head: 1, aggregate: 'head', values: w.subarray(n * n), domain: [0, 1] }],
  };
  const j = JSON.parse(toJson(f));
  assert.equal(j.format, 'attnscope-figure');
  assert.deepEqual(j.tokens, r.tokens);
  assert.deepEqual(j.ids, Array.from(r.ids));
  assert.deepEqual(j.keyTokens, r.tokens);
  assert.equal(j.panels.length, 1);
  const p = j.panels[0];
  assert.deepEqual([p.layer, p.head, p.aggregate, p.shape, p.domain], [1, 1, 'head', [n, n], [0, 1]]);
  assert.equal(p.values.length, n);
  p.values.forEach((row, i) => row.forEach((v, jj) => assert.equal(v, w[n * n + i * n + jj])));
});

test('render: bad arguments name the function and the argument', () => {
  const m = new Float32Array(4);
  assert.throws(() => heatmapSvg({ tokens: ['a', 'b'], matrix: new Float32Array(5), rows: 2, cols: 2, palette: viridis }),
    { name: 'RangeError', message: 'heatmapSvg: matrix length (5) must be rows·cols (4)' });
  assert.throws(() => heatmapSvg({ tokens: ['a', 'b'], matrix: m, rows: 2, cols: 2 }), { name: 'TypeError', message: /^heatmapSvg: palette must be/ });
  assert.throws(() => heatmapSvg({ tokens: ['a'], matrix: m, rows: 2, cols: 2, palette: viridis }),
    { name: 'RangeError', message: 'heatmapSvg: tokens length (1) must be 2' });
  assert.throws(() => linesSvg({ tokens: ['a', 'b'], weights: m, rows: 2, cols: 2 }), { message: 'linesSvg: colors (0) must hold one colour per panel of weights' });
  assert.throws(() => linesSvg({ tokens: ['a', 'b'], weights: m, rows: 2, cols: 2, colors: ['#000'], threshold: -1 }), { message: 'linesSvg: threshold (-1) must be a finite number ≥ 0' });
  assert.throws(() => overviewSvg({ layers: [], heads: 1, rows: 2, cols: 2, palette: viridis }), { message: /^overviewSvg: layers \(0\) must be a non-empty array/ });
  assert.throws(() => toCsv({ tokens: ['a', 'b'], rows: 2, cols: 2, panels: [] }), { message: 'toCsv: panels must be a non-empty array' });
  assert.throws(() => toJson({ tokens: ['a', 'b'], rows: 2, cols: 2, panels: [{ values: new Float32Array(3) }] }),
    { message: 'toJson: panels[0].values length (3) must be rows·cols (4)' });
});

test('figureOf: every head of a layer, one domain for the layer, masked cells from the full layer\'s scores', async () => {
  const as = await loadAs();
  const model = as.createModel({ architecture: 'decoder', dModel: 8, numHeads: 2, numLayers: 2, seed: 11 });
  let r;
  try {
    r = model.run('one two three four', { trace: 'weights', full: [1] });
  } finally {
    model.delete();
  }
  const { n } = r;
  const f = figureOf(r, { view: 'heatmap', layer: 1, model: 'm' });
  assert.equal(f.title, 'm · layer 1 · self-attention · every head');
  assert.equal(f.panels.length, 2);
  const w = r.layers[1].attention.weights;
  f.panels.forEach((p, hd) => {
    assert.deepEqual(Array.from(p.values), Array.from(w.subarray(hd * n * n, (hd + 1) * n * n)));
    assert.deepEqual(p.domain, [0, maxOf(w)]);
    p.masked.forEach((m, k) => assert.equal(m, Math.floor(k / n) < k % n ? 1 : 0)); // causal: j > i blocked
  });
  // the page's selected heads: a list
  const picked = figureOf(r, { view: 'heatmap', layer: 1, head: [1], model: 'm' });
  assert.deepEqual(picked.panels.map((p) => p.head), [1]);
  assert.equal(picked.title, 'm · layer 1 · self-attention · head 1');
  assert.equal(figureOf(r, { view: 'heatmap', layer: 1, head: [1, 0], model: 'm' }).title, 'm · layer 1 · self-attention · heads 1, 0');
  // layer 0 was not asked for in full: no scores, so nothing is marked masked
  assert.equal(figureOf(r, { view: 'heatmap', layer: 0 }).panels[0].masked, undefined);
  // aggregates are web/aggregates.js's, each one panel with its own domain
  const mean = figureOf(r, { view: 'heatmap', layer: 1, head: 'mean' }).panels[0];
  assert.deepEqual(Array.from(mean.values), Array.from(meanOverHeads(w, 2, n)));
  assert.deepEqual(mean.domain, [0, maxOf(mean.values)]);
  const roll = figureOf(r, { view: 'lines', layer: 1, head: 'rollout' }).panels[0];
  assert.deepEqual(Array.from(roll.values), Array.from(rollout(r.layers.map((ly) => ly.attention.weights), 2, n)[1]));
  // the figure draws: one cell per entry of each panel, and its raster is twice the SVG's size
  const style = { palette: viridis, headColors: chromatic.schemeTableau10 };
  const svg = parseXml(figureSvg(f, style));
  assert.equal(cellsOf(svg).length, 2 * n * n);
  assert.equal(figureRaster(f, style, 2).width, 2 * Number(svg.attrs.width));
  const ov = figureOf(r, { view: 'overview' });
  assert.equal(ov.panels.length, 4);
  assert.equal(cellsOf(parseXml(figureSvg(ov, style))).length, 4 * n * n);
  // bad requests name the argument
  assert.throws(() => figureOf(r, { view: 'pie' }), { message: 'figureOf: view ("pie") must be one of heatmap, lines, overview' });
  assert.throws(() => figureOf(r, { view: 'heatmap', layer: 2 }), { message: 'figureOf: layer (2) must be in [0, 1]' });
  assert.throws(() => figureOf(r, { view: 'heatmap', head: 2 }), { message: 'figureOf: head (2) must be a head index in [0, 1], all, mean, max or rollout' });
  assert.throws(() => figureOf(r, { view: 'heatmap', attention: 'cross' }), { message: "figureOf: attention ('cross') needs an encoder-decoder trace (this one has self-attention only)" });
});
