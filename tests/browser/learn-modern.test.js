// The guided path's steps 11–13 (issue 28: RoPE, shared K/V heads, sinks) in the real browser: drawn in both
// languages on desktop and phone without errors or horizontal overflow, axe-core 0 serious/critical, and each
// try-this answered right with the module's own numbers (as.ropeExplain, hand-worked KV-cache size, as.headScores
// on the english model) recomputed here in Node. ATTNSCOPE_SHOTS=DIR saves screenshots there.
// Run: node --test --test-concurrency=1 tests/browser/learn-modern.test.js
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createAttnScope } from 'attnscope';
import { useBrowser, root } from './harness.js';

const openPage = useBrowser();
const AXE = readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const SHOTS = process.env.ATTNSCOPE_SHOTS;
const PHONE = { width: 390, height: 844 };
let as;
before(async () => { as = await createAttnScope(); });

const open = (n, lang = 'en', viewport = undefined) => openPage(`learn/#step=${n}&lang=${lang}`, viewport,
  (page) => page.waitForFunction((k) => window.__learn?.ready && window.__learn.step === k, n, { timeout: 60000 }));

async function answer(page, value) {
  await page.locator('#try-answer').fill(String(value));
  await page.locator('#try-check').click();
  return page.locator('.l-try').getAttribute('data-verdict');
}

test('learn steps 11–13: both languages, desktop and phone, no errors, no overflow, axe clean', async () => {
  for (const lang of ['en', 'zh-CN']) {
    for (const n of [11, 12, 13]) {
      for (const [vp, tag] of [[undefined, 'desktop'], [PHONE, 'phone']]) {
        const { page, rec } = await open(n, lang, vp);
        const info = await page.evaluate(() => ({
          title: document.querySelector('#step h2')?.textContent,
          liveErrors: [...document.querySelectorAll('#step .l-live .l-error')].map((e) => e.textContent),
          overflow: document.documentElement.scrollWidth - window.innerWidth,
        }));
        assert.ok(info.title.startsWith(`${n} · `), info.title);
        assert.deepEqual(info.liveErrors, []);
        assert.ok(info.overflow <= 1, `step ${n} ${lang} ${tag}: overflow ${info.overflow}`);
        if (tag === 'desktop') {
          await page.evaluate(AXE);
          const v = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
            .filter((x) => x.impact === 'serious' || x.impact === 'critical').map((x) => `${x.id}: ${x.nodes[0].target.join(' ')}`));
          assert.deepEqual(v, [], `step ${n} ${lang}`);
        }
        if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `learn-step${n}-${lang}-${tag}.png`), fullPage: true });
        assert.deepEqual(rec.errors, []);
        await page.close();
      }
    }
  }
});

test('learn steps 11–13: the try-this answers are the module\'s numbers', async () => {
  // 11: q = k = ones at (10, 4) moved by 1000 → the same score as at (10, 4)
  let { page } = await open(11);
  for (const [id, v] of [['#s11-m', 10], ['#s11-n', 4], ['#s11-shift', 1000]]) await page.locator(id).fill(String(v));
  const ones = new Float32Array(64).fill(1);
  const spec = { headDim: 64, theta: 500000, maxPositions: 131072, scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } };
  const want = as.ropeExplain({ ...spec, q: ones, k: ones, m: 10, n: 4 }).score;
  assert.equal(await answer(page, want.toFixed(4)), 'right');
  await page.close();
  // 12: 2 × 16 × 8 × 64 × 2048 × 2 bytes = 64 MiB
  ({ page } = await open(12));
  assert.equal(await answer(page, 64), 'right');
  assert.equal(await answer(page, 256), 'wrong');
  await page.close();
  // 13: the english model's largest sink share on the step's text
  ({ page } = await open(13));
  const model = await as.loadBundled('english');
  const r = model.run('The cat sat on the mat because it was tired.');
  const top = Math.max(...as.headScores({ weights: r.layers.map((L) => L.attention.weights), numHeads: r.numHeads, n: r.n }).sinkShare);
  model.delete();
  assert.equal(await answer(page, top.toFixed(3)), 'right');
  await page.close();
});
