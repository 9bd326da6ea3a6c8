// Real-browser tests of the page's attention-family views (issue 13): additive (Bahdanau) attention,
// Nadaraya–Watson kernel regression, the model view (every layer × head) and the aggregates (mean / max
// over heads, rollout, entropy, mean distance, threshold / top-k). Same harness as page.test.js
// (tests/browser/harness.js): playwright-core + Debian's chromium; every page fails its
// test on a console error, a pageerror, a dialog or an off-origin request. Numbers on screen are compared
// with the module's own results (imported in the page from /bindings/js/index.js) and with plain float64
// JS written here, independently of web/aggregates.js.
// Run: node --test --test-concurrency=1 tests/browser/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  useBrowser, afterDraw, clean, shots,
} from './harness.js';

const openPage = useBrowser();

/** Opens the page and waits for the model trace and both family views. */
const open = (hash = '', viewport = undefined) => openPage(hash, viewport, (page) => page.waitForFunction(() => {
  const a = window.__attnscope;
  const d = document.documentElement.dataset;
  return a && a.runs > 0 && !d.busy && a.family.additive.runs > 0 && a.family.regression.runs > 0
    && !d.additiveBusy && !d.regressionBusy;
}, null, { timeout: 30000 }));

/** Runs `action` and waits until the family view `kind` has drawn a newer result. */
async function afterFamily(page, kind, action) {
  const runs = await page.evaluate((k) => window.__attnscope.family[k].runs, kind);
  await action();
  await page.waitForFunction(([k, n]) => window.__attnscope.family[k].runs > n && !document.documentElement.dataset[`${k}Busy`], [kind, runs], { timeout: 30000 });
}

const maxDiff = (a, b) => {
  assert.equal(a.length, b.length, 'same length');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

/** Every cell of a family table as shown: data-value (the full float) per td. */
const tableValues = (page, name) => page.locator(`#additive-view table[data-matrix="${name}"] td`)
  .evaluateAll((tds) => tds.map((td) => (td.dataset.value === '-Infinity' ? -Infinity : Number(td.dataset.value))));

test('family: additive attention shows the module\'s scores, weights, output and tanh features', async () => {
  const { page, rec } = await open();
  const check = async (nq, nk, hidden, validLen) => {
    const r = await page.evaluate(() => {
      const x = window.__attnscope.family.additive.result;
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]));
    });
    assert.deepEqual([r.nq, r.nk, r.hidden, r.validLen], [nq, nk, hidden, validLen]);
    // the shown numbers are the module's: call as.additiveAttention on the same inputs in the page
    const direct = await page.evaluate(async (a) => {
      const { createAttnScope } = await import('/bindings/js/index.js');
      const as = await createAttnScope({ relaxedSimd: false }); // as the page's workers: Node's numbers, bit for bit
      const f32 = (v) => Float32Array.from(v);
      const out = as.additiveAttention({
        queries: f32(a.queries), keys: f32(a.keys), values: f32(a.values), nq: a.nq, nk: a.nk, dq: a.dq, dk: a.dk, dv: a.dv,
        hidden: a.hidden, wq: f32(a.wq), wk: f32(a.wk), wv: f32(a.wv), validLen: a.validLen,
      });
      return { scores: Array.from(out.scores), weights: Array.from(out.weights), output: Array.from(out.output) };
    }, r);
    for (const key of ['scores', 'weights', 'output']) {
      assert.deepEqual(await tableValues(page, key), direct[key], `${key} on screen = as.additiveAttention`);
    }
    // independent float64 check: features = tanh(q Wq + k Wk), score = wv · features, masked softmax
    const { dq, dk, dv } = r;
    let featErr = 0;
    let scoreErr = 0;
    let outErr = 0;
    for (let i = 0; i < nq; i++) {
      const e = [];
      for (let j = 0; j < nk; j++) {
        let sc = 0;
        for (let u = 0; u < hidden; u++) {
          let a = 0;
          for (let c = 0; c < dq; c++) a += r.queries[i * dq + c] * r.wq[c * hidden + u];
          for (let c = 0; c < dk; c++) a += r.keys[j * dk + c] * r.wk[c * hidden + u];
          const f = Math.tanh(a);
          featErr = Math.max(featErr, Math.abs(f - r.features[(i * nk + j) * hidden + u]));
          sc += r.wv[u] * f;
        }
        if (j < validLen) scoreErr = Math.max(scoreErr, Math.abs(sc - direct.scores[i * nk + j]));
        else assert.equal(direct.scores[i * nk + j], -Infinity, `score [${i}, ${j}] past validLen is −∞`);
        e.push(j < validLen ? sc : -Infinity);
      }
      const mx = Math.max(...e);
      const ex = e.map((s) => (s === -Infinity ? 0 : Math.exp(s - mx)));
      const z = ex.reduce((p, q) => p + q, 0);
      for (let c = 0; c < dv; c++) {
        let o = 0;
        for (let j = 0; j < nk; j++) o += (z ? ex[j] / z : 0) * r.values[j * dv + c];
        outErr = Math.max(outErr, Math.abs(o - direct.output[i * dv + c]));
      }
    }
    assert.ok(featErr < 2e-6, `tanh features (read through w_v = unit vectors) vs float64: ${featErr}`);
    assert.ok(scoreErr < 1e-5, `scores vs float64: ${scoreErr}`);
    assert.ok(outErr < 1e-5, `output vs float64: ${outErr}`);
    // the features table shows query 0's [nk, hidden] block
    const shownFeat = await tableValues(page, 'features');
    assert.ok(maxDiff(shownFeat, r.features.slice(0, nk * hidden)) === 0, 'features table = query 0\'s features');
    // blocked keys are drawn as masked cells
    assert.equal(await page.locator('#additive-view table[data-matrix="scores"] td.masked').count(), nq * (nk - validLen));
  };
  await check(3, 6, 4, 4); // the defaults: two keys past validLen
  await afterFamily(page, 'additive', () => page.fill('#adNk', '7'));
  await afterFamily(page, 'additive', () => page.fill('#adHidden', '5'));
  await afterFamily(page, 'additive', () => page.fill('#adValid', '7'));
  await check(3, 7, 5, 7);
  await afterFamily(page, 'additive', () => page.fill('#adValid', '0'));
  await check(3, 7, 5, 0); // every key blocked: zero weights and output, never NaN
  assert.ok((await tableValues(page, 'weights')).every((v) => v === 0));
  assert.ok((await tableValues(page, 'output')).every((v) => v === 0));
  // picking another query shows its features
  await afterFamily(page, 'additive', () => page.fill('#adValid', '3'));
  await page.locator('#additive-view select').selectOption('2');
  const f2 = await page.evaluate(() => Array.from(window.__attnscope.family.additive.result.features.subarray(2 * 7 * 5, 3 * 7 * 5)));
  assert.equal(maxDiff(await tableValues(page, 'features'), f2), 0);
  assert.match(await page.evaluate(() => location.hash), /adNk=7.*adHidden=5.*adValid=3.*adQ=2/);
  clean(rec);
  await page.close();
});

test('family: kernel regression follows the bandwidth slider with the module\'s prediction', async (t) => {
  const { page, rec } = await open();
  const check = async (w) => {
    const r = await page.evaluate(() => {
      const x = window.__attnscope.family.regression.result;
      return { w: x.w, xTrain: Array.from(x.xTrain), yTrain: Array.from(x.yTrain), xQuery: Array.from(x.xQuery), yTruth: Array.from(x.yTruth),
        yPred: Array.from(x.yPred), shown: JSON.parse(document.querySelector('#regression-view .regression').dataset.pred) };
    });
    assert.equal(r.w, w);
    assert.equal(r.xTrain.length, 50);
    assert.ok(r.xTrain.every((x, i) => x >= 0 && x < 5 && (i === 0 || x >= r.xTrain[i - 1])), 'sorted x in [0, 5)');
    // the truth is 2 sin x + x^0.8; the noise has the stated spread (σ = 0.5) around it
    const res = r.xTrain.map((x, j) => r.yTrain[j] - (2 * Math.sin(x) + x ** 0.8));
    const sd = Math.sqrt(res.reduce((p, q) => p + q * q, 0) / res.length);
    assert.ok(sd > 0.3 && sd < 0.75, `noise σ ≈ 0.5 (${sd})`);
    // on screen = as.kernelRegression, called here directly
    const direct = await page.evaluate(async (a) => {
      const { createAttnScope } = await import('/bindings/js/index.js');
      const as = await createAttnScope({ relaxedSimd: false }); // as the page's workers: Node's numbers, bit for bit
      const out = as.kernelRegression({ xTrain: Float32Array.from(a.xTrain), yTrain: Float32Array.from(a.yTrain), xQuery: Float32Array.from(a.xQuery), w: a.w });
      return Array.from(out.yPred);
    }, r);
    assert.deepEqual(r.shown, direct, 'the drawn prediction is the module\'s');
    // and a float64 Nadaraya–Watson written here
    const nw = r.xQuery.map((x) => {
      const e = r.xTrain.map((xt) => -(((x - xt) * w) ** 2) / 2);
      const mx = Math.max(...e);
      const ex = e.map((v) => Math.exp(v - mx));
      const z = ex.reduce((p, q) => p + q, 0);
      return ex.reduce((p, q, j) => p + (q / z) * r.yTrain[j], 0);
    });
    const err = maxDiff(direct, nw);
    assert.ok(err < 1e-4, `prediction vs float64 (w = ${w}): ${err}`);
    const pts = await page.locator('#regression-view polyline.pred').getAttribute('points');
    assert.equal(pts.split(' ').length, 50, 'one curve point per query');
    assert.equal(await page.locator('#regression-view circle').count(), 50, 'the 50 training points');
    assert.equal(await page.getAttribute('#regression-view canvas[data-kind="kernel"]', 'data-rows'), '50');
    return r;
  };
  const at1 = await check(1);
  // drag the slider across its range: it recomputes while dragging, at most one request in flight
  const slider = page.locator('#krW');
  await slider.scrollIntoViewIfNeeded();
  const box = await slider.boundingBox();
  const before1 = await page.evaluate(() => window.__attnscope.family.regression.runs);
  await page.evaluate(() => {
    window.__gaps = [];
    let last = performance.now();
    const tick = (now) => { window.__gaps.push(now - last); last = now; if (window.__gaps.length < 600) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await page.mouse.move(box.x + 4, box.y + box.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 40; k++) await page.mouse.move(box.x + 4 + ((box.width - 8) * k) / 80, box.y + box.height / 2);
  await page.mouse.up();
  await page.waitForFunction(() => !document.documentElement.dataset.regressionBusy && window.__attnscope.family.regression.params.w === window.__attnscope.state.krW);
  await page.waitForTimeout(100);
  const drag = await page.evaluate(() => ({ runs: window.__attnscope.family.regression.runs, w: window.__attnscope.state.krW, longest: Math.max(...window.__gaps) }));
  assert.ok(drag.runs - before1 >= 3, `recomputed while dragging (${drag.runs - before1} redraws)`);
  assert.ok(drag.w > 9 && drag.w < 16, `the slider moved to the middle (w = ${drag.w})`);
  assert.equal(await page.textContent('#krW-out'), drag.w.toFixed(1));
  t.diagnostic(`slider drag: ${drag.runs - before1} redraws, longest frame ${drag.longest.toFixed(1)} ms`);
  const atW = await check(drag.w);
  // a larger w is a narrower kernel: the prediction follows the noisy points, so it wiggles more
  const variation = (y) => y.slice(1).reduce((p, v, i) => p + Math.abs(v - y[i]), 0);
  assert.ok(variation(atW.yPred) > 1.5 * variation(at1.yPred), `total variation ${variation(atW.yPred)} (w = ${drag.w}) vs ${variation(at1.yPred)} (w = 1)`);
  await page.screenshot({ path: path.join(shots, 'desktop-regression-drag.png') });
  clean(rec);
  await page.close();
});

test('family: the model view draws every layer × head of 12 × 12 and opens a head on click', async (t) => {
  const text = 'The animal did not cross the street because it was too tired';
  const { page, rec } = await open(`#numLayers=12&numHeads=12&dModel=48&dFF=96&text=${encodeURIComponent(text)}`);
  const canvas = page.locator('#model-view canvas.mv-canvas');
  assert.equal(await canvas.getAttribute('data-layers'), '12');
  assert.equal(await canvas.getAttribute('data-heads'), '12');
  // every pixel of every tile is its cell's weight on viridis scaled to the head's own maximum, the
  // head's maximum is viridis' top colour, and the gaps are white
  const tiles = await gridPixels(page, 'self');
  assert.equal(tiles.tiles, 144);
  assert.equal(tiles.wrong, 0, `${tiles.wrong} of ${tiles.cells} cells drawn in another colour (first: ${tiles.first})`);
  assert.deepEqual(tiles.maxColours, ['253,231,37'], 'each head\'s maximum is viridis\' top colour');
  assert.equal(tiles.gapsWhite, true, 'the gaps between thumbnails are white');
  // (how long drawing all 144 heads takes is measured by the page bench: npm run bench:page -- --only modelview)
  // entropy and distance tables = a float64 computation here on the same trace
  const { layers, n } = await page.evaluate(() => ({
    n: window.__attnscope.trace.n, layers: window.__attnscope.trace.layers.map((ly) => Array.from(ly.attention.weights)),
  }));
  const shownEnt = await page.locator('#model-view table[data-metric="entropy"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const shownDist = await page.locator('#model-view table[data-metric="distance"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const ent = [];
  const dist = [];
  for (const w of layers) {
    for (let hd = 0; hd < 12; hd++) {
      let e = 0;
      let d = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const v = w[hd * n * n + i * n + j];
          if (v > 0) e -= v * Math.log(v);
          d += v * Math.abs(i - j);
        }
      }
      ent.push(e / n);
      dist.push(d / n);
    }
  }
  assert.ok(maxDiff(shownEnt, ent) < 1e-9, 'entropy table');
  assert.ok(maxDiff(shownDist, dist) < 1e-9, 'distance table');
  // click layer 7, head 5 (0-based 6, 4): the attention view opens on it
  await canvas.scrollIntoViewIfNeeded();
  const cb = await canvas.boundingBox();
  const { width: cw, height: ch, pitch } = tiles;
  await afterDraw(page, () => page.mouse.click(cb.x + ((4 * pitch + n / 2) / cw) * cb.width, cb.y + ((6 * pitch + n / 2) / ch) * cb.height));
  const st = await page.evaluate(() => window.__attnscope.state);
  assert.equal(st.layer, 6);
  assert.equal(st.heads, '4');
  const shown = page.locator('#attention-view canvas[data-kind="attention"]');
  assert.equal(await shown.count(), 1);
  assert.equal(await shown.getAttribute('data-layer'), '6');
  assert.equal(await shown.getAttribute('data-head'), '4');
  assert.equal(await page.getAttribute('#attention-view .tab[aria-selected="true"]', 'data-layer'), '6');
  // and a table cell opens its head too (keyboard path)
  await page.locator('#model-view table[data-metric="distance"] td[data-layer="11"][data-head="11"]').focus();
  await afterDraw(page, () => page.keyboard.press('Enter'));
  assert.deepEqual(await page.evaluate(() => [window.__attnscope.state.layer, window.__attnscope.state.heads]), [11, '11']);
  clean(rec);
  await page.close();
});

test('family: an encoder–decoder model view shows encoder, decoder and cross-attention grids', async () => {
  const { page, rec } = await open('#arch=encoder-decoder&numLayers=3');
  const info = await page.evaluate(() => {
    const tr = window.__attnscope.trace;
    const pack = (layers, key) => layers.map((ly) => Array.from(ly[key].weights));
    return {
      n: tr.n, m: tr.source.n, H: tr.numHeads,
      cross: pack(tr.layers, 'cross'),
      grids: [...document.querySelectorAll('#model-view canvas.mv-canvas')].map((c) => ({ ...c.dataset })),
    };
  });
  assert.deepEqual(info.grids.map((g) => g.section), ['encoder', 'self', 'cross']);
  const shape = (g) => [g.layers, g.heads, g.n, g.m].join('×');
  assert.deepEqual(info.grids.map(shape), [`3×4×${info.m}×${info.m}`, `3×4×${info.n}×${info.n}`, `3×4×${info.n}×${info.m}`]);
  for (const key of ['encoder', 'self', 'cross']) {
    const g = await gridPixels(page, key);
    assert.equal(g.tiles, 12, `${key}: 3 layers × 4 heads`);
    assert.equal(g.wrong, 0, `${key}: ${g.wrong} of ${g.cells} cells in another colour (first: ${g.first})`);
    assert.equal(g.gapsWhite, true, `${key}: white gaps`);
  }
  // cross-attention entropy: rows of the target over the source keys, float64 here; no distance table
  const shown = await page.locator('#model-view table[data-section="cross"][data-metric="entropy"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const want = [];
  for (const w of info.cross) {
    for (let hd = 0; hd < info.H; hd++) {
      let e = 0;
      for (let k = hd * info.n * info.m; k < (hd + 1) * info.n * info.m; k++) if (w[k] > 0) e -= w[k] * Math.log(w[k]);
      want.push(e / info.n);
    }
  }
  assert.ok(maxDiff(shown, want) < 1e-9, 'cross-attention entropy');
  assert.equal(await page.locator('#model-view table[data-section="cross"][data-metric="distance"]').count(), 0);
  assert.equal(await page.locator('#model-view table[data-section="encoder"][data-metric="distance"]').count(), 1);
  // clicking a cross-attention head opens that layer and head (the attention view shows its cross map)
  await afterDraw(page, () => page.locator('#model-view table[data-section="cross"][data-metric="entropy"] td[data-layer="2"][data-head="1"]').click());
  assert.deepEqual(await page.evaluate(() => [window.__attnscope.state.layer, window.__attnscope.state.heads]), [2, '1']);
  assert.equal(await page.getAttribute('#attention-view canvas[data-kind="cross"]', 'data-head'), '1');
  // the encoder grid does not open anything (the attention view shows the decoder's layers)
  assert.equal(await page.locator('#model-view canvas[data-section="encoder"].opens').count(), 0);
  clean(rec);
  await page.close();
});

/**
 * Checks a model-view grid's pixels against the trace: each (layer, head) tile at its place, each cell
 * coloured by viridis at weight / head maximum. The section's weights are read from the trace here.
 */
function gridPixels(page, section) {
  return page.evaluate(async (key) => {
    const { weights: viridis } = await import('/web/colors.js');
    const c = document.querySelector(`#model-view canvas[data-section="${key}"]`);
    const [n, m, gap, H] = ['n', 'm', 'gap', 'heads'].map((k) => Number(c.dataset[k]));
    const tr = window.__attnscope.trace;
    const layers = key === 'encoder' ? tr.source.layers.map((ly) => ly.attention.weights)
      : tr.layers.map((ly) => (key === 'cross' ? ly.cross : ly.attention).weights);
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const at = (x, y) => { const p = (y * c.width + x) * 4; return [px[p], px[p + 1], px[p + 2]].join(','); };
    const lut = (t) => [0, 1, 2].map((k) => viridis.rgb[t * 3 + k]).join(',');
    let wrong = 0;
    let cells = 0;
    let first = null;
    let tiles = 0;
    const maxColours = new Set();
    const inTile = new Uint8Array(c.width * c.height);
    layers.forEach((w, l) => {
      for (let hd = 0; hd < H; hd++) {
        tiles += 1;
        const head = w.subarray(hd * n * m, (hd + 1) * n * m);
        const mx = Math.max(...head);
        const x0 = hd * (m + gap);
        const y0 = l * (n + gap);
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < m; j++) {
            cells += 1;
            inTile[(y0 + i) * c.width + x0 + j] = 1;
            const got = at(x0 + j, y0 + i);
            const want = lut(Math.round((head[i * m + j] / mx) * 255));
            if (got !== want && wrong++ === 0) first = `L${l} H${hd} [${i}, ${j}] ${got} ≠ ${want}`;
            if (head[i * m + j] === mx) maxColours.add(got);
          }
        }
      }
    });
    let gapsWhite = true;
    for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) if (!inTile[y * c.width + x] && at(x, y) !== '255,255,255') gapsWhite = false;
    return { tiles, cells, wrong, first, maxColours: [...maxColours], gapsWhite, width: c.width, height: c.height, n, m, pitch: n + gap };
  }, section);
}

/** Plain float64 aggregates of [H, n, n] weights, written here apart from web/aggregates.js. */
function plainAggregate(kind, layers, layer, H, n) {
  const cell = (w, hd, i, j) => w[hd * n * n + i * n + j];
  const mean = (w) => Array.from({ length: n * n }, (_, c) => {
    let s = 0;
    for (let hd = 0; hd < H; hd++) s += cell(w, hd, Math.floor(c / n), c % n);
    return s / H;
  });
  if (kind === 'mean') return mean(layers[layer]);
  if (kind === 'max') {
    return Array.from({ length: n * n }, (_, c) => Math.max(...Array.from({ length: H }, (__, hd) => cell(layers[layer], hd, Math.floor(c / n), c % n))));
  }
  // rollout: R = Â_layer · … · Â_0, Â = rownorm(mean + I)
  let R = null;
  for (let l = 0; l <= layer; l++) {
    const m = mean(layers[l]);
    const A = [];
    for (let i = 0; i < n; i++) {
      const row = m.slice(i * n, (i + 1) * n).map((v, j) => v + (i === j ? 1 : 0));
      const s = row.reduce((p, q) => p + q, 0);
      A.push(row.map((v) => v / s));
    }
    R = R ? A.map((row) => Array.from({ length: n }, (_, j) => row.reduce((p, a, k) => p + a * R[k][j], 0))) : A;
  }
  return R.flat();
}

function plainFilter(values, n, thr, topk) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = values.slice(i * n, (i + 1) * n);
    const kth = topk > 0 ? [...row].sort((a, b) => b - a)[topk - 1] : -Infinity;
    out.push(...row.map((v) => (v >= thr && v >= kth ? v : 0)));
  }
  return out;
}

test('family: mean, max and rollout maps and the weak-link filter equal a plain computation on the trace', async () => {
  const { page, rec } = await open(`#numLayers=3&text=${encodeURIComponent('a small cat sat on the warm mat today')}`);
  const { layers, n, H } = await page.evaluate(() => {
    const tr = window.__attnscope.trace;
    return { n: tr.n, H: tr.numHeads, layers: tr.layers.map((ly) => Array.from(ly.attention.weights)) };
  });
  assert.equal(await page.locator('#aggregate-view canvas').count(), 0, 'each head by default: no aggregate map');
  const shownAgg = () => page.locator('#aggregate-view canvas[data-kind="aggregate"]').evaluate((c) => ({
    agg: c.dataset.agg, layer: Number(c.dataset.layer), values: JSON.parse(c.dataset.values),
  }));
  await afterDraw(page, () => page.locator('#attention-view .tab[data-layer="2"]').click());
  for (const kind of ['mean', 'max', 'rollout']) {
    await afterDraw(page, () => page.selectOption('#agg', kind));
    const got = await shownAgg();
    assert.equal(got.agg, kind);
    assert.equal(got.layer, 2);
    const err = maxDiff(got.values, plainAggregate(kind, layers, 2, H, n));
    assert.ok(err < 1e-6, `${kind} at layer 3: max diff ${err}`);
    if (kind !== 'max') {
      for (let i = 0; i < n; i++) {
        const s = got.values.slice(i * n, (i + 1) * n).reduce((p, q) => p + q, 0);
        assert.ok(Math.abs(s - 1) < 1e-5, `${kind} row ${i} sums to 1 (${s})`);
      }
    }
  }
  // rollout through layer 1 is just (mean + I) renormalised
  await afterDraw(page, () => page.locator('#attention-view .tab[data-layer="0"]').click());
  assert.ok(maxDiff((await shownAgg()).values, plainAggregate('rollout', layers, 0, H, n)) < 1e-6);
  // threshold and top-k hide weak links in the aggregate and in every per-head map
  await afterDraw(page, () => page.selectOption('#agg', 'mean'));
  await afterDraw(page, () => page.fill('#thr', '0.1'));
  await afterDraw(page, () => page.fill('#topk', '3'));
  const mean0 = plainAggregate('mean', layers, 0, H, n);
  const want = plainFilter(mean0, n, 0.1, 3);
  const got = (await shownAgg()).values;
  assert.ok(maxDiff(got, want) < 1e-6, 'filtered mean map');
  const hiddenCount = want.filter((v, c) => v === 0 && mean0[c] !== 0).length;
  assert.match(await page.textContent('#aggregate-view .note'), new RegExp(`\\(${hiddenCount} links\\)`));
  const heads = await page.locator('#attention-view canvas[data-kind="attention"]').evaluateAll((cs) => cs.map((c) => JSON.parse(c.dataset.values)));
  assert.equal(heads.length, H);
  heads.forEach((v, hd) => {
    const raw = layers[0].slice(hd * n * n, (hd + 1) * n * n);
    assert.ok(maxDiff(v, plainFilter(raw, n, 0.1, 3)) < 1e-7, `head ${hd} filtered`);
    for (let i = 0; i < n; i++) assert.ok(v.slice(i * n, (i + 1) * n).filter((x) => x > 0).length <= 3, `head ${hd} row ${i}: at most 3 links`);
  });
  // the filters live in the URL; clearing them restores the module's weights exactly
  assert.match(await page.evaluate(() => location.hash), /agg=mean.*thr=0\.1.*topk=3/);
  await afterDraw(page, () => page.fill('#thr', '0'));
  await afterDraw(page, () => page.fill('#topk', '0'));
  const back = await page.locator('#attention-view canvas[data-kind="attention"]').first().evaluate((c) => JSON.parse(c.dataset.values));
  assert.equal(maxDiff(back, layers[0].slice(0, n * n)), 0);
  clean(rec);
  await page.close();
});

test('family: screenshots of the new views at 1280 and 390 px without horizontal overflow', async () => {
  for (const [name, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
    const { page, rec } = await open('#numLayers=4&numHeads=8&dModel=32&agg=rollout&layer=3', viewport);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over <= 0, `${name}: no horizontal scroll (${over}px over)`);
    for (const id of ['panel-attention', 'panel-model', 'panel-additive', 'panel-regression']) {
      const panel = page.locator(`#${id}`);
      const wide = await panel.evaluate((el) => el.scrollWidth - el.clientWidth);
      assert.ok(wide <= 0, `${name} ${id}: nothing sticks out of the panel (${wide}px)`);
      await panel.screenshot({ path: path.join(shots, `${name}-${id.replace('panel-', 'family-')}.png`) });
    }
    clean(rec);
    await page.close();
    const { page: p2, rec: r2 } = await open('#arch=encoder-decoder&numLayers=3', viewport);
    const over2 = await p2.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over2 <= 0, `${name} encoder–decoder: no horizontal scroll (${over2}px over)`);
    await p2.locator('#panel-model').screenshot({ path: path.join(shots, `${name}-family-model-encdec.png`) });
    clean(r2);
    await p2.close();
  }
});
