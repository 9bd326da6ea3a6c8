// The bilingual page in the real browser (tests/browser/harness.js): the zh-CN page shows no English UI string
// in any mode (every text node and every title / aria-label / placeholder / label attribute is walked; the
// user's text, tokens and the module's own messages sit in [data-no-i18n] containers or are Chinese input here),
// switching the language keeps the typed text and the state and recomputes nothing, `lang=` survives a reload,
// and without it the page follows the browser's languages. Screenshots: EN / 中文 × light / dark × desktop
// 1280×800 / phone 390×844 in build/screenshots/i18n/.
// Run: node --test --test-concurrency=1 tests/browser/i18n.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, afterDraw, clean, shots,
} from './harness.js';
import { englishWords } from './i18n-walk.js';

const open = useBrowser();
const dir = path.join(shots, 'i18n');
mkdirSync(dir, { recursive: true });

const ZH_TEXT = '注意力机制让每个词元关注其他词元。';
const ZH_SOURCE = '猫坐在垫子上。';
const ZH_TARGET = '那只猫坐着。';

/** Waits for the model trace and both attention-family views (generous: the machine may be shared). */
const allDrawn = (page) => page.waitForFunction(() => {
  const a = window.__attnscope;
  return a && a.runs > 0 && a.family.additive.runs > 0 && a.family.regression.runs > 0
    && Number(document.documentElement.dataset.drawn ?? 0) > 0 && !document.documentElement.dataset.busy;
}, null, { timeout: 120000 });

const MODES = [
  ['text, encoder', `#text=${encodeURIComponent(ZH_TEXT)}`],
  ['text, decoder, mean, filtered', `#text=${encodeURIComponent(ZH_TEXT)}&arch=decoder&agg=mean&thr=0.1&padding=1`],
  ['encoder–decoder, rollout', `#arch=encoder-decoder&source=${encodeURIComponent(ZH_SOURCE)}&target=${encodeURIComponent(ZH_TARGET)}&agg=rollout&positional=learned&normFirst=1`],
  ['simple attention, no positions', `#text=${encodeURIComponent(ZH_TEXT)}&attention=simple&positional=none`],
  ['worked example', '#mode=example'],
  ['bundled dates model, translation view', `#model=dates&text=${encodeURIComponent('2026年11月22日')}`],
];

test('i18n: the zh-CN page shows no English UI string in any mode', async () => {
  const problems = [];
  for (const [name, hash] of MODES) {
    const { page, rec } = await open(`${hash}&lang=zh-CN`, undefined, (p) => allDrawn(p).catch((e) => { throw new Error(`${name}: ${e.message}`); }));
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
    assert.equal(await page.inputValue('#lang'), 'zh-CN');
    if (/model=dates/.test(hash)) await page.waitForSelector('#translate-view .tr-view', { timeout: 60000 }); // its own answer
    // hover-only and keyboard-only texts too: a heatmap's tooltip and live region, the model view's
    const c = page.locator('canvas.hm-canvas').first();
    await c.focus();
    await page.keyboard.press('ArrowRight');
    if (await page.locator('#model-view canvas.mv-canvas').count()) await page.locator('#model-view canvas.mv-canvas').first().focus();
    for (const w of await englishWords(page)) problems.push(`${name}: ${w}`);
    clean(rec);
    await page.close();
  }
  assert.deepEqual(problems, [], 'no English word on the Chinese page');
});

test('i18n: the English page has no Chinese UI string and no raw key', async () => {
  const { page, rec } = await open('#lang=en', undefined, allDrawn);
  const bad = await page.evaluate(() => {
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (el.closest('[data-no-i18n], script, style, textarea, #lang')) continue;
      if (/[\u4e00-\u9fff]/.test(n.nodeValue) || /\b[a-z]+\.[a-z][A-Za-z]+\b/.test(n.nodeValue) && !/\.(json|txt|safetensors|bpe)\b/.test(n.nodeValue)) out.push(n.nodeValue.trim().slice(0, 80));
    }
    return out;
  });
  assert.deepEqual(bad, []);
  clean(rec);
  await page.close();
});

test('i18n: switching the language keeps the typed text and the state, recomputes nothing, and survives a reload', async () => {
  const { page, rec } = await open('#lang=en&numLayers=3', undefined, allDrawn);
  const typed = 'Cats chase mice, 猫追老鼠 🙂';
  const runs0 = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', typed);
  await page.waitForFunction((n) => window.__attnscope.runs > n && !document.documentElement.dataset.busy, runs0, { timeout: 120000 });
  await afterDraw(page, () => page.locator('#attention-view .tab[data-layer="2"]').click());
  await page.selectOption('#agg', 'max');
  await page.waitForFunction(() => window.__attnscope.state.agg === 'max');
  const before = await page.evaluate(() => ({ state: window.__attnscope.state, runs: window.__attnscope.runs, n: window.__attnscope.trace.n }));
  assert.equal(await page.textContent('#panel-attention h2'), '4 · Attention');

  await afterDraw(page, () => page.selectOption('#lang', 'zh-CN'));
  const after = await page.evaluate(() => ({ state: window.__attnscope.state, runs: window.__attnscope.runs, n: window.__attnscope.trace.n }));
  assert.equal(await page.inputValue('#text'), typed, 'the typed text stays');
  assert.deepEqual({ ...after.state, lang: '' }, { ...before.state, lang: '' }, 'the state is unchanged but for the language');
  assert.equal(after.state.lang, 'zh-CN');
  assert.equal(after.runs, before.runs, 'a language switch redraws, it does not recompute');
  assert.equal(await page.textContent('#panel-attention h2'), '4 · 注意力');
  assert.equal(await page.getAttribute('#attention-view .tab[data-layer="2"]', 'aria-selected'), 'true', 'the layer shown stays');
  assert.equal(await page.textContent('#attention-view .tab[data-layer="2"]'), '第 3 层');
  assert.equal(await page.evaluate(() => document.title), 'attnscope — 在浏览器里算注意力');
  assert.equal(await page.getAttribute('#text', 'placeholder'), '随便输入点什么——英文、中文、表情 🙂、代码…');
  assert.match(await page.textContent('#status'), /^SIMD128 wasm · v\d+\.\d+\.\d+ · \d+ 个线程 · 计算 [\d.]+ ms，绘制 [\d.]+ ms$/);
  assert.match(page.url(), /[#&]lang=zh-CN/);
  assert.equal(await page.getAttribute('#learn-link', 'href'), 'learn/#lang=zh-CN', 'the guided path opens in the same language');

  await page.reload();
  await allDrawn(page);
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN', 'lang= survives a reload');
  assert.equal(await page.inputValue('#text'), typed);
  assert.equal(await page.evaluate(() => window.__attnscope.state.agg), 'max');
  assert.equal(await page.textContent('#panel-attention h2'), '4 · 注意力');

  await afterDraw(page, () => page.selectOption('#lang', 'en'));
  assert.equal(await page.textContent('#panel-attention h2'), '4 · Attention');
  assert.match(page.url(), /[#&]lang=en/, 'an explicit English choice is kept too (it overrides a Chinese browser)');
  clean(rec);
  await page.close();
});

test('i18n: without lang= the page follows the browser\'s languages', async () => {
  for (const [langs, want] of [[['zh-CN', 'zh', 'en'], 'zh-CN'], [['zh-Hans'], 'zh-CN'], [['fr-FR', 'en-GB'], 'en'], [['de'], 'en']]) {
    const { page, rec } = await open('', undefined, async (p) => {
      await p.addInitScript((l) => Object.defineProperty(Navigator.prototype, 'languages', { get: () => l }), langs);
      await p.reload();
      await allDrawn(p);
    });
    assert.equal(await page.evaluate(() => document.documentElement.lang), want, langs.join(','));
    assert.equal(await page.inputValue('#lang'), want);
    assert.equal(await page.evaluate(() => window.__attnscope.state.lang), '', 'the browser\'s choice is not written into the link');
    clean(rec);
    await page.close();
  }
});

test('i18n: screenshots, EN / 中文 × light / dark × desktop / phone', async () => {
  for (const [vp, size] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
    for (const scheme of ['light', 'dark']) {
      for (const lang of ['en', 'zh-CN']) {
        const text = lang === 'en' ? 'The animal didn\'t cross the street because it was too tired.' : ZH_TEXT;
        const { page, rec } = await open(`#lang=${lang}&text=${encodeURIComponent(text)}&tokenizer=${lang === 'en' ? 'word' : 'char'}`, size, async (p) => {
          await p.emulateMedia({ colorScheme: scheme });
          await allDrawn(p);
        });
        const base = path.join(dir, `${lang}-${scheme}-${vp}`);
        await page.screenshot({ path: `${base}-top.png` });
        await page.locator('#panel-attention').scrollIntoViewIfNeeded();
        await page.evaluate(() => document.getElementById('panel-attention').scrollIntoView({ block: 'start' }));
        await page.locator('canvas[data-kind="attention"]').first().focus();
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowRight');
        await page.screenshot({ path: `${base}-attention.png` });
        clean(rec);
        await page.close();
      }
    }
  }
});
