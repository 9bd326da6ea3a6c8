// Real-browser tests of the page's export buttons (issue 14): from the attention panel (each head, the
// mean / max / rollout aggregates, and the lines view) and the model view, each of SVG, PNG, CSV and JSON is
// clicked and the download captured (playwright's 'download' event). The SVG is parsed by the browser's own
// XML parser: one rect per matrix entry whose fill is the module's value through the page's colour scale
// (viridis from npm's d3-scale-chromatic, quantised as the page's heatmap), masked cells grey, a colour legend,
// fonts; the PNG (pngjs) is twice the SVG's size, its cells have the SVG's colours and its title is drawn;
// CSV rows / columns and JSON matrices hold the module's numbers. The reference numbers are computed here in Node by the module for
// the page's state; the aggregates are recomputed from them by hand (mean, max, rollout as Abnar & Zuidema).
// Harness: tests/browser/harness.js. Run: node --test --test-concurrency=1 tests/browser/export.test.js
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as chromatic from 'd3-scale-chromatic';
import { PNG } from 'pngjs';
import {
  useBrowser, after1, afterDraw, clean, errorText, shots,
} from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { paletteFrom, colorIndex } from '../../web/render/common.js';

const open = useBrowser();
const viridis = paletteFrom(chromatic.interpolateViridis);
const hex = (idx) => (idx < 0 ? '#d6d6d6' : `#${Array.from(viridis.rgb.subarray(3 * idx, 3 * idx + 3), (c) => c.toString(16).padStart(2, '0')).join('')}`);
let as;

before(async () => {
  as = await createAttnScope();
});

/** Clicks view × format's export button and returns the download: { name, body (Buffer) }. */
async function download(page, view, format, attention = null) {
  const which = attention ? `[data-attention="${attention}"]` : ':not([data-attention])';
  const [d] = await Promise.all([
    page.waitForEvent('download', { timeout: 15000 }),
    page.click(`button[data-export="${view}"][data-format="${format}"]${which}`),
  ]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path()) };
}

/** The module's trace for the page's current state (its seeded random model, rebuilt here in Node). */
/** The page's seeded random model for its trace state s, rebuilt here in Node (delete it after use). */
const modelOf = (s) => as.createModel({
  architecture: s.arch, tokenizer: s.tokenizer, dModel: s.dModel, numHeads: s.numHeads, numLayers: s.numLayers,
  dFF: s.dFF, normFirst: s.normFirst, activation: s.activation, positional: s.positional, positionalBase: s.base,
  attention: 'learned', seed: s.seed,
});

async function reference(page) {
  const s = await page.evaluate(() => window.__attnscope.traceState);
  const m = modelOf(s);
  try {
    const r = m.run(s.text, { trace: 'weights' });
    return {
      tokens: r.tokens, ids: Array.from(r.ids), n: r.tokens.length, H: s.numHeads, L: r.layers.length,
      layers: r.layers.map((ly) => Float32Array.from(ly.attention.weights)), causal: s.arch === 'decoder',
    };
  } finally {
    m.delete();
  }
}

const head = (ref, l, hd) => ref.layers[l].subarray(hd * ref.n * ref.n, (hd + 1) * ref.n * ref.n);
const maxOf = (a) => a.reduce((x, v) => Math.max(x, v), 0);

/** mean, max and rollout of layer l, by hand from the module's weights (Float64). */
function aggregate(ref, kind, l) {
  const { n, H } = ref;
  const mean = (w) => Float64Array.from({ length: n * n }, (_, k) => {
    let s = 0;
    for (let hd = 0; hd < H; hd++) s += w[hd * n * n + k];
    return s / H;
  });
  if (kind === 'mean') return mean(ref.layers[l]);
  if (kind === 'max') {
    return Float64Array.from({ length: n * n }, (_, k) => Math.max(...Array.from({ length: H }, (__, hd) => ref.layers[l][hd * n * n + k])));
  }
  let R = null; // rollout: Â = rownorm(mean + I), R_l = Â_l · R_{l−1}
  for (let ly = 0; ly <= l; ly++) {
    const A = mean(ref.layers[ly]);
    for (let i = 0; i < n; i++) {
      A[i * n + i] += 1;
      let sum = 0;
      for (let j = 0; j < n; j++) sum += A[i * n + j];
      for (let j = 0; j < n; j++) A[i * n + j] /= sum;
    }
    if (!R) R = A;
    else {
      const next = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) for (let j = 0; j < n; j++) next[i * n + j] += A[i * n + k] * R[k * n + j];
      R = next;
    }
  }
  return R;
}

/**
 * The SVG parsed by Chromium's DOMParser in a blank page of its own (parsed in the page under test, the SVG's
 * <style> would be refused by the page's CSP): root attributes, panels with their cells, legend, labels.
 */
async function parseSvg(page, text) {
  const blank = await page.context().newPage();
  try {
    return await blank.evaluate(svgFacts, text);
  } finally {
    await blank.close();
  }
}

function svgFacts(src) {
  const doc = new DOMParser().parseFromString(src, 'image/svg+xml');
  if (doc.querySelector('parsererror')) return { error: doc.querySelector('parsererror').textContent };
  const svg = doc.documentElement;
  const num = (el, a) => Number(el.getAttribute(a));
  return {
    root: svg.localName, width: num(svg, 'width'), height: num(svg, 'height'), font: svg.getAttribute('font-family'),
    title: svg.querySelector('title')?.textContent ?? null,
    cellsOutsidePanels: [...svg.querySelectorAll('rect.cell')].filter((r) => !r.closest('g.panel')).length,
    panels: [...svg.querySelectorAll('g.panel')].map((g) => ({
      layer: g.dataset.layer, head: g.dataset.head,
      labels: [...g.querySelectorAll(':scope > text')].map((t) => t.textContent),
      cells: [...g.querySelectorAll('rect.cell')].map((r) => ({ x: num(r, 'x'), y: num(r, 'y'), w: num(r, 'width'), fill: r.getAttribute('fill') })),
    })),
    legend: [...svg.querySelectorAll('g.legend')].map((g) => ({
      stops: g.querySelectorAll('stop').length, bar: !!g.querySelector('rect.legend-bar'), masked: !!g.querySelector('rect.legend-masked'),
      swatches: [...g.querySelectorAll('rect.swatch')].map((r) => r.getAttribute('fill')),
      texts: [...g.querySelectorAll('text')].map((t) => t.textContent),
    })),
    links: [...svg.querySelectorAll('line.link')].map((k) => ({
      p: Number(k.dataset.p), i: Number(k.dataset.i), j: Number(k.dataset.j), stroke: k.getAttribute('stroke'), opacity: num(k, 'stroke-opacity'),
    })),
    queries: [...svg.querySelectorAll('text.query')].map((t) => t.textContent),
  };
}

/** RFC 4180 CSV → rows of fields. */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let f = '';
  let q = false;
  for (let k = 0; k < text.length; k++) {
    const c = text[k];
    if (q) {
      if (c === '"' && text[k + 1] === '"') { f += '"'; k++; } else if (c === '"') q = false;
      else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; } else if (c === '\r' && text[k + 1] === '\n') { row.push(f); rows.push(row); row = []; f = ''; k++; } else f += c;
  }
  assert.equal(f, '', 'the CSV ends with CRLF');
  return rows;
}

/**
 * The PNG: 2 device pixels per SVG unit, each cell's centre pixel the SVG cell's fill, and the title's text
 * drawn (dark pixels where the SVG's title is: the page draws the SVG itself, labels included).
 */
function checkPng(png, svg, what) {
  const img = PNG.sync.read(png.body);
  writeFileSync(path.join(shots, `export-${what}.png`), png.body); // the last of each view, to look at
  assert.equal(img.width, 2 * svg.width, `${what}: PNG width is 2 × the SVG's`);
  assert.equal(img.height, 2 * svg.height, `${what}: PNG height is 2 × the SVG's`);
  let ink = 0; // the title: baseline at y = 23, 13 px font, from x = 10
  for (let y = 2 * 10; y < 2 * 26; y++) {
    for (let x = 2 * 10; x < Math.min(img.width, 2 * 300); x++) {
      const k = 4 * (y * img.width + x);
      if (img.data[k] < 110 && img.data[k + 1] < 110 && img.data[k + 2] < 110) ink += 1;
    }
  }
  assert.ok(ink > 200, `${what}: the PNG shows the title's text (${ink} dark pixels)`);
  for (const p of svg.panels) {
    for (const c of p.cells) {
      const x = Math.floor(2 * (c.x + c.w / 2));
      const y = Math.floor(2 * (c.y + c.w / 2));
      const k = 4 * (y * img.width + x);
      const got = `#${[0, 1, 2].map((d) => img.data[k + d].toString(16).padStart(2, '0')).join('')}`;
      if (got !== c.fill) assert.fail(`${what}: PNG pixel (${x}, ${y}) is ${got}, the SVG cell ${c.fill}`);
    }
  }
  return img;
}

/**
 * Checks the four exports of a grid view against `expected`: [{ layer, head, values (n·n), domain }] in panel
 * order, `masked(k)` for grey cells. Returns the parsed SVG.
 */
async function checkGrid(page, view, ref, expected, { aggregateName = null, masked = () => false } = {}) {
  const { n } = ref;
  const svgFile = await download(page, view, 'svg');
  assert.match(svgFile.name, new RegExp(`^attnscope-${view}.*\\.svg$`));
  const svg = await parseSvg(page, svgFile.body.toString('utf8'));
  assert.equal(svg.error, undefined, `${view}: the SVG parses`);
  assert.equal(svg.root, 'svg');
  assert.match(svg.font, /DejaVu Sans/, 'fonts named');
  assert.equal(svg.cellsOutsidePanels, 0);
  assert.equal(svg.panels.length, expected.length, `${view}: one panel per matrix`);
  expected.forEach((e, p) => {
    const panel = svg.panels[p];
    assert.equal(panel.layer, String(e.layer));
    assert.equal(panel.head, String(e.head));
    assert.equal(panel.cells.length, n * n, `${view} panel ${p}: one rect per matrix entry`);
    panel.cells.forEach((c, k) => {
      const want = hex(colorIndex(e.values[k], e.domain[0], e.domain[1], masked(k)));
      if (c.fill !== want) assert.fail(`${view} panel ${p} cell ${k}: fill ${c.fill}, the module's ${e.values[k]} gives ${want}`);
    });
  });
  assert.equal(svg.legend.length, 1, 'a colour legend');
  assert.equal(svg.legend[0].stops, 17);
  assert.ok(svg.legend[0].bar);
  assert.equal(svg.legend[0].masked, expected.some((e) => e.values.some((_, k) => masked(k))), 'the masked swatch when cells are masked');
  checkPng(await download(page, view, 'png'), svg, view);

  const csv = parseCsv((await download(page, view, 'csv')).body.toString('utf8'));
  assert.deepEqual(csv[0], ['layer', 'head', 'query_index', 'query_token', ...ref.tokens], 'CSV header: the key tokens');
  assert.equal(csv.length, 1 + expected.length * n, 'CSV: one line per panel and query');
  expected.forEach((e, p) => {
    for (let i = 0; i < n; i++) {
      const row = csv[1 + p * n + i];
      assert.deepEqual(row.slice(0, 4), [String(e.layer), String(aggregateName ?? e.head), String(i), ref.tokens[i]]);
      assert.equal(row.length, 4 + n);
      for (let j = 0; j < n; j++) {
        const d = Math.abs(Number(row[4 + j]) - e.values[i * n + j]);
        if (!(d <= 1e-6)) assert.fail(`${view} CSV panel ${p} [${i}, ${j}]: ${row[4 + j]} vs the module's ${e.values[i * n + j]}`);
      }
    }
  });

  const json = JSON.parse((await download(page, view, 'json')).body.toString('utf8'));
  assert.equal(json.format, 'attnscope-figure');
  assert.equal(json.view, view);
  assert.deepEqual(json.tokens, ref.tokens);
  assert.deepEqual(json.ids, ref.ids);
  assert.equal(json.panels.length, expected.length);
  expected.forEach((e, p) => {
    const jp = json.panels[p];
    assert.deepEqual(jp.shape, [n, n]);
    assert.equal(jp.layer, e.layer);
    assert.equal(aggregateName ? jp.aggregate : jp.head, aggregateName ?? e.head);
    assert.deepEqual(jp.domain.map(Math.fround), e.domain.map(Math.fround));
    const d = Math.max(...jp.values.flat().map((v, k) => Math.abs(v - e.values[k])));
    assert.ok(d <= 1e-6, `${view} JSON panel ${p}: the module's values (max diff ${d})`);
  });
  return svg;
}

test('export: heatmap, aggregates and model view as SVG, PNG, CSV and JSON hold the module\'s numbers', async () => {
  const { page, rec } = await open();
  await after1(page, () => page.fill('#text', 'Cats, dogs and birds sing'));
  const ref = await reference(page);
  assert.deepEqual(ref.tokens, await page.evaluate(() => window.__attnscope.trace.tokens));
  const { n, H } = ref;
  assert.ok(ref.tokens.includes(','), 'a comma token, quoted in the CSV');

  // each head of layer 0, one colour domain: [0, the layer's largest weight]
  const hi0 = maxOf(ref.layers[0]);
  const heads = Array.from({ length: H }, (_, hd) => ({ layer: 0, head: hd, values: head(ref, 0, hd), domain: [0, hi0] }));
  const svg = await checkGrid(page, 'heatmap', ref, heads);
  assert.deepEqual(svg.panels[0].labels.slice(1, 1 + n), ref.tokens, 'query tokens beside the panel');

  // layer 1, then the aggregates: one map each, domain [0, its largest value]
  await afterDraw(page, () => page.locator('#attention-view .tab').nth(1).click());
  await page.waitForFunction(() => window.__attnscope.state.layer === 1 && !document.documentElement.dataset.busy);
  await checkGrid(page, 'heatmap', ref, Array.from({ length: H }, (_, hd) => ({ layer: 1, head: hd, values: head(ref, 1, hd), domain: [0, maxOf(ref.layers[1])] })));
  for (const kind of ['mean', 'max', 'rollout']) {
    await afterDraw(page, () => page.selectOption('#agg', kind));
    const values = aggregate(ref, kind, 1);
    await checkGrid(page, 'heatmap', ref, [{ layer: 1, head: kind, values, domain: [0, maxOf(values)] }], { aggregateName: kind });
  }

  // the model view: every layer × head, each thumbnail scaled to its own largest weight
  const all = [];
  for (let l = 0; l < ref.L; l++) for (let hd = 0; hd < H; hd++) all.push({ layer: l, head: hd, values: head(ref, l, hd), domain: [0, maxOf(head(ref, l, hd))] });
  await checkGrid(page, 'overview', ref, all);

  // "Hide weights below" 0.15 and "Top-k per query" 2: the exported heads hold what the page shows — a weight
  // kept when it reaches 0.15 and is among its row's 2 largest (ties: the lower key), else 0
  await afterDraw(page, () => page.selectOption('#agg', 'heads'));
  await afterDraw(page, () => page.fill('#thr', '0.15'));
  await afterDraw(page, () => page.fill('#topk', '2'));
  const filtered = JSON.parse((await download(page, 'heatmap', 'json')).body.toString('utf8'));
  assert.equal(filtered.panels.length, H);
  filtered.panels.forEach((p, hd) => {
    const w = head(ref, 1, hd);
    for (let i = 0; i < n; i++) {
      const order = [...Array(n).keys()].sort((a, b) => (w[i * n + b] - w[i * n + a]) || (a - b));
      for (let j = 0; j < n; j++) {
        const kept = w[i * n + j] >= 0.15 && order.indexOf(j) < 2;
        const want = kept ? w[i * n + j] : 0;
        if (Math.abs(p.values[i][j] - want) > 1e-6) assert.fail(`filtered head ${hd} [${i}, ${j}]: ${p.values[i][j]}, expected ${want}`);
      }
    }
  });
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('export: a causal model\'s masked cells are grey, and the lines view exports its links', async () => {
  const { page, rec } = await open('#arch=decoder');
  await after1(page, () => page.fill('#text', 'one two three four five six'));
  const ref = await reference(page);
  assert.equal(ref.causal, true);
  const { n, H } = ref;
  const hi0 = maxOf(ref.layers[0]);
  await checkGrid(page, 'heatmap', ref, Array.from({ length: H }, (_, hd) => ({ layer: 0, head: hd, values: head(ref, 0, hd), domain: [0, hi0] })), {
    masked: (k) => k % n > Math.floor(k / n), // key after query: blocked
  });

  // lines: one link per (head, query, key) with weight ≥ 0.004, coloured by head, opacity = weight × 0.9
  const svgFile = await download(page, 'lines', 'svg');
  const svg = await parseSvg(page, svgFile.body.toString('utf8'));
  assert.equal(svg.error, undefined);
  assert.match(svg.font, /DejaVu Sans/);
  assert.equal(svg.queries.length, n);
  const want = [];
  for (let hd = 0; hd < H; hd++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const w = head(ref, 0, hd)[i * n + j];
        if (w >= 0.004) want.push({ p: hd, i, j, stroke: chromatic.schemeTableau10[hd % 10], opacity: Number(Math.min(1, w * 0.9).toFixed(4)) });
      }
    }
  }
  assert.ok(want.every((k) => k.j <= k.i), 'a causal model links no key after its query');
  assert.equal(svg.links.length, want.length, 'one line per link above the threshold');
  svg.links.forEach((k, x) => {
    assert.deepEqual([k.p, k.i, k.j, k.stroke], [want[x].p, want[x].i, want[x].j, want[x].stroke], `link ${x}`);
    assert.ok(Math.abs(k.opacity - want[x].opacity) <= 1e-4, `link ${x} opacity ${k.opacity} vs ${want[x].opacity}`);
  });
  assert.deepEqual(svg.legend[0].swatches, chromatic.schemeTableau10.slice(0, H), 'a legend swatch per head');
  checkPng(await download(page, 'lines', 'png'), svg, 'lines');
  const csv = parseCsv((await download(page, 'lines', 'csv')).body.toString('utf8'));
  assert.equal(csv.length, 1 + H * n);
  const json = JSON.parse((await download(page, 'lines', 'json')).body.toString('utf8'));
  assert.equal(json.view, 'lines');
  json.panels.forEach((p, hd) => {
    const d = Math.max(...p.values.flat().map((v, k) => Math.abs(v - head(ref, 0, hd)[k])));
    assert.ok(d <= 1e-6, `lines JSON head ${hd} (max diff ${d})`);
    assert.ok(Math.max(...csv.slice(1 + hd * n, 1 + (hd + 1) * n).flatMap((r, i) => r.slice(4).map((v, j) => Math.abs(Number(v) - head(ref, 0, hd)[i * n + j])))) <= 1e-6);
  });
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('export: an encoder–decoder exports its cross-attention heatmap and lines and the encoder grid', async () => {
  const { page, rec } = await open('#arch=encoder-decoder');
  assert.equal(await page.isHidden('#export-cross'), false, 'the cross-attention exports are offered');
  const s = await page.evaluate(() => window.__attnscope.traceState);
  const m = modelOf(s);
  let r;
  try {
    r = m.run({ source: s.source, target: s.target }, { trace: 'weights' });
  } finally {
    m.delete();
  }
  const n = r.tokens.length;
  const src = r.source.tokens.length;
  const H = s.numHeads;
  const layer = await page.evaluate(() => window.__attnscope.state.layer);
  // cross-attention heatmap of the shown layer: every selected head [n, src], keys = the source tokens
  const heat = await download(page, 'heatmap', 'json', 'cross');
  assert.match(heat.name, /^attnscope-heatmap-cross-layer\d+\.json$/);
  const json = JSON.parse(heat.body.toString('utf8'));
  assert.equal(json.attention, 'cross');
  assert.deepEqual(json.tokens, r.tokens);
  assert.deepEqual(json.keyTokens, r.source.tokens);
  assert.ok(json.panels.length >= 1);
  for (const jp of json.panels) {
    assert.deepEqual(jp.shape, [n, src]);
    const want = r.layers[layer].cross.weights.subarray(jp.head * n * src, (jp.head + 1) * n * src);
    const d = Math.max(...jp.values.flat().map((v, k) => Math.abs(v - want[k])));
    assert.ok(d <= 1e-6, `cross heatmap head ${jp.head}: max diff ${d}`);
  }
  const csv = parseCsv((await download(page, 'lines', 'csv', 'cross')).body.toString('utf8'));
  assert.deepEqual(csv[0].slice(4), r.source.tokens, 'lines CSV: the source tokens are the columns');
  // the encoder's grid: every encoder layer × head of the source's self-attention
  const grid = JSON.parse((await download(page, 'overview', 'json', 'encoder')).body.toString('utf8'));
  assert.equal(grid.attention, 'encoder');
  assert.equal(grid.panels.length, r.source.layers.length * H);
  for (const jp of grid.panels) {
    const want = r.source.layers[jp.layer].attention.weights.subarray(jp.head * src * src, (jp.head + 1) * src * src);
    const d = Math.max(...jp.values.flat().map((v, k) => Math.abs(v - want[k])));
    assert.ok(d <= 1e-6, `encoder grid L${jp.layer} H${jp.head}: max diff ${d}`);
  }
  const svg = (await download(page, 'overview', 'svg', 'cross')).body.toString('utf8');
  assert.match(svg, /^<svg|^<\?xml/);
  assert.equal(await errorText(page), null);
  clean(rec);
});
