// Real-browser tests of panel 9, looking inside (issue 27): the logit lens table, heads knocked out by clicking
// them, the ablation sweep (and its Cancel) and activation patching, in English and Chinese, on a phone-sized
// viewport too; axe-core finds no serious or critical problem in the panel. The numbers on screen are compared with
// the module's own results computed here in Node for the same model and text (the bundled english model). Screenshots
// go to build/screenshots/inside/. Same harness as page.test.js (a console error, pageerror, dialog or off-origin
// request fails the test). Run: node --test --test-concurrency=1 tests/browser/inside.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import { createAttnScope } from '../../bindings/js/index.js';
import { REVERSE } from '../../web/inside-presets.js';
import {
  useBrowser, clean, shots, root,
} from './harness.js';

const open = useBrowser();
const dir = path.join(shots, 'inside');
mkdirSync(dir, { recursive: true });
const as = await createAttnScope();
const AXE = readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const TEXT = 'the cat sat on the mat';

const ready = (page) => page.waitForFunction(() => window.__attnscope?.traceState?.model === 'english' && !document.documentElement.dataset.busy, null, { timeout: 60000 });
const statusOf = (page, name) => page.locator(`#inside [data-box="${name}-status"]`).textContent();

async function axeProblems(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run('#panel-inside', { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 3).join(', ')}`);
}

for (const lang of ['en', 'zh-CN']) {
  test(`inside (${lang}): lens table, a knocked-out head, the sweep and patching equal the module's numbers`, async () => {
    const ref = await as.loadBundled('english');
    try {
      const { page, rec } = await open(`#model=english&text=${encodeURIComponent(TEXT)}&lang=${lang}`);
      await ready(page);
      const panel = page.locator('#panel-inside');
      await panel.scrollIntoViewIfNeeded();
      // the lens: every cell's top-1 id and probability are run({ lens: 5 })'s
      await page.click('#inside-lens');
      await page.waitForSelector('#inside table[data-name="lens"]', { timeout: 60000 });
      const want = ref.run(TEXT, { lens: 5 });
      const cells = await page.locator('#inside table[data-name="lens"] td').evaluateAll((tds) => tds.map((td) => ({
        layer: Number(td.dataset.layer), position: Number(td.dataset.position), id: Number(td.dataset.id), prob: Number(td.dataset.prob), title: td.title,
      })));
      assert.equal(cells.length, want.layers.length * want.n);
      for (const c of cells) {
        const l = want.layers[c.layer].lens;
        assert.equal(c.id, l.ids[c.position * 5]);
        assert.ok(Math.abs(c.prob - l.probs[c.position * 5]) < 1e-6);
        assert.equal(c.title.split('\n').length, 5, 'the top 5 in the tooltip');
      }
      // the detectors: every score is as.headScores's; sorting by the sink share puts its largest first
      await page.click('#inside-detectors');
      await page.waitForSelector('#inside table[data-name="detectors"]', { timeout: 60000 });
      const w = ref.run(TEXT, { trace: 'weights' });
      const scores = as.headScores({ weights: w.layers.map((l) => l.attention.weights), numHeads: w.numHeads, n: w.n, ids: w.ids });
      const read = () => page.locator('#inside table[data-name="detectors"] tbody tr').evaluateAll((trs) => trs.map((tr) => ({
        layer: Number(tr.dataset.layer), head: Number(tr.dataset.head),
        v: Object.fromEntries([...tr.querySelectorAll('td[data-score]')].map((td) => [td.dataset.score, Number(td.dataset.value)])),
      })));
      for (const row of await read()) {
        const i = row.layer * w.numHeads + row.head;
        for (const key of ['previousToken', 'duplicateToken', 'sinkShare']) assert.ok(Math.abs(row.v[key] - scores[key][i]) < 1e-6, `${key} ${i}`);
      }
      await page.click('#inside .inside-sort[data-sort="sinkShare"]');
      const sorted = await read();
      assert.equal(sorted[0].v.sinkShare, Math.max(...sorted.map((r) => r.v.sinkShare)));
      assert.equal(await page.getAttribute('#inside .inside-sort[data-sort="sinkShare"] >> xpath=..', 'aria-sort'), 'descending');
      // knock out layer 1 head 0 by clicking it: the loss shown is run({ ablate, logProbs })'s
      await page.click('#inside .inside-head[data-layer="1"][data-head="0"]');
      await page.waitForSelector('#inside [data-name="ablation"]', { timeout: 60000 });
      assert.equal(await page.getAttribute('#inside .inside-head[data-layer="1"][data-head="0"]', 'aria-pressed'), 'true');
      const lp = ref.run(TEXT, { logProbs: true, ablate: [{ layer: 1, head: 0 }] }).logProbs;
      const after = -lp.reduce((s, x) => s + x, 0) / lp.length;
      const lossText = await page.locator('#inside [data-name="loss"]').textContent();
      assert.ok(lossText.includes(after.toFixed(4)), `${lossText} shows ${after.toFixed(4)}`);
      // the sweep: every cell is as.ablationSweep's delta
      await page.click('#inside-sweep');
      await page.waitForSelector('#inside table[data-name="sweep"]', { timeout: 120000 });
      const sweep = await as.ablationSweep(ref, TEXT);
      const values = await page.locator('#inside table[data-name="sweep"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
      assert.equal(values.length, sweep.delta.length);
      values.forEach((v, i) => assert.ok(Math.abs(v - sweep.delta[i]) < 1e-5, `sweep cell ${i}`));
      // patching: two prompts of the same length, per layer × position
      await page.fill('#inside-clean', 'the cat sat on the mat');
      await page.fill('#inside-corrupted', 'the mat sat on the cat');
      await page.fill('#inside-token-a', 'c');
      await page.fill('#inside-token-b', 'm');
      await page.selectOption('#inside-granularity', 'residual');
      await page.click('#inside-patch');
      await page.waitForSelector('#inside table[data-name="patch"]', { timeout: 120000 });
      const p = await as.patch(ref, { clean: 'the cat sat on the mat', corrupted: 'the mat sat on the cat', tokens: ['c', 'm'], granularity: 'residual' });
      const shown = await page.locator('#inside table[data-name="patch"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
      assert.equal(shown.length, p.normalized.length);
      shown.forEach((v, i) => assert.ok(Math.abs(v - p.normalized[i]) < 1e-4, `patch cell ${i}`));
      assert.deepEqual(await axeProblems(page), []);
      await panel.screenshot({ path: path.join(dir, `inside-${lang}.png`) });
      // a bad pair of prompts: the panel says why, the page keeps working
      await page.fill('#inside-corrupted', 'the cat');
      await page.click('#inside-patch');
      await page.waitForFunction(() => /corrupted/.test(document.querySelector('#inside [data-box="patch-status"]').textContent), null, { timeout: 60000 });
      assert.match(await statusOf(page, 'patch'), /same length|长度|tokens/);
      // the digit-reversal example: its button switches the page to the bundled reverse model and its clean prompt
      // and fills the form; the heatmap is as.patch's for web/inside-presets.js REVERSE, layer 2 head 0 restoring most
      await page.click('#inside-reverse');
      await page.waitForFunction(() => window.__attnscope?.traceState?.model === 'reverse' && !document.documentElement.dataset.busy, null, { timeout: 60000 });
      assert.equal(await page.inputValue('#text'), REVERSE.clean);
      assert.deepEqual(await Promise.all(['#inside-clean', '#inside-corrupted', '#inside-token-a', '#inside-token-b'].map((id) => page.inputValue(id))),
        [REVERSE.clean, REVERSE.corrupted, ...REVERSE.tokens]);
      assert.ok((await page.locator('#inside [data-i18n="inside.reverseNote"]').textContent()).includes('0.59'));
      await page.selectOption('#inside-granularity', 'head');
      await page.click('#inside-patch');
      await page.waitForFunction(() => document.querySelectorAll('#inside table[data-name="patch"] td').length === 12, null, { timeout: 60000 });
      const rev = await as.loadBundled('reverse');
      try {
        const want = await as.patch(rev, { clean: REVERSE.clean, corrupted: REVERSE.corrupted, tokens: REVERSE.tokens });
        const got = await page.locator('#inside table[data-name="patch"] td').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
        got.forEach((v, i) => assert.ok(Math.abs(v - want.normalized[i]) < 1e-4, `reverse patch cell ${i}`));
        assert.equal(got.indexOf(Math.max(...got)), 2 * 4 + 0);
      } finally {
        rev.delete();
      }
      assert.deepEqual(await axeProblems(page), []);
      clean(rec);
    } finally {
      ref.delete();
    }
  });
}

test('inside: Cancel stops a sweep; the panel works on a phone', async () => {
  // a random decoder big enough that its sweep takes several chunks
  const text = 'attention is all you need and a little more text to make the sweep take a while to finish'.repeat(2);
  const { page, rec } = await open(`#arch=decoder&tokenizer=char&dModel=128&numHeads=8&numLayers=6&text=${encodeURIComponent(text)}`,
    { width: 390, height: 844 });
  await page.waitForFunction(() => window.__attnscope?.traceState && !document.documentElement.dataset.busy, null, { timeout: 60000 });
  await page.locator('#panel-inside').scrollIntoViewIfNeeded();
  await page.evaluate(() => {
    document.getElementById('inside-sweep').click();
    document.querySelector('#inside [data-box="sweep-cancel"]').click();
  });
  await page.waitForFunction(() => {
    const s = document.querySelector('#inside [data-box="sweep-status"]').textContent;
    return s && !/…/.test(s);
  }, null, { timeout: 120000 });
  assert.equal(await statusOf(page, 'sweep'), 'cancelled');
  assert.equal(await page.locator('#inside table[data-name="sweep"]').count(), 0);
  // the panel fits the phone: no horizontal overflow of the page
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `page overflows by ${overflow}px`);
  await page.click('#inside-lens');
  await page.waitForSelector('#inside table[data-name="lens"]', { timeout: 60000 });
  await page.locator('#panel-inside').screenshot({ path: path.join(dir, 'inside-phone.png') });
  clean(rec);
});
