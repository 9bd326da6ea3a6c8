// The RoPE panel (issue 28) in the real browser (tests/browser/harness.js): drawn from as.ropeExplain through the
// worker for the random model (Llama 3.2's settings shown) and for a loaded Llama-shaped checkpoint (its own θ and
// llama3 scaling); the dials, the offset curve and the same-offset demonstration; the numbers equal the module's
// own (recomputed here through the public API in Node); both languages; axe-core 0 serious/critical on the panel;
// a phone viewport without horizontal overflow. ATTNSCOPE_SHOTS=DIR saves screenshots of the panel there.
// Run: node --test --test-concurrency=1 tests/browser/rope.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createAttnScope } from 'attnscope';
import { useBrowser, root } from './harness.js';
import { LLAMA32, ropeSettings } from '../../web/panels/rope.js';
import { mulberry32 } from '../../web/rng.js';

const open = useBrowser();
const AXE = readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const SHOTS = process.env.ATTNSCOPE_SHOTS;
const FIXTURE = path.join(root, 'tests', 'fixtures', 'modern', 'llama-f32-untied-gqa-llama3');

const ropeDrawn = (page) => page.waitForFunction(() => document.querySelector('#rope-out [data-name="rope-same"]'), null, { timeout: 120000 });

async function shot(page, name) {
  if (!SHOTS) return;
  await page.locator('#panel-rope').screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

async function axeOnPanel(page) {
  await page.evaluate(AXE);
  const v = await page.evaluate(async () => (await window.axe.run('#panel-rope', { resultTypes: ['violations'] })).violations
    .filter((x) => x.impact === 'serious' || x.impact === 'critical').map((x) => `${x.id}: ${x.nodes[0].target.join(' ')}`));
  assert.deepEqual(v, []);
}

/** The panel's sample q and k (mulberry32(28), as web/panels/rope.js draws them). */
function sample(d) {
  const r = mulberry32(28);
  const v = () => Float32Array.from({ length: d }, () => 2 * r() - 1);
  return [v(), v()];
}

test('RoPE panel: Llama 3.2 settings for a model without RoPE; the score shown is the module\'s; same offset, same score', async () => {
  const { page, rec } = await open('', { width: 1280, height: 900 }, ropeDrawn);
  await page.locator('#panel-rope').scrollIntoViewIfNeeded();
  assert.equal(await page.locator('#rope-out .rope-dial-fig').count(), 32);
  const same = await page.locator('[data-name="rope-same"]').textContent();
  const as = await createAttnScope();
  const [q, k] = sample(LLAMA32.headDim);
  const e = as.ropeExplain({ ...LLAMA32, q, k, m: 5, n: 2 });
  const moved = as.ropeExplain({ ...LLAMA32, q, k, m: 105, n: 102 });
  assert.ok(Math.abs(e.score - moved.score) <= 1e-6 * Math.abs(e.score));
  const shown = [...same.matchAll(/= ([-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/g)].map((x) => Number(x[1].replace('−', '-')));
  assert.equal(shown.length, 2, same);
  for (const v of shown) assert.ok(Math.abs(v - e.score) <= 1e-5 * Math.max(1, Math.abs(e.score)), `shown ${v}, module ${e.score}`);
  assert.match(await page.locator('[data-name="rope-settings"]').textContent(), /500000/);
  await axeOnPanel(page);
  await shot(page, 'rope-desktop-en');
  // a new position: the panel asks the worker again
  await page.locator('[data-rope="m"]').fill('40');
  await page.locator('[data-rope="m"]').dispatchEvent('change');
  await page.waitForFunction(() => /40/.test(document.querySelector('[data-name="rope-same"]')?.textContent ?? ''));
  // 中文
  await page.evaluate(() => { location.hash = 'lang=zh-CN'; });
  await page.waitForFunction(() => document.querySelector('#panel-rope h2')?.textContent.includes('旋转位置编码'));
  await ropeDrawn(page);
  await page.waitForFunction(() => document.querySelector('[data-name="rope-same"]')?.textContent.includes('偏移相同'));
  await axeOnPanel(page);
  await shot(page, 'rope-desktop-zh');
  assert.deepEqual(rec.errors, []);
  await page.close();
});

test('RoPE panel on a phone viewport: no horizontal overflow', async () => {
  const { page, rec } = await open('', { width: 390, height: 844 }, ropeDrawn);
  await page.locator('#panel-rope').scrollIntoViewIfNeeded();
  const over = await page.evaluate(() => document.querySelector('#panel-rope').scrollWidth - document.querySelector('#panel-rope').clientWidth);
  assert.ok(over <= 1, `the panel overflows by ${over}px`);
  await shot(page, 'rope-phone-en');
  assert.deepEqual(rec.errors, []);
  await page.close();
});

test("RoPE panel with a loaded Llama-shaped checkpoint: the model's θ and llama3 scaling", async () => {
  const { page, rec } = await open('', { width: 1280, height: 900 }, ropeDrawn);
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(FIXTURE, f)));
  await page.waitForFunction(() => /θ = 500\b/.test(document.querySelector('[data-name="rope-settings"]')?.textContent ?? ''), null, { timeout: 60000 });
  const cfg = await page.evaluate(() => window.__attnscope.trace.config);
  assert.equal(cfg.numKeyValueHeads, 2);
  assert.equal(ropeSettings(cfg).settings.scaling.type, 'llama3');
  assert.equal(await page.locator('#rope-out .rope-dial-fig').count(), 2); // head_dim 4: two pairs
  await shot(page, 'rope-desktop-llama-fixture');
  // shared K/V heads: the model view's groups and KV cache (4 query heads, 2 K/V heads), the step view's K/V head
  await page.waitForFunction(() => document.querySelector('[data-name="gqa"]') && document.querySelector('[data-name="kv-head"]'), null, { timeout: 60000 });
  const gqa = await page.locator('[data-name="gqa"]').textContent();
  assert.match(gqa, /4 query heads share 2 K\/V heads/);
  assert.match(gqa, /K\/V head 1: H1 H2/);
  assert.match(gqa, /K\/V head 2: H3 H4/);
  // 2 (K, V) × 2 layers × 2 K/V heads × head_dim 4 × 64 tokens × 2 bytes = 4096 B; full MHA twice that
  assert.match(await page.locator('[data-name="kv-cache"]').textContent(), /64 tokens.*0\.004 MiB.*0\.008 MiB.*2\.0×/);
  assert.match(await page.locator('[data-name="kv-head"]').textContent(), /H1 reads K\/V head 1 of 2/);
  // sinks: the model view's sink-share table equals mean_i w[i, 0] of the trace; the switch is marked when on
  const { mine, cells } = await page.evaluate(() => {
    const tr = window.__attnscope.trace, n = tr.n, H = tr.numHeads;
    const w = tr.layers[0].attention.weights;
    const mine = [...Array(H).keys()].map((h) => { let s = 0; for (let i = 0; i < n; i++) s += w[(h * n + i) * n]; return s / n; });
    const cells = [...document.querySelectorAll('table[data-metric="sink"] td[data-layer="0"]')].map((td) => Number(td.dataset.value));
    return { mine, cells };
  });
  assert.equal(cells.length, mine.length);
  cells.forEach((v, i) => assert.ok(Math.abs(v - mine[i]) < 1e-6));
  assert.equal(await page.locator('[data-name="sink-on"]').count(), 0);
  await page.locator('#hide-sink').check();
  await page.waitForSelector('[data-name="sink-on"]');
  const first = await page.evaluate(() => {
    const c = document.querySelector('#attention-view canvas[data-kind="attention"]');
    return c ? c.getAttribute('aria-label') ?? '' : '';
  });
  assert.equal(typeof first, 'string');
  await page.locator('#panel-attention').screenshot({ path: SHOTS ? path.join(SHOTS, 'sink-hidden-desktop.png') : path.join(root, 'build', 'sink.png') });
  if (SHOTS) await page.locator('#panel-model').screenshot({ path: path.join(SHOTS, 'model-gqa-sink-desktop.png') });
  await page.locator('#hide-sink').uncheck();
  await page.waitForFunction(() => !document.querySelector('[data-name="sink-on"]'));
  assert.deepEqual(rec.errors, []);
  await page.close();
});

test('phone viewport with the Llama-shaped checkpoint: the K/V groups, the sink table and the sink switch fit (中文)', async () => {
  const { page, rec } = await open('#lang=zh-CN', { width: 390, height: 844 }, ropeDrawn);
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(FIXTURE, f)));
  await page.waitForFunction(() => document.querySelector('[data-name="gqa"]') && document.querySelector('table[data-metric="sink"]'), null, { timeout: 60000 });
  assert.match(await page.locator('[data-name="gqa"]').textContent(), /4 个查询头共用 2 个键值头/);
  await page.locator('#hide-sink').check();
  await page.waitForSelector('[data-name="sink-on"]');
  for (const id of ['panel-model', 'panel-attention', 'panel-rope']) {
    const over = await page.evaluate((i) => document.getElementById(i).scrollWidth - document.getElementById(i).clientWidth, id);
    assert.ok(over <= 1, `${id} overflows by ${over}px`);
  }
  if (SHOTS) {
    await page.locator('#panel-model').screenshot({ path: path.join(SHOTS, 'model-gqa-sink-phone-zh.png') });
    await page.locator('#attention-view').screenshot({ path: path.join(SHOTS, 'sink-hidden-phone-zh.png') });
    await page.locator('#panel-rope').screenshot({ path: path.join(SHOTS, 'rope-phone-zh-llama-fixture.png') });
  }
  assert.deepEqual(rec.errors, []);
  await page.close();
});
