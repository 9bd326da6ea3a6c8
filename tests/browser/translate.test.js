// Real-browser tests of the translation view (panel 4c, issue 26): the bundled 'dates' model and a random
// Marian-shaped checkpoint made at test time (tests/browser/marian-shaped.js: Marian's tensor layout, source.spm /
// target.spm / vocab.json) chosen in the checkpoint picker. What the page shows — the generated target, the heatmap's
// cells, the chosen step's source weights, the CSV export — equals the module's own generate + run({ source,
// targetIds }) computed here in Node, through the page's pure numbers module (web/translate-model.js) and by hand;
// greedy and beam search; layers, heads (one, mean, max), words; clicks and the keyboard; a wrong file names itself
// and the model stays. Both UI languages, axe-core without serious or critical violations, a phone's viewport.
// Screenshots go to ATTNSCOPE_SHOTS (default build/screenshots): desktop 1280×900 and phone 390×844, EN and 中文.
// Run: ATTNSCOPE_SITE_BUILT=1 NODE_PATH=/usr/share/nodejs node --test tests/browser/translate.test.js
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, clean, errorText, axeProblems, shots as defaultShots, root,
} from './harness.js';
import { marianShaped } from './marian-shaped.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { Pipeline } from '../../web/pipeline.js';
import { translateWork } from '../../web/translate-work.js';
import { crossMap } from '../../web/translate-model.js';

const open = useBrowser();
const shots = process.env.ATTNSCOPE_SHOTS ?? defaultShots;
mkdirSync(shots, { recursive: true });
const DATES_TEXT = '22 Nov 2026';
const MARIAN_TEXT = 'Hello world 你好';
const ZH = { panel: '4c · 翻译：每个目标词元读了什么', greedy: '贪心', mean: '各头平均' };
const EN = { panel: '4c · Translation: what each target token read', greedy: 'greedy', mean: 'mean over heads' };

let as;
let pipeline;
before(async () => {
  as = await createAttnScope({ relaxedSimd: false }); // as the page's worker (bit for bit the same numbers)
  pipeline = new Pipeline(as);
});

/** The module's translation of `text` by the page's model `name` ('checkpoint': pipeline.checkpoint), here in Node. */
const reference = (name, text, numBeams = 1) => translateWork(pipeline, { mode: 'text', model: name, text }, { numBeams });

/** Waits until the translation view shows `want` ({ beams, layer, head, words, step } as its data-* say). */
async function shows(page, want = {}) {
  await page.waitForFunction((w) => {
    const v = document.querySelector('#translate-view .tr-view');
    return v && !document.getElementById('panel-translate').hidden && Object.entries(w).every(([k, x]) => v.dataset[k] === String(x));
  }, want, { timeout: 60000 });
}

/** The heatmap's cells (data-values: every cell of a map up to 1,024 cells) and its shape. */
const cells = (page) => page.evaluate(() => {
  const c = document.querySelector('#translate-view canvas[data-kind="translate"]');
  return { rows: Number(c.dataset.rows), cols: Number(c.dataset.cols), values: JSON.parse(c.dataset.values) };
});

/** Clicks one export button of the translation view and returns the file: { name, text }. */
async function download(page, what, format) {
  const [d] = await Promise.all([
    page.waitForEvent('download', { timeout: 15000 }),
    page.click(`#translate-view button[data-translate-export="${what}"][data-format="${format}"]`),
  ]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path()) };
}

/** A CSV export's matrix (the cells after layer, head, query_index, query_token) and its header's key tokens. */
function csvMatrix(text, cols) {
  const lines = text.trim().split('\r\n');
  return lines.slice(1).map((l) => l.split(',').slice(-cols).map(Number));
}

/** Every cell of `got` (numbers) equals `want` (a Float32Array's values) within `tol` (0: exactly). */
function sameCells(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: cell count`);
  let err = 0;
  got.forEach((v, k) => { err = Math.max(err, Math.abs(v - want[k])); });
  assert.ok(err <= tol, `${what}: max error ${err} > ${tol}`);
  return err;
}

async function chooseModel(page, files) {
  if (await page.inputValue('#model') !== 'checkpoint') await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(files);
  await page.waitForFunction(() => !document.documentElement.dataset.loading && document.getElementById('ckpt-msg').textContent !== ''
    && !/…$/.test(document.getElementById('ckpt-msg').textContent), null, { timeout: 60000 });
}

for (const lang of ['en', 'zh-CN']) {
  const L = lang === 'en' ? EN : ZH;
  test(`translation view (${lang}): the bundled dates model — target, heatmap, steps, layers, heads, words, beams, exports, axe`, async () => {
    const { page, rec } = await open(`#model=dates&text=${encodeURIComponent(DATES_TEXT)}&lang=${lang}`, { width: 1280, height: 900 });
    await shows(page, { beams: 1, layer: 0, head: 'mean' });
    assert.equal((await page.textContent('#panel-translate h2')).trim(), L.panel);
    assert.equal(await page.locator('#translate-beams option:checked').textContent(), L.greedy);
    assert.equal(await page.locator('#translate-head option:checked').textContent(), L.mean);
    const ref = await reference('dates', DATES_TEXT);
    assert.equal(ref.text, '2026-11-22');
    // the target line: what each step wrote (the returned tokens, then the end token)
    const target = await page.locator('#translate-view .tr-target button').evaluateAll((bs) => bs.map((b) => b.title));
    assert.deepEqual(target, ref.written.tokens);
    const source = await page.locator('#translate-view .tr-source [role="listitem"]').evaluateAll((xs) => xs.map((x) => x.title));
    assert.deepEqual(source, ref.source.tokens);
    // the heatmap: the mean over heads of the module's layer-0 cross-attention, by hand in float64
    const T = ref.written.tokens.length;
    const S = ref.source.tokens.length;
    const H = ref.numHeads;
    const m0 = await cells(page);
    assert.deepEqual([m0.rows, m0.cols], [T, S]);
    const mean = new Float64Array(T * S);
    for (let hd = 0; hd < H; hd++) for (let k = 0; k < T * S; k++) mean[k] += ref.cross[0][hd * T * S + k] / H;
    const meanErr = sameCells(m0.values, mean, 1e-6, 'mean over heads');
    // one head of layer 2: exactly the module's numbers
    await page.selectOption('#translate-layer', '1');
    await page.selectOption('#translate-head', '2');
    await shows(page, { layer: 1, head: 2 });
    sameCells((await cells(page)).values, ref.cross[1].subarray(2 * T * S, 3 * T * S), 0, 'layer 2 head 3');
    // a target token clicked: the step's row read out on the source tokens
    await page.click('#translate-view .tr-target button[data-index="5"]');
    await shows(page, { step: 5 });
    const row = await page.locator('#translate-view .tr-source [role="listitem"]').evaluateAll((xs) => xs.map((x) => Number(x.dataset.weight)));
    sameCells(row, ref.cross[1].subarray(2 * T * S + 5 * S, 2 * T * S + 6 * S), 0, 'step 6 source weights');
    const best = row.indexOf(Math.max(...row));
    assert.equal(await page.getAttribute('#translate-step p', 'data-strongest'), String(best));
    // the keyboard: arrow keys along the target move the step, the focus follows
    await page.focus('#translate-view .tr-target button[data-index="5"]');
    await page.keyboard.press('ArrowRight');
    await shows(page, { step: 6 });
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.index), '6');
    await page.keyboard.press('Home');
    await shows(page, { step: 0 });
    // the heatmap from the keyboard: Enter on a cell chooses its row's step
    await page.focus('#translate-view canvas[data-kind="translate"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await shows(page, { step: 2 });
    if (lang === 'en') await page.locator('#panel-translate').screenshot({ path: path.join(shots, 'translate-dates-desktop-en.png') });
    // exports: the CSV is the map drawn; the SVGs parse and name the tokens
    const csv = (await download(page, 'heatmap', 'csv')).body.toString('utf8');
    sameCells(csvMatrix(csv, S).flat(), ref.cross[1].subarray(2 * T * S, 3 * T * S), 0, 'heatmap CSV');
    const alCsv = (await download(page, 'alignment', 'csv')).body.toString('utf8');
    assert.equal(alCsv, csv, "the alignment's numbers are the heatmap's");
    const svg = (await download(page, 'alignment', 'svg')).body.toString('utf8');
    assert.match(svg, /^<\?xml/);
    // parsed in a blank page (in the page under test, the SVG's <style> would be refused by the page's CSP)
    const blank = await page.context().newPage();
    const facts = await blank.evaluate((x) => {
      const doc = new DOMParser().parseFromString(x, 'image/svg+xml');
      return { error: !!doc.querySelector('parsererror'), tokens: doc.querySelectorAll('text.al-text').length, lines: doc.querySelectorAll('line').length };
    }, svg);
    await blank.close();
    assert.deepEqual({ error: facts.error, tokens: facts.tokens }, { error: false, tokens: T + S }, 'the alignment SVG parses, every token in it');
    assert.ok(facts.lines > 0);
    assert.match(svg, /&lt;\/s&gt;/, 'the end token is in it, escaped');
    const png = (await download(page, 'alignment', 'png')).body;
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
    const json = JSON.parse((await download(page, 'heatmap', 'json')).body.toString('utf8'));
    assert.deepEqual(json.tokens, ref.written.tokens);
    assert.equal(json.attention, 'cross');
    // words merged, max over heads: crossMap of the module's translation (its word merge is checked cell by cell in
    // tests/js/translate-view.test.js)
    await page.selectOption('#translate-head', 'max');
    await page.check('#translate-words');
    await shows(page, { head: 'max', words: 1 });
    const words = crossMap(ref, { layer: 1, head: 'max', words: true });
    const mw = await cells(page);
    assert.deepEqual([mw.rows, mw.cols], [words.rows.length, words.cols.length]);
    sameCells(mw.values, words.values, 0, 'words, max over heads');
    // beam search
    await page.selectOption('#translate-beams', '3');
    await shows(page, { beams: 3 });
    const beam = await reference('dates', DATES_TEXT, 3);
    const beamWords = crossMap(beam, { layer: 1, head: 'max', words: true });
    assert.deepEqual(await page.locator('#translate-view .tr-target button').evaluateAll((bs) => bs.map((b) => b.title)), beamWords.rows);
    sameCells((await cells(page)).values, beamWords.values, 0, 'beam search, words, max over heads');
    // the page's language shows in the status
    assert.match(await page.textContent('#translate-status'), lang === 'en' ? /^beam search, 3 beams: 10 tokens, then the end token/ : /^束搜索，3 束：10 个词元，随后是结束词元/);
    assert.deepEqual(await axeProblems(page), [], `axe (${lang})`);
    assert.equal(await errorText(page), null);
    if (lang === 'zh-CN') await page.locator('#panel-translate').screenshot({ path: path.join(shots, 'translate-dates-desktop-zh.png') });
    console.log(`dates (${lang}): ${T} steps × ${S} source tokens, mean over heads max error ${meanErr.toExponential(2)}`);
    clean(rec);
    await page.close();
  });

  test(`translation view (${lang}): a random Marian-shaped checkpoint from source.spm + target.spm + vocab.json; a wrong file stays named`, async () => {
    const ck = marianShaped(root);
    const { page, rec } = await open(`#text=${encodeURIComponent(MARIAN_TEXT)}&lang=${lang}`, { width: 1280, height: 900 });
    assert.equal(await page.isVisible('#panel-translate'), false, 'no translation view for the seeded random model');
    // Marian without its target.spm: the picker says what is still needed
    await page.selectOption('#model', 'checkpoint');
    await page.locator('#ckpt-files').setInputFiles(ck.files.filter((f) => f.name !== 'target.spm'));
    await page.waitForFunction(() => /target\.spm/.test(document.getElementById('ckpt-msg').textContent), null, { timeout: 10000 });
    assert.match(await page.textContent('#ckpt-msg'), lang === 'en' ? /^Still needed: target\.spm \(Marian: / : /target\.spm（Marian：/);
    await chooseModel(page, ck.files);
    await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint', null, { timeout: 60000 });
    const line = await page.textContent('#ckpt-msg');
    assert.match(line, lang === 'en'
      ? /^Loaded in [\d.]+ s: Marian · 2\+2 layers · 4 heads · sinusoidal positions · 1,081-piece shared vocabulary · F32 \d+ kB\.$/
      : /Marian · 2\+2 层 · 4 个头 · 正弦位置编码 · 1,081 个词元的共享词表 · F32 \d+ kB/);
    await shows(page, { beams: 1, head: 'mean' });
    const model = await as.loadPretrained(ck.load);
    pipeline.checkpoint = model;
    try {
      const ref = await reference('checkpoint', MARIAN_TEXT);
      const T = ref.written.tokens.length;
      const S = ref.source.tokens.length;
      assert.deepEqual(await page.locator('#translate-view .tr-source [role="listitem"]').evaluateAll((xs) => xs.map((x) => x.title)), ref.source.tokens);
      assert.deepEqual(await page.locator('#translate-view .tr-target button').evaluateAll((bs) => bs.map((b) => b.title)), ref.written.tokens);
      // the attention panel's trace is the returned sequence too: the start token and the generated ids (its text
      // re-tokenized would begin with a '▁' piece the model never wrote)
      const g = model.generate(MARIAN_TEXT, { maxNewTokens: 64 });
      assert.deepEqual(await page.evaluate(() => Array.from(window.__attnscope.trace.ids)), [ck.config.decoder_start_token_id, ...g.ids]);
      for (const [layer, head] of [[0, 0], [1, 3]]) {
        await page.selectOption('#translate-layer', String(layer));
        await page.selectOption('#translate-head', String(head));
        await shows(page, { layer, head });
        sameCells((await cells(page)).values, ref.cross[layer].subarray(head * T * S, (head + 1) * T * S), 0, `layer ${layer + 1} head ${head + 1}`);
        const csv = (await download(page, 'heatmap', 'csv')).body.toString('utf8');
        sameCells(csvMatrix(csv, S).flat(), ref.cross[layer].subarray(head * T * S, (head + 1) * T * S), 0, `CSV layer ${layer + 1} head ${head + 1}`);
      }
      // SentencePiece words: ▁ H e l l o → Hello, and the target's pieces merged the same way
      await page.check('#translate-words');
      await shows(page, { words: 1 });
      const words = crossMap(ref, { layer: 1, head: 3, words: true });
      assert.deepEqual(await page.locator('#translate-view .tr-source [role="listitem"]').evaluateAll((xs) => xs.map((x) => x.title)), words.cols);
      assert.equal(words.cols[0], 'Hello');
      sameCells((await cells(page)).values, words.values, 0, 'marian words');
      // beam search: 3 beams, as the module's
      await page.selectOption('#translate-beams', '3');
      await shows(page, { beams: 3 });
      const beam = await reference('checkpoint', MARIAN_TEXT, 3);
      const wb = crossMap(beam, { layer: 1, head: 3, words: true });
      sameCells((await cells(page)).values, wb.values, 0, 'marian beam search');
      await page.locator('#panel-translate').screenshot({ path: path.join(shots, `translate-marian-desktop-${lang === 'en' ? 'en' : 'zh'}.png`) });
      assert.deepEqual(await axeProblems(page), [], `axe (${lang}, marian-shaped)`);
      // a truncated source.spm: the message names it, the model stays
      const bad = ck.files.map((f) => (f.name === 'source.spm' ? { ...f, buffer: f.buffer.subarray(0, 100) } : f));
      await chooseModel(page, bad);
      const msg = await page.textContent('#ckpt-msg');
      assert.match(msg, lang === 'en' ? /^source\.spm: tokenizer\.source is truncated or malformed .*the previous model stays\.$/ : /^source\.spm: tokenizer\.source is truncated/);
      assert.equal(await page.getAttribute('#ckpt-msg', 'role'), 'alert');
      assert.match(await page.evaluate(() => window.__attnscope.info.checkpoint?.label ?? ''), /^Marian · /, 'the Marian model stays');
      assert.equal(await page.isVisible('#panel-translate'), true);
      // another checkpoint of the same shape (other weights): the view translates with it, not the last one
      const other = marianShaped(root, { seed: 7 });
      await chooseModel(page, other.files);
      const second = await as.loadPretrained(other.load);
      pipeline.checkpoint = second;
      try {
        const ref2 = await reference('checkpoint', MARIAN_TEXT, 3);
        assert.notDeepEqual(ref2.written.tokens, beam.written.tokens);
        await page.waitForFunction((want) => JSON.stringify([...document.querySelectorAll('#translate-view .tr-target button')].map((b) => b.title)) === want,
          JSON.stringify(crossMap(ref2, { layer: 1, head: 3, words: true }).rows), { timeout: 60000 });
      } finally {
        second.delete();
      }
    } finally {
      model.delete();
      pipeline.checkpoint = null;
    }
    assert.equal(await errorText(page), null);
    clean(rec);
    await page.close();
  });
}

test('translation view: a phone (390×844), EN (light) and 中文 (dark) — no sideways scroll, the alignment scrolls in its own box', async () => {
  for (const [lang, scheme] of [['en', 'light'], ['zh-CN', 'dark']]) {
    const { page, rec } = await open(`#model=dates&text=${encodeURIComponent('Sunday, 22 November 2026')}&lang=${lang}`, { width: 390, height: 844 },
      undefined, (p) => p.emulateMedia({ colorScheme: scheme }));
    await shows(page, { beams: 1 });
    await page.click('#translate-view .tr-target button[data-index="3"]');
    await shows(page, { step: 3 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scroll on a phone (${overflow}px over, ${lang})`);
    await page.locator('#panel-translate').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, `translate-dates-phone-${lang === 'en' ? 'en' : 'zh'}.png`) });
    assert.deepEqual(await axeProblems(page), [], `axe (phone, ${lang}, ${scheme})`);
    clean(rec);
    await page.close();
  }
});
