// Real-browser tests of the guided path "Learn attention" (web/learn/, issue 15). Same harness as page.test.js
// (tests/browser/harness.js): playwright-core + Debian's chromium on build/site; every page fails its test on a
// console error (a CSP violation by the formulas included), a pageerror, a dialog or an off-origin request.
// The numbers each step shows are compared with the module's results computed here in Node (an instance of
// its own, from bindings/js + dist), with hand-worked values and with the published digits of "Your journey
// starts with one step"; every "try this" must accept the right answer and reject a wrong one.
// Screenshots of every step in both languages (desktop and phone): build/screenshots/learn/.
// Run: node --test --test-concurrency=1 tests/browser/learn.test.js
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { useBrowser, afterDraw, clean, shots } from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { gaussians, meanVar } from '../../web/learn/numbers.js';
import { keys, has, t, setLanguage } from '../../web/i18n.js';
import '../../web/learn/locales/en.js';
import '../../web/learn/locales/zh-CN.js';

const openPage = useBrowser();
const dir = path.join(shots, 'learn');
const PHONE = { width: 390, height: 844 };
let as;
const models = {};

before(async () => {
  mkdirSync(dir, { recursive: true });
  as = await createAttnScope();
  for (const name of ['nadaraya-watson', 'dates-bahdanau', 'english']) models[name] = await as.loadBundled(name);
});

/** Opens step n in `lang` and waits until it is drawn. */
const open = (n, lang = 'en', viewport = undefined) => openPage(`learn/#step=${n}&lang=${lang}`, viewport,
  (page) => page.waitForFunction((k) => window.__learn?.ready && window.__learn.step === k, n, { timeout: 30000 }).catch(async (e) => {
    const state = await page.evaluate(() => JSON.stringify({ learn: window.__learn, status: document.getElementById('status')?.textContent, error: document.getElementById('error')?.textContent, hash: location.hash }));
    throw new Error(`step ${n} (${lang}) did not draw: ${state}; ${e.message}`);
  }));

/** The number shown in [data-k=key] ('−' as minus, '−∞' as -Infinity). */
const shown = (page, key) => page.locator(`[data-k="${key}"]`).first().textContent().then((s) => (s === '−∞' ? -Infinity : Number(s.replace('−', '-'))));
const shownText = (page, key) => page.locator(`[data-k="${key}"]`).first().textContent();

/** The learn strings of both catalogs: { en: { key: text }, zh: { key: text } }. */
function catalogs() {
  const ks = keys('en').filter((k) => /^(learn|try|s\d+)\./.test(k));
  const read = (lang) => { setLanguage(lang); return Object.fromEntries(ks.map((k) => [k, t(k)])); };
  const out = { en: read('en'), zh: read('zh-CN') };
  setLanguage('en');
  return out;
}

/** Types `value` into the "try this" box and checks it; returns the box's verdict. */
async function tryAnswer(page, value) {
  await page.fill('#try-answer', String(value));
  await page.click('#try-check');
  return page.locator('.l-try').getAttribute('data-verdict');
}

/** Changes an input (typed, or a slider moved) and waits for the live view to be redrawn. */
const edit = (page, selector, value) => afterDraw(page, async () => {
  if (await page.getAttribute(selector, 'type') === 'range') {
    await page.$eval(selector, (el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); }, String(value));
  } else {
    await page.fill(selector, String(value));
  }
});

test('learn: both catalogs have the same keys and every zh-CN string is translated', () => {
  const en = keys('en').filter((k) => /^(learn|try|s\d+)\./.test(k));
  assert.ok(en.length > 150, `${en.length} keys`);
  for (const k of en) {
    assert.ok(has('zh-CN', k), `zh-CN has ${k}`);
  }
  const { en: enV, zh: zhV } = catalogs();
  // the same in both only when it is notation (dₖ, Var(q·k), W_Q W_K W_V, PE(p = {p})), never an English word
  const same = en.filter((k) => zhV[k] === enV[k] && /[a-z]{3}/i.test(enV[k].replace(/\{\w+\}|Var|W_[QKV]/g, '')));
  assert.deepEqual(same, [], 'no zh-CN string is the English one');
});

test('learn: every step renders in English and 中文 with formulas, no console error and no request leaving the origin; screenshots', async () => {
  const { en: enV, zh: zhV } = catalogs();
  const english = Object.keys(enV).filter((k) => enV[k] !== zhV[k]).map((k) => enV[k].split('{')[0].trim()).filter((s) => s.length >= 12);
  for (const lang of ['en', 'zh-CN']) {
    for (let n = 1; n <= 10; n++) {
      for (const [vp, tag] of [[undefined, 'desktop'], [PHONE, 'phone']]) {
        const { page, rec } = await open(n, lang, vp);
        const info = await page.evaluate(() => ({
          lang: document.documentElement.lang,
          title: document.querySelector('#step h2')?.textContent,
          katex: document.querySelectorAll('#step .katex').length,
          katexErrors: document.querySelectorAll('#step .katex-error').length,
          live: document.querySelectorAll('#step .l-live').length,
          liveErrors: [...document.querySelectorAll('#step .l-live .l-error')].map((e) => e.textContent),
          error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent,
          overflow: document.documentElement.scrollWidth - window.innerWidth,
          text: document.body.innerText,
        }));
        assert.equal(info.lang, lang);
        assert.ok(info.title.startsWith(`${n} · `), info.title);
        assert.ok(info.katex >= 1, `step ${n}: formulas typeset`);
        assert.equal(info.katexErrors, 0);
        assert.ok(info.live >= 1, `step ${n}: a live view`);
        assert.deepEqual(info.liveErrors, []);
        assert.equal(info.error, null);
        assert.ok(info.overflow <= 0, `step ${n} ${lang} ${tag}: no sideways scrolling (${info.overflow}px)`);
        if (lang === 'zh-CN') {
          const leaked = english.filter((s) => info.text.includes(s));
          assert.deepEqual(leaked, [], `step ${n}: no English UI string in zh-CN`);
        }
        await page.screenshot({ path: path.join(dir, `step-${String(n).padStart(2, '0')}-${lang}-${tag}.png`), fullPage: true });
        assert.deepEqual(rec.failed, [], `step ${n} ${lang} ${tag}: every request answered`);
        clean(rec);
        await page.close();
      }
    }
  }
});

test('learn: step 5 reproduces every published digit of "Your journey starts with one step", inputs editable', async () => {
  const { page, rec } = await open(5);
  const row = [];
  for (let j = 0; j < 6; j++) row.push(await shownText(page, `w-1-${j}`));
  assert.deepEqual(row, ['0.1385', '0.2379', '0.2333', '0.1240', '0.1082', '0.1581']);
  const ctx = [];
  for (let j = 0; j < 3; j++) ctx.push(await shownText(page, `ctx-1-${j}`));
  assert.deepEqual(ctx, ['0.4419', '0.6515', '0.5683']);
  // every cell against the module in Node, before and after an edit
  const x = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64], [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]];
  const compare = async () => {
    const r = as.simpleSelfAttention({ x: Float32Array.from(x.flat()), n: 6, d: 3 });
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 6; j++) {
        assert.ok(Math.abs(await shown(page, `sc-${i}-${j}`) - r.scores[i * 6 + j]) < 6e-5);
        assert.ok(Math.abs(await shown(page, `w-${i}-${j}`) - r.weights[i * 6 + j]) < 6e-5);
      }
      for (let j = 0; j < 3; j++) assert.ok(Math.abs(await shown(page, `ctx-${i}-${j}`) - r.context[i * 3 + j]) < 6e-5);
    }
  };
  await compare();
  x[1][0] = 1.2;
  await edit(page, 'input[data-x="1-0"]', 1.2);
  await compare();
  assert.equal(await shownText(page, 'sc-1-0'), (1.2 * 0.43 + 0.87 * 0.15 + 0.66 * 0.89).toFixed(4));
  clean(rec);
  await page.close();
});

test('learn: the numbers of steps 1–4 equal the module\'s (and plain arithmetic)', async () => {
  // 1: softmax(q·kᵢ) with q = (1, 1, 0), float64 here
  let { page, rec } = await open(1);
  const K = [[2, 0.2, 0], [0.3, 2, 0.2], [1.5, 1.2, 0], [0, 0.2, 2]];
  const e = K.map((k) => Math.exp(k[0] + k[1]));
  for (let i = 0; i < 4; i++) assert.ok(Math.abs(await shown(page, `w-${i}`) - e[i] / e.reduce((a, b) => a + b)) < 6e-5);
  clean(rec);
  await page.close();

  // 2: test MSE with w = 1 and with the learned w; w = 0 gives 1/50 everywhere
  ({ page, rec } = await open(2));
  const nw = models['nadaraya-watson'];
  const mse = (w) => {
    const y = as.kernelRegression({ xTrain: nw.config.xTrain, yTrain: nw.config.yTrain, xQuery: nw.config.xTest, w }).yPred;
    return y.reduce((s, v, i) => s + (v - nw.config.yTrue[i]) ** 2, 0) / y.length;
  };
  assert.ok(Math.abs(await shown(page, 'mse-w') - mse(1)) < 6e-5);
  assert.ok(Math.abs(await shown(page, 'mse-learned') - mse(nw.config.w)) < 6e-5);
  assert.ok(Math.abs(await shown(page, 'mse-learned') - 0.070) < 1e-3, 'README: test MSE 0.070 with the learned w');
  await edit(page, '#s2-w', 0);
  assert.equal(await shownText(page, 'kw-0-0'), '0.02');
  assert.equal(await shownText(page, 'kw-0-49'), '0.02');
  clean(rec);
  await page.close();

  // 3: Var(q·k) over the same seeded vectors, computed by the module here; it grows like dₖ, scaled stays near 1
  ({ page, rec } = await open(3));
  for (const dk of [4, 16, 64, 256]) {
    const q = gaussians(128 * dk, 1000 + dk);
    const k = gaussians(128 * dk, 2000 + dk);
    const r = as.scaledDotProductAttention({ q, k, v: new Float32Array(128), nq: 128, nk: 128, dk, dv: 1, scale: 1 });
    const v = meanVar(r.scores).variance;
    assert.ok(Math.abs(await shown(page, `var-${dk}`) - v) < 0.006 + 1e-4 * v, `dk ${dk}`);
    assert.ok(Math.abs(v / dk - 1) < 0.2, `Var(q·k) ≈ dₖ (${v} for ${dk})`);
    assert.ok(Math.abs(await shown(page, `vars-${dk}`) - v / dk) < 6e-4);
  }
  // masked softmax: keys ≥ validLen get −∞ and 0, the rest are the softmax of the shown scores
  for (const valid of [3, 1, 5]) {
    await edit(page, '#s3-valid', valid);
    const sc = []; const w = [];
    for (let j = 0; j < 5; j++) { sc.push(await shown(page, `ad-score-0-${j}`)); w.push(await shown(page, `ad-w-0-${j}`)); }
    const ex = sc.map((s) => (s === -Infinity ? 0 : Math.exp(s)));
    const sum = ex.reduce((a, b) => a + b);
    for (let j = 0; j < 5; j++) {
      assert.equal(sc[j] === -Infinity, j >= valid);
      assert.ok(Math.abs(w[j] - ex[j] / sum) < 2e-3, `validLen ${valid}, key ${j}`);
    }
  }
  clean(rec);
  await page.close();

  // 4: the dates-bahdanau alignment and output, then another date
  ({ page, rec } = await open(4));
  for (const source of ['22 Nov 2026', 'Nov 5, 2027']) {
    if (source !== '22 Nov 2026') await edit(page, '#s4-source', source);
    const r = models['dates-bahdanau'].run(source);
    assert.equal(await shownText(page, 'output'), models['dates-bahdanau'].generate(source).text);
    for (const [ti, sj] of [[0, 0], [5, 6], [r.steps - 1, r.sourceLength - 1], [3, 9]]) {
      assert.ok(Math.abs(await shown(page, `al-${ti}-${sj}`) - r.weights[ti * r.sourceLength + sj]) < 6e-3);
    }
    for (let j = 0; j < r.sourceLength; j++) assert.ok(Math.abs(await shown(page, `row-${j}`) - r.weights[5 * r.sourceLength + j]) < 6e-5);
  }
  assert.equal(await shownText(page, 'output'), '2027-11-05');
  clean(rec);
  await page.close();
});

test('learn: the numbers of steps 6–10 equal the module\'s', async () => {
  const en = models.english;
  // 6: the five largest weights of the 't' of "it" (layer 3, head 1), then layer 1 head 2
  let { page, rec } = await open(6);
  const text = 'The animal didn\'t cross the street because it was too tired';
  const q = text.indexOf(' it') + 2;
  const top = (layer, head) => {
    const r = en.run(text);
    const w = r.layers[layer].attention.weights;
    return Array.from(w.subarray((head * r.n + q) * r.n, (head * r.n + q) * r.n + q + 1)).sort((a, b) => b - a).slice(0, 5);
  };
  for (const [layer, head] of [[2, 0], [0, 1]]) {
    if (layer !== 2) {
      await afterDraw(page, () => page.selectOption('#s6-layer', { value: String(layer) }));
      await afterDraw(page, () => page.selectOption('#s6-head', { value: String(head) }));
    }
    const want = top(layer, head);
    for (let i = 0; i < 5; i++) assert.ok(Math.abs(await shown(page, `top-${i}`) - want[i]) < 6e-5, `layer ${layer} head ${head} #${i}`);
  }
  clean(rec);
  await page.close();

  // 7: PE cells against sin/cos and the module; the rotated pair equals PE(p + k)
  ({ page, rec } = await open(7));
  const pe = as.positionalEncoding({ n: 48, d: 16 });
  for (const [p, k] of [[5, 3], [11, 7]]) {
    if (p !== 5) {
      await edit(page, '#s7-p', p);
      await edit(page, '#s7-k', k);
    }
    const om = 10000 ** (-2 / 16);
    assert.ok(Math.abs(await shown(page, 'rot-0-0') - Math.sin(p * om)) < 6e-5);
    assert.ok(Math.abs(await shown(page, 'rot-0-1') - pe[p * 16 + 3]) < 6e-5);
    assert.ok(Math.abs(await shown(page, 'rot-1-0') - Math.sin((p + k) * om)) < 1e-4);
    assert.ok(Math.abs(await shown(page, 'rot-1-1') - Math.cos((p + k) * om)) < 1e-4);
    assert.ok(Math.abs(await shown(page, 'rot-2-0') - pe[(p + k) * 16 + 2]) < 6e-5);
  }
  // "dog bites man" vs "man bites dog": dog's context is the same without PE, different with it
  const X = { dog: [0.9, 0.1, 0.3, 0.2], bites: [0.1, 0.8, 0.2, 0.5], man: [0.7, 0.2, 0.6, 0.1] };
  const pe3 = as.positionalEncoding({ n: 3, d: 4 });
  const dogContext = (words, withPe) => {
    const x = Float32Array.from(words.flatMap((w, i) => X[w].map((v, j) => v + (withPe ? pe3[i * 4 + j] : 0))));
    const at = words.indexOf('dog');
    return as.simpleSelfAttention({ x, n: 3, d: 4 }).context.slice(at * 4, at * 4 + 4);
  };
  const orders = [[['dog', 'bites', 'man'], false], [['man', 'bites', 'dog'], false], [['dog', 'bites', 'man'], true], [['man', 'bites', 'dog'], true]];
  const ord = [];
  for (let r = 0; r < 4; r++) {
    const want = dogContext(...orders[r]);
    ord.push([]);
    for (let c = 0; c < 4; c++) {
      ord[r].push(await shownText(page, `ord-${r}-${c}`));
      assert.ok(Math.abs(Number(ord[r][c].replace('−', '-')) - want[c]) < 6e-5);
    }
  }
  assert.deepEqual(ord[0], ord[1], 'without PE the order does not show');
  assert.notDeepEqual(ord[2], ord[3], 'with PE it does');
  for (let i = 0; i < 8; i++) assert.ok(Math.abs(await shown(page, `wave-0-${i}`) - 2 * Math.PI * 10000 ** (2 * i / 16)) < 0.06);
  clean(rec);
  await page.close();

  // 8: each head's mean distance Σᵢⱼ wᵢⱼ|i − j| / n, written out here
  ({ page, rec } = await open(8));
  const dist = (txt, layer) => {
    const r = en.run(txt);
    const w = r.layers[layer].attention.weights;
    return [0, 1, 2, 3].map((hd) => {
      let s = 0;
      for (let i = 0; i < r.n; i++) for (let j = 0; j < r.n; j++) s += w[(hd * r.n + i) * r.n + j] * Math.abs(i - j);
      return s / r.n;
    });
  };
  for (const layer of [0, 2]) {
    if (layer) await afterDraw(page, () => page.selectOption('#s8-layer', { value: String(layer) }));
    const want = dist('the cat sat on the mat, and the dog sat too', layer);
    for (let hd = 0; hd < 4; hd++) assert.ok(Math.abs(await shown(page, `dist-${hd}`) - want[hd]) < 6e-3);
  }
  clean(rec);
  await page.close();

  // 9: LayerNorm of the typed vector, μ and σ²
  ({ page, rec } = await open(9));
  for (const x of [[1, 2, 3, 4], [2, -1, 0.5, 7, 3]]) {
    if (x.length !== 4) await edit(page, '#s9-x', x.join(', '));
    const y = as.layerNorm({ x: Float32Array.from(x), n: 1, d: x.length });
    const mu = x.reduce((a, b) => a + b) / x.length;
    assert.ok(Math.abs(await shown(page, 'mu') - mu) < 6e-5);
    assert.ok(Math.abs(await shown(page, 'var') - x.reduce((a, b) => a + (b - mu) ** 2, 0) / x.length) < 6e-5);
    for (let i = 0; i < x.length; i++) assert.ok(Math.abs(await shown(page, `ln-1-${i}`) - y[i]) < 6e-5);
  }
  clean(rec);
  await page.close();

  // 10: the next-character top 5, the masked triangle, greedy generation
  ({ page, rec } = await open(10));
  const prompt = 'The cat sat on th';
  const r = en.run(prompt);
  for (let i = 0; i < 5; i++) assert.ok(Math.abs(await shown(page, `next-${i}`) - r.next.probs[i]) < 6e-5);
  assert.equal(await shown(page, 'sc-0-1'), -Infinity);
  assert.equal(await shown(page, 'sc-6-7'), -Infinity);
  assert.ok(Number.isFinite(await shown(page, 'sc-7-0')));
  await afterDraw(page, () => page.click('#s10-generate'));
  assert.equal(await shownText(page, 'generated'), prompt + en.generate(prompt, { maxNewTokens: 40 }).text);
  clean(rec);
  await page.close();
});

test('learn: every "try this" accepts the right answer and rejects a wrong one', async () => {
  const en = models.english;
  const itText = 'The animal didn\'t cross the street because it was too tired';
  const itRow = (() => {
    const r = en.run(itText);
    const q = itText.indexOf(' it') + 2;
    return r.layers[2].attention.weights.subarray(q * r.n, q * r.n + q + 1);
  })();
  const bahdanau = models['dates-bahdanau'].run('22 Nov 2026');
  const step6 = bahdanau.weights.subarray(5 * bahdanau.sourceLength, 6 * bahdanau.sourceLength);
  const heads = (() => {
    const r = en.run('the cat sat on the mat, and the dog sat too');
    const w = r.layers[0].attention.weights;
    const d = [0, 1, 2, 3].map((hd) => {
      let s = 0;
      for (let i = 0; i < r.n; i++) for (let j = 0; j < r.n; j++) s += w[(hd * r.n + i) * r.n + j] * Math.abs(i - j);
      return s;
    });
    return d.indexOf(Math.max(...d)) + 1;
  })();
  const yTrain = models['nadaraya-watson'].config.yTrain;
  const yMean = yTrain.reduce((a, b) => a + b) / yTrain.length;
  // step → [right answer (typed as a learner would), wrong answer]
  const cases = {
    1: ['0.25', '0.3'],
    2: [yMean.toFixed(3), (yMean + 0.05).toFixed(3)],
    3: ['100', '10'],
    4: [String(step6.indexOf(Math.max(...step6)) + 1), String(step6.indexOf(Math.max(...step6)) + 2)],
    5: ['0.9544', '0.96'],
    6: [Math.max(...itRow).toFixed(3), (Math.max(...itRow) + 0.02).toFixed(3)],
    7: [Math.cos(2).toFixed(4), Math.sin(2).toFixed(4)],
    8: [String(heads), String((heads % 4) + 1)],
    9: [((1 - 2.5) / Math.sqrt(1.25 + 1e-5)).toFixed(4), '-1.5'],
    10: [String((17 * 16) / 2), String((17 * 17) / 2 + 0.5)],
  };
  for (let n = 1; n <= 10; n++) {
    for (const lang of n === 5 ? ['en', 'zh-CN'] : ['en']) {
      const { page, rec } = await open(n, lang);
      const [right, wrong] = cases[n];
      assert.equal(await tryAnswer(page, wrong), 'wrong', `step ${n}: ${wrong} rejected`);
      assert.equal(await tryAnswer(page, 'abc'), 'invalid', `step ${n}: not a number`);
      assert.equal(await tryAnswer(page, right), 'right', `step ${n}: ${right} accepted`);
      assert.equal(await page.locator('.l-nav-on .l-nav-ok').count(), 1, `step ${n}: marked solved`);
      clean(rec);
      await page.close();
    }
  }
  // a Chinese learner's full-width comma decimal is read as a number too
  const { page, rec } = await open(1, 'zh-CN');
  assert.equal(await tryAnswer(page, '０，２５'), 'right');
  clean(rec);
  await page.close();
});

test('learn: deep links, previous/next, ←/→, the language switch and progress kept locally', async () => {
  const { page, rec } = await open(5, 'zh-CN');
  assert.match(await page.locator('#step h2').textContent(), /^5 · 一步一步算自注意力$/);
  assert.equal(await page.locator('#prev').textContent(), '← 上一步');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => window.__learn.ready && window.__learn.step === 6);
  assert.match(page.url(), /#step=6&lang=zh-CN$/);
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => window.__learn.ready && window.__learn.step === 5);
  await page.click('#next');
  await page.waitForFunction(() => window.__learn.ready && window.__learn.step === 6);
  await page.click('#prev');
  await page.waitForFunction(() => window.__learn.ready && window.__learn.step === 5);
  // arrows typed into an input edit the input, not the step
  await page.focus('input[data-x="0-0"]');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => window.__learn.step), 5);
  // the language switch re-renders the step and keeps the inputs
  await edit(page, 'input[data-x="1-0"]', 1.2);
  await afterDraw(page, () => page.selectOption('#lang', 'en'));
  await page.waitForFunction(() => window.__learn.ready && document.querySelector('#step h2').textContent === '5 · Self-attention step by step');
  assert.match(page.url(), /#step=5&lang=en$/);
  assert.equal(await page.inputValue('input[data-x="1-0"]'), '1.2');
  // a nav link goes to its step; progress is in localStorage; a visit without a hash resumes there
  await page.click('.l-nav li:nth-child(9) a');
  await page.waitForFunction(() => window.__learn.ready && window.__learn.step === 9);
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('attnscope.learn.v1')));
  assert.equal(stored.last, 9);
  assert.ok(['journey', 'projections', 'block'].every((id) => stored.visited.includes(id)));
  clean(rec);
  await page.close();
  const again = await openPage('learn/', undefined, (p) => p.waitForFunction(() => window.__learn?.ready, null, { timeout: 30000 }));
  assert.equal(await again.page.evaluate(() => window.__learn.step), 9);
  clean(again.rec);
  await again.page.close();
});
