// Real-browser test of the single-file page (issue 14, "a page that opens from disk"): build/site/attnscope.html,
// made by scripts/build-single.mjs (called from scripts/build-site.mjs), copied alone into an empty folder and
// opened with file:// in Chromium — no server, nothing beside it. Every request is routed and counted (none
// may happen but the file itself and the page's own blob: workers), every console error fails the test, and the
// numbers it shows are compared with the module's, computed here in Node for the same input, and with
// gpt-3-encoder's GPT-2 token ids for the lazily loaded BPE files.
// Run: node --test --test-concurrency=1 tests/browser/single-file.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as chromatic from 'd3-scale-chromatic';
import gpt2 from 'gpt-3-encoder';
import { PNG } from 'pngjs';
import {
  useBrowser, settled, after1, clean, errorText, shots, root,
} from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';
import { paletteFrom, colorIndex } from '../../web/render/common.js';

const open = useBrowser();
let dir;
let url;
let as;
let buildLog = ''; // build-site's output when this file had to build the site again

before(async () => {
  // the harness built the site (and with it the single file); alone in a fresh folder it must still work
  dir = mkdtempSync(path.join(tmpdir(), 'attnscope-single-'));
  const site = path.join(root, 'build', 'site');
  // build/site is built once by scripts/test.sh (or by the harness for a file run alone): if it lacks the single files, build it
  const wanted = ['attnscope.html', existsSync(path.join(root, 'web', 'learn', 'index.html')) ? 'attnscope-learn.html' : null].filter(Boolean);
  if (!wanted.every((f) => existsSync(path.join(site, f)))) {
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
    buildLog = `${r.stdout}${r.stderr}`;
  }
  for (const f of ['attnscope.html', 'attnscope-learn.html']) {
    if (existsSync(path.join(site, f))) copyFileSync(path.join(site, f), path.join(dir, f));
  }
  url = pathToFileURL(path.join(dir, 'attnscope.html')).href;
  as = await createAttnScope();
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens a single file with every request routed: `routed` lists each one (all are let through). */
async function openFile(hash = '', { file = url, ready } = {}) {
  const routed = [];
  const setup = (page) => page.route('**', (r) => {
    routed.push(r.request().url());
    return r.continue();
  });
  const { page, rec } = await open.file(`${file}${hash}`, { setup, ready });
  return { page, rec, routed, file };
}

/** Only the file itself and the page's blob: workers were requested; nothing was routed to the network. */
function noRequests({ rec, routed, file: own }) {
  assert.deepEqual(rec.requests.filter((u) => u.replace(/#.*$/, '') !== own && !u.startsWith('blob:null/')), [],
    'no request but the file and its blob: workers');
  assert.deepEqual(routed.filter((u) => !u.startsWith('file:')), [], 'no request routed off the file system');
  assert.ok(routed.every((u) => u.replace(/#.*$/, '') === own), `only the file itself was read (${routed.join(', ')})`);
  clean(rec);
}

test('single file: opened from file://, alone in a folder, it types, draws and holds the module\'s numbers', async () => {
  const raw = statSync(path.join(dir, 'attnscope.html')).size;
  const gz = gzipSync(readFileSync(path.join(dir, 'attnscope.html')), { level: 9 }).length;
  console.log(`# attnscope.html: ${raw} bytes, ${gz} gzipped`);
  const ctx = await openFile();
  const { page } = ctx;
  // strict CSP: nothing but the hashed inline script and style, workers from blob:, no connections at all
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  for (const d of ["default-src 'none'", "connect-src 'none'", 'worker-src blob:', "object-src 'none'", "base-uri 'none'"]) {
    assert.ok(csp.includes(d), `CSP has ${d}: ${csp}`);
  }
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+' 'wasm-unsafe-eval'/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'|\*/);
  assert.equal(await page.locator('script[src], link[rel="stylesheet"], link[href^="http"]').count(), 0, 'nothing loaded by URL');
  assert.equal(await page.locator('script[type="module"]').count(), 1);
  const info = await page.evaluate(() => window.__attnscope.info);
  assert.equal(info.simd, true, 'the SIMD128 build runs (chosen by the loader as on the served page)');
  assert.match(await page.textContent('#status'), /SIMD128 wasm · v\d+\.\d+\.\d+/);

  const text = 'The cat sat on the mat because it was tired';
  await after1(page, () => page.fill('#text', text));
  const shown = await page.evaluate(() => {
    const maps = [...document.querySelectorAll('canvas[data-kind="attention"]')];
    return {
      state: window.__attnscope.traceState,
      tokens: window.__attnscope.trace.tokens,
      maps: maps.map((c) => {
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        return {
          head: Number(c.dataset.head), rows: c.height, cols: c.width, lo: Number(c.dataset.lo), hi: Number(c.dataset.hi),
          values: JSON.parse(c.dataset.values), rgb: Array.from({ length: c.width * c.height }, (_, k) => [px[4 * k], px[4 * k + 1], px[4 * k + 2]]),
        };
      }),
    };
  });
  const s = shown.state;
  assert.equal(s.text, text);
  // the same input through the module here in Node: the page's seeded random model, rebuilt from its state
  const m = as.createModel({
    architecture: s.arch, tokenizer: s.tokenizer, dModel: s.dModel, numHeads: s.numHeads, numLayers: s.numLayers,
    dFF: s.dFF, normFirst: s.normFirst, activation: s.activation, positional: s.positional, positionalBase: s.base,
    attention: 'learned', seed: s.seed,
  });
  try {
    const ref = m.run(text, { trace: 'weights' });
    const n = ref.tokens.length;
    assert.deepEqual(shown.tokens, ref.tokens);
    assert.equal(shown.maps.length, s.numHeads, 'one heatmap per head');
    const viridis = paletteFrom(chromatic.interpolateViridis);
    let maxDiff = 0;
    for (const map of shown.maps) {
      assert.equal(map.rows, n);
      assert.equal(map.cols, n);
      const w = ref.layers[s.layer].attention.weights.subarray(map.head * n * n, (map.head + 1) * n * n);
      for (let k = 0; k < n * n; k++) {
        maxDiff = Math.max(maxDiff, Math.abs(map.values[k] - w[k]));
        // the pixel is the module's weight through the page's colour scale (viridis over the map's domain)
        const idx = colorIndex(w[k], map.lo, map.hi);
        assert.deepEqual(map.rgb[k], Array.from(viridis.rgb.subarray(3 * idx, 3 * idx + 3)), `head ${map.head} cell ${k} colour`);
      }
    }
    assert.ok(maxDiff <= 1e-6, `heatmap values equal the module's in Node (max diff ${maxDiff})`);
  } finally {
    m.delete();
  }

  // the attention-family worker (the second blob: worker): kernel regression equals the module's in Node
  await page.waitForFunction(() => window.__attnscope.family.regression.result, null, { timeout: 30000 });
  const kr = await page.evaluate(() => {
    const r = window.__attnscope.family.regression.result;
    return { w: r.w, xTrain: Array.from(r.xTrain), yTrain: Array.from(r.yTrain), xQuery: Array.from(r.xQuery), yPred: Array.from(r.yPred) };
  });
  const krRef = as.kernelRegression({
    xTrain: Float32Array.from(kr.xTrain), yTrain: Float32Array.from(kr.yTrain), xQuery: Float32Array.from(kr.xQuery), w: kr.w,
  });
  assert.deepEqual(kr.yPred, Array.from(krRef.yPred), 'kernel regression predictions equal the module\'s');

  // GPT-2 BPE: encoder.json and vocab.bpe come out of the file only now (an embedded file's block is removed
  // once decoded), and tokenize as GPT-2 does
  const gpt2Blocks = () => page.locator('script[data-path^="web/assets/gpt2/"]').count();
  assert.equal(await gpt2Blocks(), 2, 'the BPE files are not decoded before BPE is chosen');
  assert.equal(await page.locator('script[data-path="dist/attnscope.simd.wasm"]').count(), 0, 'the SIMD .wasm was read');
  assert.equal(await page.locator('script[data-path="dist/attnscope.wasm"]').count(), 1, 'the scalar .wasm was not');
  await after1(page, () => page.selectOption('#tokenizer', 'bpe'));
  assert.equal(await gpt2Blocks(), 0, 'choosing BPE read both files');
  const bpe = await page.evaluate(() => Array.from(window.__attnscope.trace.ids));
  assert.deepEqual(bpe, gpt2.encode(text), 'GPT-2 token ids (gpt-3-encoder)');
  // the export buttons work from disk too (blob: downloads; the PNG draws the SVG from a blob: image)
  const saved = {};
  for (const format of ['svg', 'png']) {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(`button[data-export="heatmap"][data-format="${format}"]`)]);
    saved[format] = readFileSync(await d.path());
  }
  const svgSize = /<svg [^>]*width="(\d+)" height="(\d+)"/.exec(saved.svg.toString('utf8')).slice(1).map(Number);
  const png = PNG.sync.read(saved.png);
  assert.deepEqual([png.width, png.height], svgSize.map((x) => 2 * x), 'the PNG is the SVG at 2×');
  assert.equal(await errorText(page), null);
  await page.screenshot({ path: path.join(shots, 'single-file.png') });
  noRequests(ctx);
  await page.close();
});

test('single file: a bundled model loads from the file, is scored on its held-out set and generates as in Node', async () => {
  const ctx = await openFile();
  const { page } = ctx;
  const prompt = '3 9 1 4 7>';
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', prompt);
  await page.selectOption('#model', 'reverse');
  await settled(page, runs);
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'reverse' && !document.documentElement.dataset.busy);
  const model = await as.loadBundled('reverse');
  try {
    const ref = model.run(prompt, { trace: 'weights' });
    const pageW = await page.evaluate(() => window.__attnscope.trace.layers.map((ly) => Array.from(ly.attention.weights)));
    assert.equal(pageW.length, ref.layers.length);
    pageW.forEach((w, l) => {
      const d = Math.max(...w.map((v, k) => Math.abs(v - ref.layers[l].attention.weights[k])));
      assert.ok(d <= 1e-6, `layer ${l}: the bundled model's weights equal the module's in Node (max diff ${d})`);
    });
    // models/reverse/heldout.json, read from the file by the worker, scored as the module scores it in Node
    const { items } = JSON.parse(readFileSync(path.join(root, 'models', 'reverse', 'heldout.json'), 'utf8'));
    const exact = items.filter((it) => model.generate(it.input, { maxNewTokens: 64 }).text === it.target).length;
    await page.waitForSelector('#model-about [data-name="heldout"]:text-matches("exact")', { timeout: 60000 });
    const score = await page.textContent('#model-about [data-name="heldout"]');
    assert.ok(score.includes(`${exact} of ${items.length} exact`), `"${score}" holds ${exact} of ${items.length}`);
    const runs2 = await page.evaluate(() => window.__attnscope.runs);
    await page.click('#generate');
    await settled(page, runs2);
    const expected = model.generate(prompt, { maxNewTokens: 8 }).text;
    assert.equal(await page.inputValue('#text'), prompt + expected, 'the page generates what the module generates in Node');
    assert.match(expected, /^74193/, 'the model reverses the digits');
  } finally {
    model.delete();
  }
  assert.equal(await errorText(page), null);
  await page.locator('#panel-input').screenshot({ path: path.join(shots, 'single-file-bundled.png') });
  noRequests(ctx);
  await page.close();
});

test('single file: the guided path opens from file:// too, formulas in KaTeX\'s own fonts, linked to the page', async (t) => {
  const learn = path.join(dir, 'attnscope-learn.html');
  if (!existsSync(path.join(root, 'web', 'learn', 'index.html'))) {
    t.skip('no guided path (web/learn/index.html) in this tree');
    return;
  }
  assert.ok(existsSync(learn), `build-site made attnscope-learn.html from web/learn/index.html ${buildLog}`);
  const ready = (page) => page.waitForFunction(() => window.__learn?.ready && document.querySelector('.katex'), null, { timeout: 30000 });
  const ctx = await openFile('', { file: pathToFileURL(learn).href, ready });
  const { page } = ctx;
  assert.equal(await page.locator('script[src], link[rel="stylesheet"]').count(), 0, 'nothing loaded by URL');
  assert.ok(await page.locator('a[href^="attnscope.html"]').count() >= 1, 'the link back to the page names the page\'s single file');
  if (/href="learn\/"/.test(readFileSync(path.join(root, 'web', 'index.html'), 'utf8'))) {
    assert.match(readFileSync(path.join(dir, 'attnscope.html'), 'utf8'), /<a [^>]*href="attnscope-learn\.html"/, 'and the page links to it');
  }
  // the formulas' fonts come out of the file (data: URLs in the inlined KaTeX stylesheet)
  const fonts = await page.evaluate(async () => {
    await document.fonts.ready;
    return [...document.fonts].filter((f) => f.family.startsWith('KaTeX') && f.status === 'loaded').map((f) => f.family);
  });
  assert.ok(fonts.includes('KaTeX_Main'), `KaTeX_Main loaded (${fonts.join(', ')})`);
  await page.screenshot({ path: path.join(shots, 'single-file-learn.png') });
  noRequests(ctx);
  await page.close();
});
