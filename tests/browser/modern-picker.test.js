// Real-browser tests of "Your own checkpoint…" with today's decoders (issues 25, 31; h31b): a Llama-shaped checkpoint
// given as its shards + model.safetensors.index.json + generation_config.json, a Gemma-2-shaped one as a single file
// (tests/fixtures/modern: tiny random checkpoints with float64 reference outputs in expected.json). The page shows
// the architecture in one line (from the module's model.config, not config.json re-read), every layer × head, the
// next-token top-k and generate, as the reference gives them; a wrong file names the file and leaves the model; Cancel
// stops a load. Both languages, axe-core clean. Screenshots go to ATTNSCOPE_SHOTS (default build/screenshots).
// Run: node --test --test-concurrency=1 tests/browser/modern-picker.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, settled, clean, errorText, shots as defaultShots, root,
} from './harness.js';

const open = useBrowser();
const shots = process.env.ATTNSCOPE_SHOTS ?? defaultShots;
mkdirSync(shots, { recursive: true });
const MODERN = path.join(root, 'tests', 'fixtures', 'modern');
const AXE = readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const expected = (c) => JSON.parse(readFileSync(path.join(MODERN, c, 'expected.json'), 'utf8'));
const file = (c, name, as = path.basename(name)) => ({ name: as, mimeType: 'application/octet-stream', buffer: readFileSync(path.join(MODERN, c, name)) });
const LLAMA = 'llama-f32-untied-gqa-llama3';
const GEMMA2 = 'gemma2-f32-softcap';

const llamaFiles = () => [file(LLAMA, 'config.json'), file(LLAMA, 'tokenizer.json'),
  file(LLAMA, 'sharded/model-00002-of-00002.safetensors'), file(LLAMA, 'sharded/model-00001-of-00002.safetensors'),
  file(LLAMA, 'sharded/model.safetensors.index.json'),
  { name: 'generation_config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ eos_token_id: [257] })) }];
const gemmaFiles = () => ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => file(GEMMA2, f));

/** Chooses `files` in the checkpoint picker and waits until the load has ended (loaded, refused or cancelled). */
async function choose(page, files) {
  if (await page.inputValue('#model') !== 'checkpoint') await page.selectOption('#model', 'checkpoint');
  // the picker reads index.json before the load starts, so the last load's message is still there for a moment:
  // wait for the message box (or the loading mark) to change first, then for the load to end
  await page.evaluate(() => {
    window.__ckptChanged = false;
    const seen = () => { window.__ckptChanged = true; };
    new MutationObserver(seen).observe(document.getElementById('ckpt-msg'), { childList: true, characterData: true, subtree: true, attributes: true });
    new MutationObserver(seen).observe(document.documentElement, { attributes: true, attributeFilter: ['data-loading'] });
  });
  await page.locator('#ckpt-files').setInputFiles(files);
  await page.waitForFunction(() => window.__ckptChanged && !document.documentElement.dataset.loading && document.getElementById('ckpt-msg').textContent !== ''
    && !/…$/.test(document.getElementById('ckpt-msg').textContent), null, { timeout: 60000 }); // 'Loading a, b…' while it loads
}

const checkpointShown = (page) => page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint'
  && !document.documentElement.dataset.busy, null, { timeout: 30000 });

async function axeProblems(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 3).join(', ')}`);
}

/** The trace on screen against the float64 reference: tokens' ids, every layer × head's weights, next top-k. */
async function checkTrace(page, ref, name) {
  const tr = await page.evaluate(() => {
    const x = window.__attnscope.trace;
    return { ids: Array.from(x.ids ?? []), n: x.n, weights: x.layers.map((ly) => Array.from(ly.attention.weights)) };
  });
  assert.deepEqual(tr.ids, ref.ids, `${name}: the checkpoint tokenizer's ids`);
  assert.equal(tr.weights.length, ref.attentions.length, `${name}: every layer`);
  tr.weights.forEach((w, l) => {
    assert.equal(w.length, ref.attentions[l].length, `${name}: layer ${l} has every head`);
    const err = Math.max(...w.map((v, c) => Math.abs(v - ref.attentions[l][c])));
    assert.ok(err <= 2e-5, `${name}: layer ${l} weights within 2e-5 of the reference (max ${err})`);
  });
  const next = await page.locator('#predictions [data-name="next"] li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.id)));
  assert.deepEqual(next, ref.next.ids, `${name}: next-token top-5 as the reference`);
}

for (const lang of ['en', 'zh-CN']) {
  test(`modern checkpoints (${lang}): Llama shards + index + generation_config, then Gemma 2; architecture line, every head, top-k, generate, bad file, axe`, async () => {
    const zh = lang === 'zh-CN';
    const llama = expected(LLAMA).texts[0];
    const { page, rec } = await open(`#text=${encodeURIComponent(llama.text)}&lang=${lang}`);
    assert.equal(await page.evaluate(() => window.__attnscope.info.pretrained), true, 'this build loads checkpoints');
    await choose(page, llamaFiles());
    await checkpointShown(page);
    const line = await page.textContent('#ckpt-msg');
    assert.match(line, zh
      ? /Llama · 2 层 · 4 个查询头共享 2 个 K\/V 头 · RoPE θ 500, llama3 ×8 · RMSNorm · SwiGLU · F32 50 kB/
      : /^Loaded in [\d.]+ s: Llama · 2 layers · 4 query heads sharing 2 K\/V heads · RoPE θ 500, llama3 ×8 · RMSNorm · SwiGLU · F32 50 kB\.$/);
    await checkTrace(page, llama, 'llama');
    // positions are a rotation inside attention: panel 3 says so and adds no (zero) PE table between E and X
    assert.match(await page.textContent('#positional-view .note'), zh ? /RoPE，θ = 500/ : /^Rotary positions \(RoPE, θ = 500\): no table is added/);
    assert.equal(await page.locator('#positional-view canvas[data-name="pe"]').count(), 0);
    // every layer × head reachable: a tab per layer, the model view's tiles for every layer × head
    assert.equal(await page.locator('#attention-view .tab').count(), 2);
    assert.equal(await page.locator('#model-view [data-layer][data-head]').count() >= 2 * 4 || await page.locator('canvas[data-kind="attention"]').count() >= 1, true);
    // the model view's selection marks follow the layer, though the K/V-sharing note comes first in the box
    const marksAt = () => page.$$eval('#model-view .mv-mark', (ms) => ms.map((m) => m.style.top).join());
    const before = await marksAt();
    assert.ok(before.length > 0, 'the model view marks the shown heads');
    await page.locator('#attention-view .tab').nth(1).click();
    await page.waitForFunction(() => document.querySelector('#attention-view .tab[aria-selected="true"]')?.dataset.layer === '1');
    await page.waitForFunction((b) => {
      const tops = [...document.querySelectorAll('#model-view .mv-mark')].map((m) => m.style.top).join();
      return tops.length > 0 && tops !== b;
    }, before, { timeout: 10000 });
    if (!zh) {
      await page.screenshot({ path: path.join(shots, 'desktop-llama-shaped.png'), fullPage: false });
      // generate: greedy, stopping at generation_config's eos (257), as the reference's ids say
      const runs = await page.evaluate(() => window.__attnscope.runs);
      await page.click('#generate');
      await settled(page, runs);
      assert.ok((await page.inputValue('#text')).length > llama.text.length, 'generate appended text');
      const r2 = await page.evaluate(() => window.__attnscope.runs);
      await page.fill('#text', llama.text); // back to the reference text
      await settled(page, r2);
    }
    const problems = await axeProblems(page);
    assert.deepEqual(problems, [], `axe (${lang}, llama loaded)`);

    // a wrong file: a shard of another checkpoint in place of shard 2 names it; the Llama model stays
    const bad = llamaFiles();
    bad[2] = { ...file(GEMMA2, 'model.safetensors'), name: 'model-00002-of-00002.safetensors' };
    await choose(page, bad);
    const msg = await page.textContent('#ckpt-msg');
    assert.match(msg, zh ? /model-0000[12]-of-00002\.safetensors/ : /^model-0000[12]-of-00002\.safetensors.*: .*the previous model stays\.$/);
    assert.equal(await page.getAttribute('#ckpt-msg', 'role'), 'alert');
    assert.deepEqual(await page.evaluate(() => Array.from(window.__attnscope.trace.ids)), llama.ids, 'the previous model is still shown');
    assert.match(await page.evaluate(() => window.__attnscope.info.checkpoint?.label ?? ''), /^Llama · /, 'and is still the loaded one');

    // an index that is not JSON is named before any load starts, and says the same: the Llama model stays
    const torn = llamaFiles();
    torn[4] = { ...torn[4], buffer: Buffer.from('{"weight_map": {"a": ') };
    await choose(page, torn);
    assert.match(await page.textContent('#ckpt-msg'), zh
      ? /^model\.safetensors\.index\.json: 不是有效的 JSON.*保留之前的模型。$/
      : /^model\.safetensors\.index\.json: not valid JSON \(.+\) — the previous model stays\.$/);
    assert.equal(await page.getAttribute('#ckpt-msg', 'role'), 'alert');
    assert.deepEqual(await page.evaluate(() => Array.from(window.__attnscope.trace.ids)), llama.ids, 'the previous model is still shown');

    // Gemma 2 as one file
    const gemma = expected(GEMMA2).texts[0];
    await choose(page, gemmaFiles());
    await checkpointShown(page);
    assert.match(await page.textContent('#ckpt-msg'), zh
      ? /Gemma 2 · 3 层 · 4 个查询头共享 2 个 K\/V 头 · RoPE θ 10000 · 2 个局部层（窗口 3）\+ 1 个全局层 · RMSNorm \(1 \+ w\) · GeGLU \(tanh\) · 软上限 2 \/ 3 · F32/
      : /Gemma 2 · 3 layers · 4 query heads sharing 2 K\/V heads · RoPE θ 10000 · 2 local \(window 3\) \+ 1 global layers · RMSNorm \(1 \+ w\) · GeGLU \(tanh\) · soft-capping 2 \/ 3 · F32 /);
    await checkTrace(page, gemma, 'gemma2');
    assert.equal(await page.locator('#attention-view .tab').count(), 3);
    if (!zh) await page.screenshot({ path: path.join(shots, 'desktop-gemma2-shaped.png') });
    assert.deepEqual(await axeProblems(page), [], `axe (${lang}, gemma 2 loaded)`);
    assert.equal(await errorText(page), null);
    clean(rec);
    await page.close();
  });
}

test('modern checkpoints: a missing shard is named; Cancel stops a load and the previous model stays; phone screenshots', async () => {
  const { page, rec } = await open('#text=Hello%20world', { width: 390, height: 844 });
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(llamaFiles().filter((f) => f.name !== 'model-00001-of-00002.safetensors'));
  await page.waitForFunction(() => /model-00001-of-00002\.safetensors/.test(document.getElementById('ckpt-msg').textContent), null, { timeout: 10000 })
    .catch(async (e) => { throw new Error(`${e.message}: the message is '${await page.textContent('#ckpt-msg')}'`); });
  await choose(page, llamaFiles());
  await checkpointShown(page);
  await page.screenshot({ path: path.join(shots, 'phone-llama-shaped.png') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no horizontal scroll on a phone (${overflow}px over)`);
  // Cancel: the load of a bigger checkpoint (Gemma 2's tensors fed one by one) is stopped from its first progress
  await page.evaluate(() => {
    const bar = document.getElementById('ckpt-progress');
    new MutationObserver((_, obs) => {
      if (!bar.hidden) {
        obs.disconnect();
        document.getElementById('ckpt-cancel').click();
      }
    }).observe(bar, { attributes: true });
  });
  await choose(page, gemmaFiles());
  assert.match(await page.textContent('#ckpt-msg'), /^Loading was cancelled; the previous model stays\.$/);
  assert.equal(await page.isVisible('#ckpt-cancel'), false);
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', 'ab ab');
  await settled(page, runs);
  assert.equal(await page.evaluate(() => window.__attnscope.trace.n), 5, 'the Llama model still runs');
  await choose(page, gemmaFiles());
  await checkpointShown(page);
  await page.screenshot({ path: path.join(shots, 'phone-gemma2-shaped.png') });
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});
