// Real-browser tests of panel 9b (issue 27): attention flow beside rollout, the query/key map, and the model view's
// thumbnails coloured by a head detector, in English and Chinese, on a phone-sized viewport too; axe-core finds no
// serious or critical problem. Every number on screen or exported is compared with the module's own, computed here in
// Node for the same model and text by another path (flow from the raw per-head weights, where the page sends head
// means; the map from q/k sliced here). Screenshots go to build/screenshots/inside-flow/ (and ATTNSCOPE_SHOTS, when
// set). Run: ATTNSCOPE_SITE_BUILT=1 NODE_PATH=/usr/share/nodejs node --test tests/browser/inside-flow.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import { createAttnScope } from '../../bindings/js/index.js';
import { rollout } from '../../web/aggregates.js';
import { inductionScores } from '../../web/induction.js';
import {
  useBrowser, clean, shots, axeProblems,
} from './harness.js';

const open = useBrowser();
const dirs = [path.join(shots, 'inside-flow'), process.env.ATTNSCOPE_SHOTS].filter(Boolean);
for (const d of dirs) mkdirSync(d, { recursive: true });
const as = await createAttnScope();
const TEXT = 'the cat sat on the mat';
const MORE = 'a dog ran to the park';

const close = (a, b, tol, what) => {
  assert.equal(a.length, b.length, `${what}: length`);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) <= tol, `${what}[${i}]: ${a[i]} vs ${b[i]}`);
};
const ready = (page) => page.waitForFunction(() => window.__attnscope?.traceState && !document.documentElement.dataset.busy, null, { timeout: 60000 });
async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), page.click(selector)]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path()) };
}
async function shoot(locator, name) {
  for (const d of dirs) await locator.screenshot({ path: path.join(d, name) });
}
const status = (page, name) => page.locator(`#flow-qk [data-box="${name}-status"]`).textContent();

for (const lang of ['en', 'zh-CN']) {
  test(`flow and Q/K map (${lang}): the numbers are the module's, the exports carry them, the model view is coloured`, async () => {
    const ref = await as.loadBundled('english');
    try {
      const { page, rec } = await open(`#model=english&text=${encodeURIComponent(TEXT)}&lang=${lang}`);
      await page.waitForFunction(() => window.__attnscope?.traceState?.model === 'english' && !document.documentElement.dataset.busy, null, { timeout: 60000 });
      const w = ref.run(TEXT, { trace: 'weights' });
      const { n } = w;
      const H = w.numHeads;
      const layers = w.layers.map((l) => l.attention.weights);
      await page.locator('#panel-flow').scrollIntoViewIfNeeded();

      // ---- attention flow beside rollout
      await page.click('#flow-run');
      await page.waitForSelector('#flow-qk canvas[data-kind="flow"]', { timeout: 60000 });
      await page.waitForSelector('#flow-qk canvas[data-kind="rollout"]');
      const json = JSON.parse((await download(page, '[data-flow-export="flow"][data-format="json"]')).body.toString('utf8'));
      const flow = as.attentionFlow({ layers, numHeads: H, n }).flow; // every head in, not the page's means
      close(json.flow, flow, 1e-5, 'flow');
      for (let o = 0; o < n; o++) {
        const sum = flow.slice(o * n, (o + 1) * n).reduce((s, x) => s + x, 0);
        close(json.flowNormalized.slice(o * n, (o + 1) * n), Array.from(flow.slice(o * n, (o + 1) * n), (x) => x / sum), 1e-5, `row ${o}`);
      }
      close(json.rollout, rollout(layers, H, n)[layers.length - 1], 1e-5, 'rollout');
      assert.deepEqual(json.tokens, w.tokens);
      const csv = (await download(page, '[data-flow-export="flow"][data-format="csv"]')).body.toString('utf8').trim().split('\n');
      assert.equal(csv[0], 'output,input,output_token,input_token,rollout,flow,flow_normalized');
      assert.equal(csv.length, n * n + 1);
      const svg = await download(page, '[data-flow-export="flow"][data-format="svg"]');
      assert.equal(svg.name, 'attnscope-flow.svg');
      assert.match(svg.body.toString('utf8'), /^<svg|<\?xml/);
      const png = await download(page, '[data-flow-export="flow"][data-format="png"]');
      assert.equal(png.body.subarray(1, 4).toString('latin1'), 'PNG');

      // ---- the Q/K map of layer 1 head 0, over the text and one more
      await page.fill('#qk-layer', '1');
      await page.fill('#qk-head', '0');
      await page.fill('#qk-texts', MORE);
      await page.click('#qk-run');
      await page.waitForSelector('#flow-qk [data-name="qk-map"] svg', { timeout: 60000 });
      const map = JSON.parse((await download(page, '[data-flow-export="qk"][data-format="json"]')).body.toString('utf8'));
      const qs = [];
      const ks = [];
      const runs = [TEXT, MORE].map((x) => ref.run(x, { full: [1] }));
      const hd = runs[0].headDim;
      for (const r of runs) {
        const a = r.layers[1].attention;
        const width = a.q.length / r.n;
        for (let i = 0; i < r.n; i++) {
          qs.push(...a.q.slice(i * width, i * width + hd));
          ks.push(...a.k.slice(i * (a.k.length / r.n), i * (a.k.length / r.n) + hd));
        }
      }
      const N = runs[0].n + runs[1].n;
      const want = as.qkMap({ q: Float32Array.from(qs), k: Float32Array.from(ks), nq: N, nk: N, d: hd });
      close(map.queries, want.queries, 1e-5, 'queries');
      close(map.keys, want.keys, 1e-5, 'keys');
      close(map.explainedVariance, want.explainedVariance, 1e-6, 'explained variance');
      assert.equal(await page.locator('#flow-qk .qk-point[data-kind="query"]').count(), N);
      assert.equal(await page.locator('#flow-qk .qk-point[data-kind="key"]').count(), N);
      // focus query 2 of the first text, then key 1: the pair's weight is the head's weight
      await page.focus('#flow-qk .qk-point[data-kind="query"][data-index="2"]');
      await page.focus('#flow-qk .qk-point[data-kind="key"][data-index="1"]');
      const shown = Number(await page.getAttribute('#flow-qk [data-name="qk-info"]', 'data-weight'));
      const w1 = runs[0].layers[1].attention.weights;
      assert.ok(Math.abs(shown - w1[(0 * runs[0].n + 2) * runs[0].n + 1]) < 1e-6, `pair weight ${shown}`);
      // the arrow keys move the one tab stop
      await page.focus('#flow-qk .qk-point[data-kind="query"][data-index="0"]');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.evaluate(() => document.activeElement.dataset.index), '1');
      for (const f of ['svg', 'png', 'csv']) {
        const d = await download(page, `[data-flow-export="qk"][data-format="${f}"]`);
        assert.equal(d.name, `attnscope-qk-map.${f}`);
        assert.ok(d.body.length > 100);
      }
      await shoot(page.locator('#panel-flow'), `flow-${lang}.png`);

      // ---- the model view coloured by previous-token, then induction scores
      await page.locator('#panel-model').scrollIntoViewIfNeeded();
      const scores = as.headScores({ weights: layers, numHeads: H, n, ids: w.ids });
      const ind = inductionScores(as, ref, TEXT);
      for (const [by, values] of [['previous', scores.previousToken], ['induction', ind.induction]]) {
        await page.selectOption('#tint-by', by);
        await page.waitForFunction((k) => document.querySelectorAll('#model-view .mv-tint').length === k, values.length, { timeout: 60000 });
        const got = await page.locator('#model-view .mv-tint').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
        close(got, values, 1e-6, by);
        assert.ok(await page.locator('#tint-legend').evaluate((e) => e.childElementCount > 0), 'a legend');
        // the panels above draw as they come near (and grow): the view is shot once the page is still
        for (let i = 0; i < 2; i++) {
          await page.evaluate(() => document.getElementById('panel-model').scrollIntoView({ block: 'start' }));
          await page.waitForFunction(() => !document.documentElement.dataset.drawing && !document.documentElement.dataset.busy, null, { timeout: 60000 });
        }
        const box = await page.evaluate(() => {
          const r = document.getElementById('panel-model').getBoundingClientRect();
          return { x: r.left, y: Math.max(0, r.top), width: r.width, height: Math.min(r.height, window.innerHeight - Math.max(0, r.top)) };
        });
        for (const d of dirs) await page.screenshot({ path: path.join(d, `model-tint-${by}-${lang}.png`), clip: box });
      }
      assert.deepEqual(await axeProblems(page), []);
      clean(rec);
    } finally {
      ref.delete();
    }
  });
}

test('flow on a phone; above 128 tokens the control says why', async () => {
  const text = 'attention flow on a phone';
  const { page, rec } = await open(`#arch=decoder&tokenizer=char&dModel=32&numHeads=2&numLayers=2&text=${encodeURIComponent(text)}`, { width: 390, height: 844 });
  await ready(page);
  await page.locator('#panel-flow').scrollIntoViewIfNeeded();
  await page.click('#flow-run');
  await page.waitForSelector('#flow-qk canvas[data-kind="flow"]', { timeout: 60000 });
  await page.click('#qk-run');
  await page.waitForSelector('#flow-qk [data-name="qk-map"] svg', { timeout: 60000 });
  assert.match(await status(page, 'qk'), /\d/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await shoot(page.locator('#panel-flow'), 'flow-phone.png');
  assert.deepEqual(await axeProblems(page), []);
  // 129 characters: 129 tokens
  const long = 'x'.repeat(129);
  await page.evaluate((v) => { location.hash = `#arch=decoder&tokenizer=char&dModel=32&numHeads=2&numLayers=2&text=${v}`; }, long);
  await page.waitForFunction(() => window.__attnscope.trace?.n === 129 && !document.documentElement.dataset.busy, null, { timeout: 60000 });
  assert.equal(await page.isDisabled('#flow-run'), true);
  assert.match(await page.locator('#flow-qk [data-box="flow-limit"]').textContent(), /128.*129/);
  clean(rec);
});
