// Real-browser tests of the causal decoding view and the "merge sub-words into words" option (issue 13), and
// CJK labels. Same harness as page.test.js (tests/browser/harness.js): every page fails its test on a console
// error, a pageerror, a dialog or an off-origin request. The numbers on screen are compared with the module's
// own results computed here in Node (the bundled english model, run on the same text and on its prefixes) and
// with the merge written out as plain loops over each word's pieces (not web/aggregates.js).
// Run: node --test --test-concurrency=1 tests/browser/causal.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { createAttnScope } from '../../bindings/js/index.js';
import {
  useBrowser, settled, afterDraw, clean, shots, errorText,
} from './harness.js';

const open = useBrowser();
const dir = path.join(shots, 'page13');
mkdirSync(dir, { recursive: true });
const as = await createAttnScope();

const TEXT = 'the cat sat on the mat';

/** Waits until the causal view shows the next-token list (or its error) for position i. */
const nextShown = (page, i) => page.waitForFunction((p) => {
  const box = document.querySelector('#causal-view [data-name="causal-next"]');
  return box && Number(box.dataset.position) === p && box.querySelector('[data-name="next"] li, [data-name="causal-next-error"]');
}, i, { timeout: 30000 });

const shownNext = (page) => page.locator('#causal-view [data-name="next"] li').evaluateAll((lis) => lis.map((li) => ({
  id: Number(li.dataset.id), p: Number(li.dataset.prob),
})));

test('causal: the english model\'s triangle, a row, the next-token top-k at any position, and one generated token', async () => {
  const ref = await as.loadBundled('english');
  try {
    const { page, rec } = await open(`#model=english&text=${encodeURIComponent(TEXT)}`);
    await page.waitForFunction(() => window.__attnscope.traceState?.model === 'english' && !document.documentElement.dataset.busy, null, { timeout: 30000 });
    assert.equal(await page.isVisible('#panel-causal'), true, 'a decoder shows the causal panel');
    const want = ref.run(TEXT, { trace: 'weights', topK: 5 });
    const n = want.n;
    const H = want.numHeads;
    // the triangle: the mean over all heads of layer 1, upper cells blocked (grey), the rest the module's weights
    const canvas = page.locator('#causal-view canvas[data-kind="causal"]');
    const shown = await canvas.evaluate((c) => ({ rows: Number(c.dataset.rows), heads: c.dataset.heads }));
    assert.equal(shown.rows, n);
    assert.equal(shown.heads, [...Array(H).keys()].join(','));
    const mean = (i, j) => {
      let s = 0;
      for (let hd = 0; hd < H; hd++) s += want.layers[0].attention.weights[hd * n * n + i * n + j];
      return s / H;
    };
    // 22 tokens: 484 cells, so the canvas carries its values; compare every one
    const values = JSON.parse(await canvas.evaluate((c) => c.dataset.values));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) assert.ok(Math.abs(values[i * n + j] - mean(i, j)) < 1e-6, `cell ${i},${j}`);
    }
    // blocked cells are drawn grey (214,214,214), a computed weight in the colour map: pixel (row 0, col 5) vs (5, 0)
    const px = await canvas.evaluate((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const at = (i, j) => Array.from(d.subarray((i * c.width + j) * 4, (i * c.width + j) * 4 + 3));
      return { blocked: at(0, 5), lower: at(5, 0) };
    });
    assert.deepEqual(px.blocked, [214, 214, 214]);
    assert.notDeepEqual(px.lower, [214, 214, 214]);
    // select the last token: its next-token top-k is the full run's `next`
    await afterDraw(page, () => page.locator('#tokens .chip').nth(n - 1).click());
    await nextShown(page, n - 1);
    const last = await shownNext(page);
    assert.deepEqual(last.map((x) => x.id), Array.from(want.next.ids));
    last.forEach((x, k) => assert.ok(Math.abs(x.p - want.next.probs[k]) < 1e-6, `p[${k}]`));
    // a middle position (token 13, the "n" of "on"): the top-10 of the prefix run, asked through the view's k
    await afterDraw(page, () => page.locator('#tokens .chip').nth(13).click());
    await page.selectOption('#causal-k', '10');
    await nextShown(page, 13);
    await page.waitForFunction(() => document.querySelectorAll('#causal-view [data-name="next"] li').length === 10);
    const mid = await shownNext(page);
    const prefix = ref.run(TEXT.slice(0, 14), { trace: 'none', topK: 10 });
    assert.equal(prefix.n, 14);
    assert.deepEqual(mid.map((x) => x.id), Array.from(prefix.next.ids));
    mid.forEach((x, k) => assert.ok(Math.abs(x.p - prefix.next.probs[k]) < 1e-6, `p[${k}]`));
    // the row of token 13: its strongest keys with the mean weights, all at or before it
    const row = await page.locator('#causal-view [data-name="causal-row"] li').evaluateAll((lis) => lis.map((li) => [Number(li.dataset.key), Number(li.dataset.value)]));
    assert.equal(row.length, 12);
    for (const [j, v] of row) {
      assert.ok(j <= 13, `key ${j} is not in the future`);
      assert.ok(Math.abs(v - mean(13, j)) < 1e-6, `row 13 key ${j}`);
    }
    const sorted = [...row].sort((a, b) => b[1] - a[1]);
    assert.deepEqual(row.map((r) => r[0]), sorted.map((r) => r[0]), 'strongest first');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator('#panel-causal').screenshot({ path: path.join(dir, 'desktop-causal-english.png') });
    // generate one token: the model's greedy continuation is appended and its row is the one shown
    const gen = ref.generate(TEXT, { maxNewTokens: 1 });
    const runs = await page.evaluate(() => window.__attnscope.runs);
    await page.click('#causal-generate');
    await settled(page, runs);
    assert.equal(await page.inputValue('#text'), TEXT + gen.text);
    await page.waitForFunction((len) => window.__attnscope.state.token === len - 1, n + 1);
    const after = ref.run(TEXT + gen.text, { trace: 'weights' });
    await nextShown(page, n);
    const row2 = await page.locator('#causal-view [data-name="causal-row"]').evaluate((ol) => ({
      token: Number(ol.dataset.token), cells: Array.from(ol.querySelectorAll('li'), (li) => [Number(li.dataset.key), Number(li.dataset.value)]),
    }));
    assert.equal(row2.token, n, 'the new token\'s row');
    for (const [j, v] of row2.cells) {
      let s = 0;
      for (let hd = 0; hd < H; hd++) s += after.layers[0].attention.weights[hd * (n + 1) * (n + 1) + n * (n + 1) + j];
      assert.ok(Math.abs(v - s / H) < 1e-6, `new row key ${j}`);
    }
    assert.equal(await errorText(page), null);
    clean(rec);
    await page.close();
  } finally {
    ref.delete();
  }
});

test('causal: the seeded random decoder shows the triangle and the last token\'s top-k, and says why it cannot generate', async () => {
  const { page, rec } = await open('#arch=decoder');
  assert.equal(await page.isVisible('#panel-causal'), true);
  const tr = await page.evaluate(() => ({ n: window.__attnscope.trace.n, next: window.__attnscope.trace.next }));
  assert.equal(await page.locator('#causal-generate').isDisabled(), true);
  await nextShown(page, 0);
  assert.equal(await page.locator('#causal-view [data-name="causal-next-error"]').count(), 1, 'token 0: only the last token has a prediction');
  await afterDraw(page, () => page.locator('#tokens .chip').nth(tr.n - 1).click());
  await nextShown(page, tr.n - 1);
  assert.deepEqual((await shownNext(page)).map((x) => x.id), Object.values(tr.next.ids));
  await page.setViewportSize({ width: 390, height: 844 });
  await afterDraw(page, () => page.evaluate(() => window.dispatchEvent(new Event('resize'))));
  await page.locator('#panel-causal').screenshot({ path: path.join(dir, 'phone-causal-random.png') });
  // an encoder has no causal panel
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.selectOption('#arch', 'encoder');
  await settled(page, runs);
  assert.equal(await page.isVisible('#panel-causal'), false);
  clean(rec);
  await page.close();
});

/** Plain merge over explicit piece lists: word row a, word column b = mean over a's pieces of the sum over b's. */
function plainMerge(w, n, groups) {
  const words = [];
  groups.forEach((g, i) => { (words[g] ??= []).push(i); });
  return words.map((qs) => words.map((ks) => qs.reduce((s, i) => s + ks.reduce((t, j) => t + w[i * n + j], 0), 0) / qs.length));
}

test('words: merged heatmaps and model view equal the plain sums over pieces; 中文 labels upright and whole', async () => {
  const text = '我爱中文 hello world';
  const { page, rec } = await open(`#tokenizer=char&numHeads=2&text=${encodeURIComponent(text)}`);
  const tr = await page.evaluate(() => {
    const x = window.__attnscope.trace;
    return { n: x.n, tokens: x.tokens, w: x.layers.map((ly) => Array.from(ly.attention.weights)) };
  });
  assert.deepEqual(tr.tokens, Array.from(text.replace(/ /g, '')), 'the character tokenizer drops spaces');
  // CJK labels: not rotated (the column labels of a char map stay upright) and shown whole
  const labels = await page.locator('#attention-view canvas[data-kind="attention"]').first().evaluate((c) => {
    const fig = c.closest('.hm');
    return { rotated: !!fig.querySelector('.hm-cols.rotated'), cols: Array.from(fig.querySelectorAll('.hm-cols .hm-label'), (e) => e.textContent) };
  });
  assert.equal(labels.rotated, false);
  assert.deepEqual(labels.cols.slice(0, 4), ['我', '爱', '中', '文']);
  await page.locator('#panel-attention').screenshot({ path: path.join(dir, 'desktop-cjk-pieces.png') });

  await afterDraw(page, () => page.check('#merge-words'));
  // words: 我 爱 中 文 hello world (the spaces the tokenizer dropped still separate words, from the offsets)
  const groups = [0, 1, 2, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5];
  const n = tr.n;
  for (const hd of [0, 1]) {
    const fig = page.locator(`#attention-view canvas[data-kind="attention"][data-head="${hd}"]`);
    const got = await fig.evaluate((c) => ({ rows: Number(c.dataset.rows), values: JSON.parse(c.dataset.values) }));
    assert.equal(got.rows, 6);
    const want = plainMerge(tr.w[0].slice(hd * n * n, (hd + 1) * n * n), n, groups).flat();
    want.forEach((v, k) => assert.ok(Math.abs(got.values[k] - v) < 1e-6, `head ${hd} cell ${k}: ${got.values[k]} ≠ ${v}`));
  }
  const words = await page.locator('#attention-view .hm').first().locator('.hm-rows .hm-label').allTextContents();
  assert.deepEqual(words, ['我', '爱', '中', '文', 'hello', 'world']);
  // the lines view and the model view draw words too
  assert.equal(await page.locator('#attention-view .lines-canvas').first().evaluate((c) => Number(c.dataset.rows)), 6);
  const mv = await page.locator('#model-view canvas.mv-canvas').evaluate((c) => ({ n: Number(c.dataset.n), m: Number(c.dataset.m) }));
  assert.deepEqual(mv, { n: 6, m: 6 });
  await page.locator('#panel-attention').screenshot({ path: path.join(dir, 'desktop-cjk-words.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await afterDraw(page, () => page.evaluate(() => window.dispatchEvent(new Event('resize'))));
  await page.locator('#panel-attention').screenshot({ path: path.join(dir, 'phone-cjk-words.png') });
  await afterDraw(page, () => page.uncheck('#merge-words'));
  assert.equal(await page.locator('#attention-view canvas[data-kind="attention"]').first().evaluate((c) => Number(c.dataset.rows)), n);
  clean(rec);
  await page.close();
});
