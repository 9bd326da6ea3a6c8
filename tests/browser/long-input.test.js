// Real-browser test of a long input (issue 28): a small Llama-shaped checkpoint (2 layers, 4 query heads sharing
// 2 K/V heads, RoPE, F32 random weights, byte-level tokenizer of tests/fixtures/modern: one token per byte) is written
// here at test time, chosen in "Your own checkpoint…", and 2,048 tokens are run through it in the page. Checked
// against the same module's full weights, computed here in Node (every head's [n, n] map, run option heads):
//   - the per-head summaries the page shows (the model view's tables and the trace's numbers) equal float64 sums over
//     the full weights, for every head, and the top-k links of the heads it draws equal each row's heaviest keys;
//   - the page holds no [H, n, n] map of any layer, only the maps of the heads on screen;
//   - for a head picked at random, every block of the downsampled map equals the max of its cells (from the full
//     weights, not the page's own map);
//   - zooming in with the + key down to single cells shows each cell's exact value (the live region and tooltip);
//   - the model view has a thumbnail per layer × head whose pixels are the summaries' top-k weights (block maxima);
//   - axe-core finds no serious or critical problem on the long views in English and Chinese, and the Chinese page
//     shows no English UI word there (tests/browser/i18n-walk.js).
// Also the english vs english-rope switch: each model's strongest labelled previous-token head (config.json) on the
// page's text, and their difference, against the bundled models' weights computed here.
// No timed assertions. Run: ATTNSCOPE_SITE_BUILT=1 node --test tests/browser/long-input.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { interpolateViridis } from 'd3-scale-chromatic';
import {
  useBrowser, settled, root, afterDraw, axeProblems,
} from './harness.js';
import { englishWords } from './i18n-walk.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { mulberry32 } from '../../web/rng.js';
import { compareTraces } from '../../web/compare.js';
import { llamaTensors } from '../js/support/llama.mjs';

const open = useBrowser();
const shots = process.env.ATTNSCOPE_SHOTS ?? path.join(root, 'build', 'screenshots');
mkdirSync(shots, { recursive: true });
const N = 2048;
const L = 2;
const H = 4;
const KV = 2;
const D = 32;
const TOKENIZER = readFileSync(path.join(root, 'tests', 'fixtures', 'modern', 'llama-f32-untied-gqa-llama3', 'tokenizer.json'));
const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 258, hidden_size: D, intermediate_size: 48,
  num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: KV, max_position_embeddings: 4096,
  rms_norm_eps: 1e-5, rope_theta: 10000.0, hidden_act: 'silu', tie_word_embeddings: false, bos_token_id: 256, eos_token_id: 257,
};

/** model.safetensors of a Llama with CONFIG's sizes: F32 weights uniform in ±1/sqrt(in) (seeded), norms 1. */
function checkpoint() {
  const list = llamaTensors(CONFIG);
  const rand = mulberry32(28);
  const header = {};
  const blobs = [];
  let off = 0;
  for (const [name, shape] of list) {
    const count = shape.reduce((a, b) => a * b, 1);
    // q and k twice as large: sharper heads, so the maps have structure to zoom into
    const s = shape.length === 1 ? 0 : (/[qk]_proj/.test(name) ? 3 : 1) / Math.sqrt(shape[1]);
    const v = Float32Array.from({ length: count }, () => (shape.length === 1 ? 1 : (rand() * 2 - 1) * s));
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + count * 4] };
    blobs.push(Buffer.from(v.buffer));
    off += count * 4;
  }
  let head = Buffer.from(JSON.stringify(header));
  head = Buffer.concat([head, Buffer.alloc((8 - (head.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  return Buffer.concat([len, head, ...blobs]);
}

// 2,048 bytes of ASCII prose: 2,048 tokens (the tokenizer has no merges and adds no special token)
const WORDS = 'the cat sat on the mat because it was tired and the dog ran to the door when it heard a sound'.split(' ');
const text = (() => {
  let s = '';
  for (let i = 0; s.length < N; i++) s += `${i ? ' ' : ''}${WORDS[i % WORDS.length]}`;
  return s.slice(0, N);
})();

/** float64 summaries of head hd of weights [H, n, n] (src/attention/tiled.h's definitions). */
function summary(w, hd, n) {
  let e = 0; let d = 0; let s = 0;
  for (let i = 0; i < n; i++) {
    const row = (hd * n + i) * n;
    for (let j = 0; j <= i; j++) {
      const p = w[row + j];
      if (p > 0) e -= p * Math.log(p);
      d += p * (i - j);
    }
    s += w[row];
  }
  return { entropy: e / n, distance: d / n, sink: s / n };
}

test('2,048 tokens through a Llama-shaped checkpoint: summaries, block maxima and single cells equal the module\'s full weights', async (t) => {
  const weights = checkpoint();
  // the module's full weights, in Node
  const as = await createAttnScope({ relaxedSimd: false });
  const model = await as.loadPretrained({ config: JSON.stringify(CONFIG), weights: new Blob([weights]), tokenizer: TOKENIZER.toString('utf8') });
  // every head's full [n, n] map (run option heads: materialised maps, equal to trace 'weights' ones —
  // tests/js/summaries.test.js; trace 'weights' keeps more per layer than wasm32's 4 GB hold at 2,048 tokens)
  const all = [];
  for (let l = 0; l < L; l++) for (let hd = 0; hd < H; hd++) all.push({ layer: l, head: hd });
  const full = model.run(text, { heads: all });
  assert.equal(full.n, N, 'one token per byte');
  const W = Array.from({ length: L }, (_, l) => {
    const w = new Float32Array(H * N * N);
    for (const x of full.heads) if (x.layer === l) w.set(x.weights, x.head * N * N);
    return w;
  });
  model.delete();

  const { page, rec } = await open(`#text=${encodeURIComponent(text)}`, { width: 1280, height: 900 });
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(CONFIG)) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: weights },
    { name: 'tokenizer.json', mimeType: 'application/json', buffer: TOKENIZER },
  ]);
  const longShown = () => page.waitForFunction(() => window.__attnscope.trace?.long && !document.documentElement.dataset.busy
    && document.querySelector('#attention-view canvas[data-big]'), null, { timeout: 120000 });
  await longShown();
  assert.deepEqual(rec.errors, []);

  // ---- what the page holds: summaries of every layer, no layer's [H, n, n], the maps of the heads on screen only
  const held = await page.evaluate(() => {
    const tr = window.__attnscope.trace;
    return {
      n: tr.n, long: tr.long, anyWeights: tr.layers.some((ly) => ly.attention?.weights),
      maps: tr.heads.map((x) => ({ layer: x.layer, head: x.head, length: x.weights.length })),
      summaries: tr.layers.map((ly) => ({
        entropy: Array.from(ly.attention.summary.entropy), distance: Array.from(ly.attention.summary.distance),
        sink: Array.from(ly.attention.summary.sink), k: ly.attention.summary.topK,
        topIds: Array.from(ly.attention.summary.topIds), topWeights: Array.from(ly.attention.summary.topWeights),
      })),
      tables: Array.from(document.querySelectorAll('#model-view table.metric td')).map((td) => ({
        metric: td.closest('table').dataset.metric, layer: Number(td.dataset.layer), head: Number(td.dataset.head), value: Number(td.dataset.value),
      })),
    };
  });
  assert.equal(held.n, N);
  assert.equal(held.anyWeights, false, 'no layer keeps [H, n, n]');
  assert.deepEqual(held.maps, [{ layer: 0, head: 0, length: N * N }, { layer: 0, head: 1, length: N * N }], 'the two heads on screen');
  assert.equal(held.tables.length, 3 * L * H, 'entropy, distance and sink tables of every layer × head');
  let worst = 0;
  for (let l = 0; l < L; l++) {
    for (let hd = 0; hd < H; hd++) {
      const ref = summary(W[l], hd, N);
      for (const key of ['entropy', 'distance', 'sink']) {
        const got = held.summaries[l][key][hd];
        const shown = held.tables.find((c) => c.metric === key && c.layer === l && c.head === hd).value;
        assert.equal(shown, got, `the table shows the trace's ${key}`);
        worst = Math.max(worst, Math.abs(got - ref[key]) / Math.max(1, Math.abs(ref[key])));
      }
    }
  }
  t.diagnostic(`summaries: max relative error ${worst.toExponential(2)} over ${3 * L * H} values`);
  assert.ok(worst < 1e-4, `summaries within 1e-4 (relative) of float64 sums over the full weights (max ${worst})`);
  // top-k of the drawn heads: each row's k heaviest weights, as the full weights have them
  const k = held.summaries[0].k;
  let topErr = 0;
  for (const hd of [0, 1]) {
    for (let i = 0; i < N; i++) {
      const row = Array.from(W[0].subarray((hd * N + i) * N, (hd * N + i) * N + i + 1)).sort((a, b) => b - a);
      for (let r = 0; r < Math.min(k, i + 1); r++) {
        const q = (hd * N + i) * k + r;
        topErr = Math.max(topErr, Math.abs(held.summaries[0].topWeights[q] - row[r]));
        assert.ok(Math.abs(W[0][(hd * N + i) * N + held.summaries[0].topIds[q]] - held.summaries[0].topWeights[q]) < 1e-5, `top key ${r} of row ${i} has its weight`);
      }
    }
  }
  t.diagnostic(`top-${k} weights of the drawn heads: max abs error ${topErr.toExponential(2)}`);
  assert.ok(topErr < 1e-5, `top-k weights within 1e-5 (max ${topErr})`);
  await page.screenshot({ path: path.join(shots, 'long-input-zoomed-out.png'), fullPage: false });

  // ---- the model view's thumbnails: one per layer × head, each pixel (a, b) of a tile the largest full weight
  // W[i, j] over the block's rows i and the keys j the module's summary lists among row i's top k; coloured by
  // viridis at that value over the tile's largest (d3-scale-chromatic here, not the page's lookup table)
  const thumbs = await page.evaluate(() => {
    const c = document.querySelector('#model-view canvas.mv-canvas');
    const { width, height } = c;
    return { ...c.dataset, width, height, px: Array.from(c.getContext('2d').getImageData(0, 0, width, height).data) };
  });
  const stride = Number(thumbs.stride);
  const side = Math.ceil(N / stride);
  const pitch = side + Number(thumbs.gap);
  assert.ok(side <= 64 && stride > 1, `tiles of ${side} pixels for ${N} tokens`);
  assert.equal(thumbs.width, H * pitch - Number(thumbs.gap), 'a tile for every head');
  assert.equal(thumbs.height, L * pitch - Number(thumbs.gap), 'a row of tiles for every layer');
  const viridis = (q) => interpolateViridis(q / 255).match(/[0-9a-f]{2}/g).map((x) => parseInt(x, 16));
  let off = 0;
  for (let l = 0; l < L; l++) {
    for (let hd = 0; hd < H; hd++) {
      const { topIds, k: kk } = held.summaries[l];
      const tile = new Float64Array(side * side);
      for (let i = 0; i < N; i++) {
        for (let r = 0; r < kk; r++) {
          const j = topIds[(hd * N + i) * kk + r];
          if (j < 0) continue;
          const q = Math.floor(i / stride) * side + Math.floor(j / stride);
          tile[q] = Math.max(tile[q], W[l][(hd * N + i) * N + j]);
        }
      }
      const top = Math.max(...tile);
      for (let a = 0; a < side; a++) {
        for (let b = 0; b < side; b++) {
          const p = ((l * pitch + a) * thumbs.width + hd * pitch + b) * 4;
          const got = thumbs.px.slice(p, p + 3);
          const q = Math.round((tile[a * side + b] * 255) / top);
          // a weight at a rounding boundary may land on the neighbouring entry
          const near = [q, q - 1, q + 1].filter((x) => x >= 0 && x <= 255).some((x) => viridis(x).every((v, c) => Math.abs(v - got[c]) <= 1));
          if (!near) off += 1;
        }
      }
    }
  }
  t.diagnostic(`model view: ${L * H} thumbnails of ${side}² pixels from the summaries' top-${held.summaries[0].k} keys; ${off} pixels off`);
  assert.equal(off, 0, 'every thumbnail pixel is its block\'s largest top-k weight, coloured');
  await page.locator('#panel-model').screenshot({ path: path.join(shots, 'long-input-model-view.png') });

  // ---- a head picked at random, opened from the model view's table; its downsampled map against the full weights
  const rand = mulberry32(2048);
  const pick = { layer: Math.floor(rand() * L), head: Math.floor(rand() * H) };
  await page.click(`#model-view table[data-metric="entropy"] td[data-layer="${pick.layer}"][data-head="${pick.head}"]`);
  await page.waitForFunction((p) => {
    const c = document.querySelector('#attention-view canvas[data-big]');
    return c && Number(c.dataset.layer) === p.layer && Number(c.dataset.head) === p.head && !document.documentElement.dataset.busy;
  }, pick, { timeout: 120000 });
  const drawn = await page.evaluate(() => {
    const fig = document.querySelector('#attention-view canvas[data-big]').closest('figure');
    return { view: fig.bigmap.view(), blocks: Array.from(fig.bigmap.blocks()) };
  });
  const { outRows, outCols } = drawn.view;
  assert.ok(outRows < N && outRows >= 100, `the whole map in ${outRows} × ${outCols} blocks`);
  const w = W[pick.layer];
  let mismatched = 0;
  for (let a = 0; a < outRows; a++) {
    const i0 = Math.floor((a * N) / outRows);
    const i1 = Math.floor(((a + 1) * N) / outRows);
    for (let b = 0; b < outCols; b++) {
      const j0 = Math.floor((b * N) / outCols);
      const j1 = Math.floor(((b + 1) * N) / outCols);
      let mx = -Infinity;
      for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) mx = Math.max(mx, w[(pick.head * N + i) * N + j]);
      if (Math.abs(drawn.blocks[a * outCols + b] - mx) > 1e-6) mismatched += 1;
    }
  }
  t.diagnostic(`head L${pick.layer + 1} H${pick.head + 1}: ${outRows * outCols} blocks, ${mismatched} differ from the max of their cells`);
  assert.equal(mismatched, 0, `every one of ${outRows * outCols} blocks equals the max of its cells`);

  // ---- zoom to single cells with the keyboard, then read exact values cell by cell
  const canvas = page.locator('#attention-view canvas[data-big]').first();
  await canvas.focus();
  for (let z = 0; z < 12 && (await canvas.getAttribute('data-single')) !== 'true'; z++) await page.keyboard.press('+');
  assert.equal(await canvas.getAttribute('data-single'), 'true', 'zoomed in to single cells');
  await page.screenshot({ path: path.join(shots, 'long-input-zoomed-in.png'), fullPage: false });
  for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowDown']) {
    await page.keyboard.press(key);
    const cell = await page.evaluate(() => {
      const live = document.querySelector('#attention-view .hm-live');
      return { ...live.dataset, text: live.textContent };
    });
    assert.equal(Number(cell.rows), 1, 'one cell');
    const want = w[(pick.head * N + Number(cell.row)) * N + Number(cell.col)];
    assert.ok(Math.abs(Number(cell.value) - want) < 1e-6, `cell (${cell.row}, ${cell.col}): ${cell.value} against ${want}`);
    assert.match(cell.text, new RegExp(`\\b${cell.row}\\b.*\\b${cell.col}\\b`), 'the text names the cell');
  }
  // Enter on a cell selects its row: the links move to it, the map keeps its zoom
  const row = Number(await page.evaluate(() => document.querySelector('#attention-view .hm-live').dataset.row));
  const view = await canvas.getAttribute('data-view');
  await page.keyboard.press('Enter');
  await page.waitForFunction((i) => window.__attnscope.state.token === i
    && document.querySelector('#attention-view .topk-list')?.dataset.token === String(i), row, { timeout: 30000 });
  assert.equal(await page.locator('#attention-view canvas[data-big]').first().getAttribute('data-view'), view, 'the zoom stays');
  assert.deepEqual(rec.errors, []);
  await settled(page, 0);

  // ---- the long views in both languages: axe-core finds no serious or critical problem, and in Chinese no English
  // UI word is left (the attention view's maps, links and notes, the model view, the other panels' notes)
  const runs = await page.evaluate(() => window.__attnscope.runs);
  const LONG_VIEWS = '#panel-attention, #panel-model, [data-name="long-skip"]';
  assert.deepEqual(await axeProblems(page), [], 'axe-core (en)');
  await afterDraw(page, () => page.selectOption('#lang', 'zh-CN'));
  assert.equal(await page.evaluate(() => window.__attnscope.runs), runs, 'a language switch recomputes nothing');
  assert.match(await page.textContent('#model-view [data-name="long-thumbs"]'), /缩略图/);
  assert.deepEqual(await englishWords(page, LONG_VIEWS), [], 'no English UI word on the Chinese long views');
  assert.deepEqual(await axeProblems(page), [], 'axe-core (zh-CN)');
  assert.deepEqual(rec.errors, []);
});

test('english vs english-rope: the page shows each model\'s strongest previous-token head on the text, and their difference', async (t) => {
  const words = 'the cat sat on a mat';
  const as = await createAttnScope({ relaxedSimd: false });
  const want = [];
  for (const name of ['english', 'english-rope']) {
    const config = JSON.parse(readFileSync(path.join(root, 'models', name, 'config.json'), 'utf8'));
    const prev = config.heads.filter((x) => x.measure === 'previousToken').sort((a, b) => b.score - a.score);
    const model = await as.loadBundled(name);
    const r = model.run(words, { trace: 'weights' });
    const { layer, head } = prev[0];
    want.push({
      name, layer, head, prev: prev.length, tokens: r.tokens, text: words, offsets: r.offsets,
      weights: r.layers[layer].attention.weights.slice(head * r.n * r.n, (head + 1) * r.n * r.n),
    });
    model.delete();
  }
  const ref = compareTraces(want[0], want[1]);
  const { page, rec } = await open(`#text=${encodeURIComponent(words)}`, { width: 1280, height: 900 });
  await page.click('#pair-run');
  await page.waitForSelector('#pair-view canvas[data-kind="pair-diff"]', { timeout: 120000 });
  const shown = await page.evaluate(() => ({
    maps: ['pair-a', 'pair-b', 'pair-diff'].map((k) => JSON.parse(document.querySelector(`#pair-view canvas[data-kind="${k}"]`).dataset.values)),
    picked: Array.from(document.querySelectorAll('#pair-view select')).map((s) => s.value),
    prev: Array.from(document.querySelectorAll('#pair-view [data-name="pair-prev"]')).map((d) => d.querySelectorAll('button').length),
  }));
  assert.deepEqual(shown.picked, want.map((w) => `${w.layer},${w.head}`), 'each model\'s strongest labelled previous-token head');
  assert.deepEqual(shown.prev, want.map((w) => w.prev), 'every labelled previous-token head is a button');
  let err = 0;
  ['a', 'b', 'diff'].forEach((k, m) => {
    assert.equal(shown.maps[m].length, ref.U * ref.U);
    shown.maps[m].forEach((v, q) => { err = Math.max(err, Math.abs(v - ref[k][q])); });
  });
  t.diagnostic(`${ref.U} aligned spans; maps and difference within ${err.toExponential(2)} of the module's weights merged here`);
  assert.ok(err < 1e-6);
  assert.deepEqual(rec.errors, []);
});
