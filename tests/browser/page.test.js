// Real-browser tests of the static page (web/): playwright-core driving Debian's chromium
// (shared/TOOLCHAIN.md 13), build/site served on a free loopback port (tests/browser/harness.js).
// Every page opened here fails its test on a console error, a pageerror, a dialog or a request that
// leaves the page's origin. Numbers on the page are compared with the module's own results for the
// same input, computed in the page through an import of /bindings/js/index.js.
// Run: node --test --test-concurrency=1 tests/browser/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createHash } from 'node:crypto';
import {
  useBrowser, settled, after1, clean, errorText, shots,
} from './harness.js';

const open = useBrowser();

test('page: loads with SIMD, no console errors and no off-origin requests', async () => {
  const { page, rec } = await open();
  const info = await page.evaluate(() => window.__attnscope.info);
  assert.equal(info.simd, true, 'the SIMD128 build runs in chromium');
  assert.match(await page.textContent('#status'), /SIMD128 wasm · v\d+\.\d+\.\d+ · \d+ threads? · computed in [\d.]+ ms/);
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /script-src 'self'( 'sha256-[A-Za-z0-9+/]+=*')* 'wasm-unsafe-eval'/);
  assert.match(csp, /connect-src 'self'/);
  // inline scripts: only the early ones (scripts/build-site.mjs: the compute worker's start, the parser's hold on
  // the stylesheet), each allowed by its hash (a refused one would also log a CSP violation, failing clean() below)
  const inline = await page.evaluate(() => [...document.querySelectorAll('script:not([src])')].map((s) => [s.dataset.early, s.textContent]));
  assert.deepEqual(inline.map(([early]) => early), ['worker', 'hold'], 'no inline scripts but the early ones');
  for (const [early, text] of inline) {
    const hash = createHash('sha256').update(text, 'utf8').digest('base64');
    assert.ok(csp.includes(`'sha256-${hash}'`), `the CSP allows the inline '${early}' script`);
  }
  assert.equal(await page.locator('[onclick],[onload],[onerror],[oninput],[onchange]').count(), 0, 'no inline handlers');
  // the page is cross-origin isolated (serve.mjs sends COOP/COEP), so the threaded SIMD build may be the one loaded
  assert.ok(rec.requests.some((u) => /\/dist\/attnscope\.simd(\.mt)?\.wasm$/.test(u)), 'the SIMD .wasm is loaded');
  assert.ok(rec.requests.some((u) => u.endsWith('/web/favicon.svg')), 'the favicon is served');
  assert.ok(!rec.requests.some((u) => u.includes('/assets/gpt2/')), 'the BPE files are not loaded until BPE is chosen');
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('page: typing gives one n×n heatmap per head whose cells are the module\'s weights', async () => {
  const { page, rec } = await open();
  const text = 'The quick brown fox jumps over the lazy dog';
  await after1(page, () => page.fill('#text', text));
  const snap = await page.evaluate(() => ({ state: window.__attnscope.traceState, n: window.__attnscope.trace.n }));
  assert.equal(snap.state.text, text);
  assert.equal(snap.n, 9);
  const maps = page.locator('canvas[data-kind="attention"]');
  assert.equal(await maps.count(), 4, 'one heatmap per selected head (4 heads, all selected)');
  for (let hd = 0; hd < 4; hd++) {
    const c = maps.nth(hd);
    assert.equal(await c.getAttribute('data-rows'), '9');
    assert.equal(await c.getAttribute('data-cols'), '9');
    assert.equal(await c.getAttribute('data-head'), String(hd));
    assert.equal(await c.evaluate((el) => [el.width, el.height].join('×')), '9×9', 'one canvas pixel per cell');
  }
  // recompute in the page with the public module: same tokens, and the weights of every head from
  // the trace's q/k/v through scaledDotProductAttention, and a fresh createModel run of the same config
  const cmp = await page.evaluate(async (t) => {
    const { createAttnScope } = await import('/bindings/js/index.js');
    const as = await createAttnScope({ relaxedSimd: false }); // as the page's worker: Node's numbers, bit for bit
    const { trace, traceState: s } = window.__attnscope;
    const shown = [...document.querySelectorAll('canvas[data-kind="attention"]')].map((c) => JSON.parse(c.dataset.values));
    const { n, dModel: d } = trace;
    const H = trace.numHeads;
    const hd = d / H;
    const A = trace.layers[0].attention;
    const cols = (x, h0) => {
      const o = new Float32Array(n * hd);
      for (let i = 0; i < n; i++) o.set(x.subarray(i * d + h0 * hd, (i + 1) * d - (H - 1 - h0) * hd), i * hd);
      return o;
    };
    let maxDiffSdpa = 0;
    let maxDiffTrace = 0;
    for (let h0 = 0; h0 < H; h0++) {
      const r = as.scaledDotProductAttention({ q: cols(A.q, h0), k: cols(A.k, h0), v: cols(A.v, h0), nq: n, nk: n, dk: hd, dv: hd });
      for (let c = 0; c < n * n; c++) {
        maxDiffSdpa = Math.max(maxDiffSdpa, Math.abs(r.weights[c] - shown[h0][c]));
        maxDiffTrace = Math.max(maxDiffTrace, Math.abs(A.weights[h0 * n * n + c] - shown[h0][c]));
      }
    }
    let maxDiffModel = 0;
    {
      const m = as.createModel({
        architecture: s.arch, tokenizer: s.tokenizer, dModel: s.dModel, numHeads: s.numHeads, numLayers: s.numLayers,
        dFF: s.dFF, normFirst: s.normFirst, activation: s.activation, positional: s.positional, positionalBase: s.base,
        attention: 'learned', seed: s.seed,
      });
      const out = m.run(t, { trace: 'full' });
      for (let h0 = 0; h0 < H; h0++) {
        for (let c = 0; c < n * n; c++) maxDiffModel = Math.max(maxDiffModel, Math.abs(out.layers[0].attention.weights[h0 * n * n + c] - shown[h0][c]));
      }
      m.delete();
    }
    return { tokens: as.tokenize(t, { kind: 'word' }).tokens, pageTokens: trace.tokens, maxDiffSdpa, maxDiffTrace, maxDiffModel };
  }, text);
  assert.deepEqual(cmp.pageTokens, cmp.tokens);
  assert.equal(cmp.maxDiffTrace, 0, 'the canvas data is the trace');
  assert.ok(cmp.maxDiffSdpa < 1e-6, `scaledDotProductAttention agrees (max diff ${cmp.maxDiffSdpa})`);
  assert.ok(cmp.maxDiffModel < 1e-6, `createModel agrees (max diff ${cmp.maxDiffModel})`);
  // hover shows the exact value of a cell
  const c0 = maps.nth(0);
  await c0.scrollIntoViewIfNeeded();
  const box = await c0.boundingBox();
  await page.mouse.move(box.x + box.width * (2.5 / 9), box.y + box.height * (1.5 / 9));
  const tip = await c0.locator('xpath=..').locator('.hm-tip').textContent();
  const v = JSON.parse(await c0.getAttribute('data-values'))[1 * 9 + 2];
  assert.ok(tip.includes(v.toFixed(4)), `tooltip "${tip}" shows ${v.toFixed(4)}`);
  assert.match(tip, /query 1 “quick” · key 2 “brown”/);
  // beside the hovered cell, in the attention panel and in a step of the step-by-step view (whose
  // content-visibility makes it the tooltip's containing block: the tooltip was offset by the step's position)
  for (const canvas of [c0, page.locator('#steps canvas[data-name="K"]')]) {
    await canvas.scrollIntoViewIfNeeded();
    const b = await canvas.boundingBox();
    const rows = Number(await canvas.getAttribute('data-rows'));
    const cols = Number(await canvas.getAttribute('data-cols'));
    await page.mouse.move(b.x + b.width * (0.5 / cols), b.y + b.height * (0.5 / rows));
    const at = await canvas.locator('xpath=..').locator('.hm-tip').boundingBox();
    const corner = { x: b.x + b.width / cols + 8, y: b.y + b.height / rows + 6 };
    assert.ok(Math.abs(at.x - corner.x) < 2 && Math.abs(at.y - corner.y) < 2, `tooltip at ${at.x},${at.y}, expected ${corner.x},${corner.y}`);
  }
  clean(rec);
  await page.close();
});

test('page: the worked example shows the published digits and stays editable', async () => {
  const { page, rec } = await open('#mode=example');
  const rowText = (m) => page.locator(`table[data-matrix="${m}"] tbody tr`).nth(1).locator('td').allTextContents();
  assert.deepEqual(await rowText('scores'), ['0.9544', '1.4950', '1.4754', '0.8434', '0.7070', '1.0865']);
  assert.deepEqual(await rowText('weights'), ['0.1385', '0.2379', '0.2333', '0.1240', '0.1082', '0.1581']);
  assert.deepEqual(await rowText('context'), ['0.4419', '0.6515', '0.5683']);
  // the same numbers straight from the module
  const direct = await page.evaluate(async () => {
    const { createAttnScope } = await import('/bindings/js/index.js');
    const as = await createAttnScope({ relaxedSimd: false }); // as the page's worker: Node's numbers, bit for bit
    const x = new Float32Array([0.43, 0.15, 0.89, 0.55, 0.87, 0.66, 0.57, 0.85, 0.64, 0.22, 0.58, 0.33, 0.77, 0.25, 0.10, 0.05, 0.80, 0.55]);
    return Array.from(as.simpleSelfAttention({ x, n: 6, d: 3 }).context.subarray(3, 6), (v) => v.toFixed(4));
  });
  assert.deepEqual(direct, ['0.4419', '0.6515', '0.5683']);
  // the attention heatmap and the step-by-step view use the example too
  assert.equal(await page.getAttribute('canvas[data-kind="attention"]', 'data-rows'), '6');
  // edit "journey"'s first number; the focus stays in the input and the numbers follow
  const input = page.locator('table[data-matrix="inputs"] input').nth(3);
  await after1(page, () => input.fill('1'));
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'journey dimension 1');
  const edited = await rowText('scores');
  assert.equal(edited[1], (1 * 1 + 0.87 * 0.87 + 0.66 * 0.66).toFixed(4));
  assert.match(await page.evaluate(() => location.hash), /ex=/);
  await after1(page, () => page.click('text=Reset to the published vectors'));
  assert.deepEqual(await rowText('context'), ['0.4419', '0.6515', '0.5683']);
  clean(rec);
  await page.close();
});

test('page: typed HTML is shown as text and never runs', async () => {
  const { page, rec } = await open();
  const xss = '<img src=x onerror=alert(1)>';
  await after1(page, () => page.fill('#text', xss));
  await page.waitForTimeout(200);
  assert.equal(await page.textContent('#tokens .spans'), xss);
  assert.equal(await page.locator('#content img, #content script').count(), 0, 'no element was made from the text');
  const chips = await page.locator('#tokens .chip .chip-text').allTextContents();
  assert.ok(chips.includes('<') && chips.includes('img') && chips.includes('onerror'), chips.join(' '));
  assert.ok(!rec.requests.some((u) => /\/x$/.test(u)), 'the image URL was never requested');
  clean(rec);
  await page.close();
});

test('page: text typed while the page\'s script still loads is kept and computed', async () => {
  // app.js is held until the text box has been typed into (it is in the HTML from the first paint)
  const typed = 'typed before the script ran';
  const { page, rec } = await open('', undefined, undefined, (p) => p.route('**/web/app.js', async (route) => {
    await p.fill('#text', typed);
    await route.continue();
  }));
  assert.equal(await page.inputValue('#text'), typed, 'the box keeps it');
  const got = await page.evaluate(() => ({ text: window.__attnscope.state.text, tokens: window.__attnscope.trace.tokens }));
  assert.equal(got.text, typed);
  assert.deepEqual(got.tokens, typed.split(' '), 'the trace is of the typed text (word tokens)');
  assert.match(await page.evaluate(() => location.hash), /text=typed/, 'and the link carries it');
  clean(rec);
  await page.close();
});

test('page: token spans follow UTF-16 offsets through CJK, emoji and code', async () => {
  const { page, rec } = await open();
  const text = '注意力 is 🙂 fun: f(x)=x²';
  await after1(page, () => page.fill('#text', text));
  for (const kind of ['char', 'word']) {
    await after1(page, () => page.selectOption('#tokenizer', kind));
    const { tokens, offsets } = await page.evaluate(() => {
      const t = window.__attnscope.trace;
      return { tokens: t.tokens, offsets: Array.from(t.offsets) };
    });
    tokens.forEach((tok, i) => assert.equal(text.slice(offsets[2 * i], offsets[2 * i + 1]), tok, `${kind} token ${i}`));
    const spans = await page.locator('#tokens .spans .span').allTextContents();
    assert.deepEqual(spans, tokens, `${kind}: one highlighted span per token`);
    assert.equal(await page.textContent('#tokens .spans'), text, `${kind}: the text is shown whole`);
    assert.equal(await page.locator('canvas[data-kind="attention"]').first().getAttribute('data-rows'), String(tokens.length));
  }
  clean(rec);
  await page.close();
});

test('page: state round-trips through the URL hash', async () => {
  const { page, rec } = await open();
  await after1(page, () => page.selectOption('#tokenizer', 'char'));
  await after1(page, () => page.fill('#text', 'attention'));
  await page.locator('.head-chip[data-head="2"]').dblclick();
  await page.locator('#tokens .chip[data-i="4"]').click();
  // the address bar is written in a task of its own right after the click (app.js saveHashSoon)
  await page.waitForFunction(() => /token=4/.test(location.hash));
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /tokenizer=char/);
  assert.match(hash, /heads=2/);
  assert.match(hash, /token=4/);
  assert.equal(await page.locator('canvas[data-kind="attention"]').count(), 1, 'double-click solos a head');

  const { page: again, rec: rec2 } = await open(hash);
  assert.equal(await again.inputValue('#text'), 'attention');
  assert.equal(await again.inputValue('#tokenizer'), 'char');
  const heads = await again.locator('canvas[data-kind="attention"]').evaluateAll((cs) => cs.map((c) => c.dataset.head));
  assert.deepEqual(heads, ['2']);
  assert.equal(await again.getAttribute('#steps .steps', 'data-token'), '4');
  assert.equal(await again.getAttribute('#steps .steps', 'data-head'), '2');
  assert.equal(await again.textContent('#tokens .chip.selected .chip-text'), 'n');
  clean(rec);
  clean(rec2);
  await page.close();
  await again.close();
});

test('page: Export JSON downloads the current trace', async () => {
  const { page, rec } = await open('#text=one%20two%20three');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
  assert.equal(download.suggestedFilename(), 'attnscope-trace.json');
  const file = await download.path();
  const { readFile } = await import('node:fs/promises');
  const json = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(json.state.text, 'one two three');
  assert.deepEqual(json.trace.tokens, ['one', 'two', 'three']);
  const w = await page.evaluate(() => Array.from(window.__attnscope.trace.layers[0].attention.weights));
  assert.deepEqual(json.trace.layers[0].attention.weights, w);
  clean(rec);
  await page.close();
});

test('page: GPT-2 BPE loads its vocabulary on demand and shows GPT-2 ids', async () => {
  const { page, rec } = await open();
  await after1(page, () => page.fill('#text', 'Hello world'));
  assert.ok(!rec.requests.some((u) => u.includes('/assets/gpt2/')));
  await after1(page, () => page.selectOption('#tokenizer', 'bpe'));
  assert.ok(rec.requests.some((u) => u.endsWith('/web/assets/gpt2/encoder.json')));
  assert.ok(rec.requests.some((u) => u.endsWith('/web/assets/gpt2/vocab.bpe')));
  const ids = await page.locator('#tokens .chip').evaluateAll((cs) => cs.map((c) => Number(c.dataset.id)));
  assert.deepEqual(ids, [15496, 995]);
  assert.deepEqual(await page.locator('#tokens .chip .chip-id').allTextContents(), ['15496', '995']);
  // non-ASCII text goes through too
  await after1(page, () => page.fill('#text', '注意力 🙂'));
  assert.equal(await errorText(page), null);
  assert.ok((await page.locator('#tokens .chip').count()) >= 2);
  clean(rec);
  await page.close();
});

test('page: an invalid configuration shows its message and the page recovers', async () => {
  const { page, rec } = await open();
  await after1(page, () => page.fill('#dModel', '10'));
  await after1(page, () => page.fill('#numHeads', '3'));
  const msg = await errorText(page);
  assert.ok(msg && msg.includes('dModel (10) must be divisible by numHeads (3)'), msg);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.error), '1');
  await after1(page, () => page.fill('#numHeads', '2'));
  assert.equal(await errorText(page), null);
  assert.equal(await page.locator('canvas[data-kind="attention"]').count(), 2);
  assert.equal(await page.evaluate(() => window.__attnscope.trace.dModel), 10);
  // too long an input is refused with its size, and the page keeps going
  await after1(page, () => page.fill('#text', Array.from({ length: 513 }, (_, i) => `t${i}`).join(' ')));
  assert.match(await errorText(page), /513 tokens; the page shows at most 512/);
  // an empty text is an error too, and typing again recovers
  await after1(page, () => page.fill('#text', ''));
  assert.ok(await errorText(page));
  await after1(page, () => page.fill('#text', 'back again'));
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('page: causal and padding masks block the right keys', async () => {
  const { page, rec } = await open();
  await after1(page, () => page.fill('#text', 'one two three four five'));
  await after1(page, () => page.check('#causal'));
  const w = JSON.parse(await page.getAttribute('canvas[data-kind="attention"]', 'data-values'));
  for (let i = 0; i < 5; i++) {
    for (let j = 0; j < 5; j++) if (j > i) assert.equal(w[i * 5 + j], 0, `causal: weight [${i},${j}] is 0`);
  }
  assert.equal(await page.locator('#steps .numrow[data-name="masked"] .num.masked').count(), 4, 'query 0 sees four −∞ keys');
  await after1(page, () => page.uncheck('#causal'));
  await after1(page, () => page.check('#padding'));
  const n = await page.getAttribute('canvas[data-kind="attention"]', 'data-cols');
  assert.equal(n, '8', 'padded to the next multiple of 8');
  const wp = JSON.parse(await page.getAttribute('canvas[data-kind="attention"]', 'data-values'));
  for (let i = 0; i < 8; i++) for (let j = 5; j < 8; j++) assert.equal(wp[i * 8 + j], 0, `padding: weight [${i},${j}] is 0`);
  clean(rec);
  await page.close();
});

/** The numbers of a numrow in the steps view (data-value of each cell). */
const stepRow = (page, name) => page.evaluate((nm) => Array.from(
  document.querySelectorAll(`#steps .numrow[data-name="${nm}"] .num`), (c) => Number(c.dataset.value),
), name);

test('page: steps view shows residual, LayerNorm (μ, σ²) and FFN numbers, pad queries and cross-attention', async () => {
  const { page, rec } = await open('#text=one%20two%20three%20four%20five&token=1');
  for (const name of ['residual1', 'norm1', 'ffHidden', 'ffOutput', 'residual2', 'norm2', 'layer-out']) {
    assert.equal(await page.locator(`#steps [data-name="${name}"]`).count(), 1, `${name} shown`);
  }
  // residual1 = x + attention output; the μ and σ² shown are the module's (trace norm1Mean/norm1Var), agree
  // with a float64 mean and biased variance of the shown residual1 row, and give the shown norm1 (seeded γ = 1, β = 0)
  const [a, b, r1] = [await stepRow(page, 'residual1-a'), await stepRow(page, 'residual1-b'), await stepRow(page, 'residual1')];
  r1.forEach((v, c) => assert.ok(Math.abs(v - (a[c] + b[c])) < 1e-5, `residual1[${c}]`));
  const stats = await page.locator('#steps [data-name="norm1-stats"]').evaluate((el) => ({ mu: Number(el.dataset.mu), v: Number(el.dataset.var) }));
  const fromTrace = await page.evaluate(() => {
    const L = window.__attnscope.trace.layers[0];
    return { mu: L.norm1Mean[1], v: L.norm1Var[1], full: L.full };
  });
  assert.equal(fromTrace.full, true, 'the shown layer carries the full trace');
  assert.deepEqual(stats, { mu: fromTrace.mu, v: fromTrace.v }, 'μ and σ² on screen are the trace\'s');
  const mu64 = r1.reduce((x, y) => x + y, 0) / r1.length;
  const var64 = r1.reduce((x, y) => x + (y - mu64) ** 2, 0) / r1.length;
  assert.ok(Math.abs(stats.mu - mu64) < 1e-5 && Math.abs(stats.v - var64) < 1e-4 * Math.max(1, var64), `μ ${stats.mu} vs ${mu64}, σ² ${stats.v} vs ${var64}`);
  const n1 = await stepRow(page, 'norm1');
  r1.forEach((x, c) => assert.ok(Math.abs((x - mu64) / Math.sqrt(var64 + 1e-5) - n1[c]) < 1e-4, `norm1[${c}]`));
  // attention rows: dot products, max, exp and Σ on screen against q·k and exp in float64 over the trace's q, k, scores
  const att = await page.evaluate(() => {
    const t = window.__attnscope.trace;
    const A = t.layers[0].attention;
    return { q: Array.from(A.q), k: Array.from(A.k), scores: Array.from(A.scores), n: t.n, d: t.dModel, H: t.numHeads };
  });
  const hd = att.d / att.H;
  const dotsShown = await stepRow(page, 'dots');
  const expShown = await stepRow(page, 'exp');
  const scaledShown = await stepRow(page, 'scaled');
  const srow = att.scores.slice(1 * att.n, 2 * att.n); // head 0, query 1
  const mx = Math.max(...srow.filter(Number.isFinite));
  const sum = srow.reduce((x, y) => x + Math.exp(y - mx), 0);
  for (let j = 0; j < att.n; j++) {
    let dot = 0;
    for (let c = 0; c < hd; c++) dot += att.q[1 * att.d + c] * att.k[j * att.d + c];
    assert.ok(Math.abs(dotsShown[j] - dot) < 1e-5, `dots[${j}] ${dotsShown[j]} vs ${dot}`);
    assert.ok(Math.abs(scaledShown[j] - dot / Math.sqrt(hd)) < 1e-5, `scaled[${j}]`);
    assert.ok(Math.abs(expShown[j] - Math.exp(srow[j] - mx)) < 1e-5, `exp[${j}] ${expShown[j]} vs ${Math.exp(srow[j] - mx)}`);
  }
  assert.match(await page.locator('#steps [data-name="weights"]').evaluate((el) => el.closest('.step').textContent), new RegExp(`max = ${mx.toFixed(4)}.*Σ = ${sum.toFixed(4)}`));
  assert.deepEqual(await stepRow(page, 'norm2'), await stepRow(page, 'layer-out'), 'post-norm: norm2 is the layer output');
  await page.locator('#steps [data-name="norm1-z"]').evaluate((el) => el.closest('.step').scrollIntoView());
  await page.screenshot({ path: path.join(shots, 'desktop-steps-layernorm.png') });

  // padding through the core's padTo: a pad query row has real numbers over the real keys
  await after1(page, () => page.check('#padding'));
  await page.selectOption('#steps .token-pick', '6');
  await page.waitForSelector('#steps [data-name="pad-note"]');
  const w = await stepRow(page, 'weights');
  assert.equal(w.length, 8);
  assert.ok(Math.abs(w.slice(0, 5).reduce((x, y) => x + y, 0) - 1) < 1e-5, 'pad query: weights over the real keys sum to 1');
  assert.deepEqual(w.slice(5), [0, 0, 0], 'pad keys get weight 0');
  assert.ok((await stepRow(page, 'layer-out')).every(Number.isFinite), 'pad row output is computed');
  await page.locator('#steps [data-name="pad-note"]').evaluate((el) => el.scrollIntoView());
  await page.screenshot({ path: path.join(shots, 'desktop-steps-pad.png') });
  clean(rec);
  await page.close();

  // encoder–decoder, pre-norm: the target token's q against the source keys, then residual3/norm3
  const { page: ed, rec: rec2 } = await open('#arch=encoder-decoder&normFirst=1&token=2');
  for (const name of ['cross-q', 'cross-weights', 'cross-attn-out', 'norm1', 'residual2', 'norm2', 'residual3', 'norm3', 'ffOutput']) {
    assert.equal(await ed.locator(`#steps [data-name="${name}"]`).count(), 1, `${name} shown`);
  }
  const cw = await stepRow(ed, 'cross-weights');
  assert.equal(cw.length, await ed.evaluate(() => document.querySelectorAll('#steps .numrow[data-name="cross-dots"] .num').length));
  assert.ok(Math.abs(cw.reduce((x, y) => x + y, 0) - 1) < 1e-5);
  assert.deepEqual(await stepRow(ed, 'residual3'), await stepRow(ed, 'layer-out'), 'pre-norm: residual3 is the layer output');
  await ed.locator('#steps [data-name="cross-weights"]').evaluate((el) => el.closest('.step').scrollIntoView());
  await ed.screenshot({ path: path.join(shots, 'desktop-steps-cross.png') });
  clean(rec2);
  await ed.close();
});

test('page: the run asks for the shown layer in full, weights elsewhere, and the PE rows it plots', async () => {
  const { page, rec } = await open('#numLayers=3&pePositions=20&text=one%20two%20three');
  const kept = () => page.evaluate(() => {
    const t = window.__attnscope.trace;
    return { full: t.layers.map((ly) => ly.full), q: t.layers.map((ly) => !!ly.attention.q), rows: t.positionalRows, pe: t.positionalTable.length, d: t.dModel };
  });
  let k = await kept();
  assert.deepEqual(k.full, [true, false, false], 'layer 1 shown: only it is traced in full');
  assert.deepEqual(k.q, [true, false, false]);
  assert.equal(k.rows, 20);
  assert.equal(k.pe, 20 * k.d, 'the PE table comes with the run');
  assert.equal(await page.getAttribute('canvas[data-name="pe-table"]', 'data-rows'), '20');
  // another layer tab: a new run that keeps that layer in full; the steps view shows it
  await after1(page, () => page.locator('#attention-view .tab[data-layer="2"]').click());
  k = await kept();
  assert.deepEqual(k.full, [false, false, true]);
  await page.waitForSelector('#steps .steps[data-layer="2"]:not([data-pending])');
  const dots = await stepRow(page, 'dots');
  const want = await page.evaluate(() => {
    const A = window.__attnscope.trace.layers[2].attention;
    return Array.from(A.dots.subarray(0, 3));
  });
  assert.deepEqual(dots, want, 'the steps view shows layer 3\'s dot products from the trace');
  // simple attention: q = k = v = the layer input, the numbers still from the trace
  await after1(page, () => page.selectOption('#attention', 'simple'));
  await page.waitForSelector('#steps .steps:not([data-pending])');
  const simple = await page.evaluate(() => {
    const t = window.__attnscope.trace;
    const L = t.layers[0];
    return { kind: L.kind, dots: Array.from(L.attention.dots.subarray(0, t.n)), sc: Array.from(L.attention.scores.subarray(0, t.n)) };
  });
  assert.equal(simple.kind, 'simple');
  assert.deepEqual(await stepRow(page, 'dots'), simple.dots);
  assert.deepEqual(simple.dots, simple.sc, 'simple attention: scores are the plain dot products');
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('page: a keystroke asks only for what is on screen; the rest comes when idle and every view ends on the full run', async () => {
  const words = Array.from({ length: 30 }, (_, i) => `w${i % 23}`).join(' ');
  const { page, rec } = await open(`#numLayers=3&numHeads=4&dModel=32&dFF=64&text=${encodeURIComponent(words)}`, { width: 1280, height: 600 });
  const asked = () => page.evaluate(() => window.__attnscope.requests.length);
  // the text box at the top: the tokens and embeddings are on screen, the attention maps and the model view far below
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = await page.evaluate(() => document.getElementById('panel-attention').getBoundingClientRect().top / innerHeight);
  assert.ok(top > 1.5, `the attention panel starts ${top.toFixed(2)} viewports down: not near the screen`);
  let k0 = await asked();
  await after1(page, async () => { await page.click('#text'); await page.keyboard.press('End'); await page.keyboard.type(' z'); });
  let reqs = (await page.evaluate(() => window.__attnscope.requests)).slice(k0);
  assert.deepEqual(reqs[0], { need: { all: false, full: false }, completion: false }, 'the keystroke run: no layer\'s weights');
  assert.deepEqual(reqs.at(-1), { need: { all: true, full: true }, completion: true }, 'then, when idle, the same input in full');
  // the merged trace and every view equal a fresh full run of the same input in the page
  const cmp = () => page.evaluate(async () => {
    const { createAttnScope } = await import('/bindings/js/index.js');
    const as = await createAttnScope({ relaxedSimd: false });
    const { trace, traceState: s } = window.__attnscope;
    const m = as.createModel({
      architecture: s.arch, tokenizer: s.tokenizer, dModel: s.dModel, numHeads: s.numHeads, numLayers: s.numLayers, dFF: s.dFF,
      normFirst: s.normFirst, activation: s.activation, positional: s.positional, positionalBase: s.base, attention: 'learned', seed: s.seed,
    });
    const want = m.run(s.text, { trace: 'weights', full: [s.layer] });
    let diff = 0;
    want.layers.forEach((ly, l) => ly.attention.weights.forEach((v, c) => { diff = Math.max(diff, Math.abs(v - trace.layers[l].attention.weights[c])); }));
    const full = trace.layers.map((ly) => ly.full);
    const shown = JSON.parse(document.querySelector('#attention-view canvas[data-kind="attention"][data-head="1"]').dataset.values);
    let shownDiff = 0;
    shown.forEach((v, c) => { shownDiff = Math.max(shownDiff, Math.abs(v - want.layers[s.layer].attention.weights[trace.n * trace.n + c])); });
    const mv = document.querySelector('#model-view canvas.mv-canvas').dataset;
    m.delete();
    return {
      complete: trace.complete, diff, full, shownDiff, mv: [Number(mv.layers), Number(mv.heads), Number(mv.n)], n: trace.n,
      steps: document.querySelector('#steps .steps')?.dataset.pending ?? null, drawing: document.documentElement.dataset.drawing ?? null,
    };
  });
  let r = await cmp();
  assert.equal(r.n, 31);
  assert.equal(r.complete, true);
  assert.equal(r.diff, 0, 'every layer\'s weights merged in equal the full run\'s');
  assert.deepEqual(r.full, [true, false, false], 'the shown layer in full');
  assert.ok(r.shownDiff < 1e-6, 'the drawn heatmap is the full run\'s');
  assert.deepEqual(r.mv, [3, 4, 31], 'the model view drew every layer × head of the new text');
  assert.equal(r.steps, null, 'the step-by-step view is drawn, not pending');
  assert.equal(r.drawing, null);
  // with the model view on screen the keystroke's run brings every layer's weights at once, and no second run
  await page.locator('#panel-model').scrollIntoViewIfNeeded();
  k0 = await asked();
  await after1(page, async () => { await page.focus('#text'); await page.keyboard.press('End'); await page.keyboard.press('Backspace'); });
  reqs = (await page.evaluate(() => window.__attnscope.requests)).slice(k0);
  assert.equal(reqs[0].need.all, true, 'the model view on screen: every layer\'s weights in the keystroke run');
  r = await cmp();
  assert.equal(r.n, 30);
  assert.equal(r.diff, 0);
  assert.deepEqual(r.mv, [3, 4, 30]);
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('page: encoder–decoder shows the cross-attention alignments', async () => {
  const { page, rec } = await open('#arch=encoder-decoder');
  assert.equal(await page.evaluate(() => window.__attnscope.info.model), true, 'as.createModel exists');
  const c = page.locator('canvas[data-kind="cross"]');
  assert.equal(await c.count(), 4, 'one cross-attention map per head');
  const { n, m, src, tgt } = await page.evaluate(() => {
    const t = window.__attnscope.trace;
    return { n: t.n, m: t.source.n, src: t.source.tokens, tgt: t.tokens };
  });
  assert.deepEqual(src, ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']);
  assert.equal(tgt[0], 'Le');
  assert.equal(await c.first().getAttribute('data-rows'), String(n));
  assert.equal(await c.first().getAttribute('data-cols'), String(m));
  // the decoder's self-attention is causal
  const w = JSON.parse(await page.getAttribute('canvas[data-kind="attention"]', 'data-values'));
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(w[i * n + j], 0);
  clean(rec);
  await page.close();
});

test('page: 128 tokens × 4 layers × 8 heads × dModel 256 stays responsive', async (t) => {
  const words = Array.from({ length: 128 }, (_, i) => `w${i % 37}`).join(' ');
  const hash = `#dModel=256&numHeads=8&numLayers=4&dFF=1024&text=${encodeURIComponent(words)}`;
  const { page, rec } = await open(hash);
  assert.equal(await page.evaluate(() => window.__attnscope.trace.n), 128);
  assert.equal(await page.locator('canvas[data-kind="attention"]').count(), 8);
  assert.equal(await page.getAttribute('canvas[data-kind="attention"]', 'data-rows'), '128');
  // type one more character and watch the frames while the update is computed and drawn; five keystrokes,
  // reported as median (min–max) — the machine is shared, one sample says little
  const keystroke = () => page.evaluate(async () => {
    const el = document.getElementById('text');
    const runs = window.__attnscope.runs;
    const gaps = [];
    let last = performance.now();
    let going = true;
    const tick = (now) => { gaps.push(now - last); last = now; if (going) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    const t0 = performance.now();
    el.value = `${el.value.slice(0, -1)}${el.value.endsWith('9') ? '8' : '9'}`;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((resolve) => {
      const poll = () => (window.__attnscope.runs > runs && !document.documentElement.dataset.busy ? resolve() : setTimeout(poll, 5));
      poll();
    });
    const t1 = performance.now();
    await new Promise((r) => requestAnimationFrame(r));
    going = false;
    return { ...window.__attnscope.timing, sinceInput: t1 - t0, longestFrame: Math.max(...gaps) };
  });
  const samples = [];
  for (let k = 0; k < 5; k++) samples.push(await keystroke());
  const stat = (key) => {
    const v = samples.map((x) => x[key]).sort((a, b) => a - b);
    return `${v[2].toFixed(1)} (${v[0].toFixed(1)}–${v[4].toFixed(1)})`;
  };
  t.diagnostic(`128×4×8×256, median (min–max) of 5 keystrokes: compute ${stat('compute')} ms (worker), draw ${stat('render')} ms, `
    + `request→drawn ${stat('total')} ms, input→drawn ${stat('sinceInput')} ms incl. 150 ms debounce, `
    + `longest frame ${stat('longestFrame')} ms`);
  await page.screenshot({ path: path.join(shots, 'desktop-128x4x8x256.png') });
  clean(rec);
  await page.close();
});

test('page: screenshots at 1280×800 and 390×844 without horizontal overflow', async () => {
  const text = 'The animal didn\'t cross the street because it was too tired.';
  for (const [name, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
    const { page, rec } = await open(`#text=${encodeURIComponent(text)}`, viewport);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name}: no horizontal scroll (${overflow}px over)`);
    await page.screenshot({ path: path.join(shots, `${name}.png`) });
    await page.locator('#panel-attention').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, `${name}-attention.png`) });
    await page.locator('#panel-steps').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, `${name}-steps.png`) });
    await page.screenshot({ path: path.join(shots, `${name}-full.png`), fullPage: true });
    clean(rec);
    await page.close();
  }
  const { page, rec } = await open('#mode=example');
  await page.locator('#panel-example').screenshot({ path: path.join(shots, 'desktop-example.png') });
  clean(rec);
  await page.close();
  for (const hash of ['#mode=example', '#arch=encoder-decoder', '#tokenizer=char&dModel=64&numHeads=8']) {
    const { page: p2, rec: r2 } = await open(hash, { width: 390, height: 844 });
    const over = await p2.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over <= 0, `phone ${hash}: no horizontal scroll (${over}px over)`);
    if (hash === '#mode=example') await p2.screenshot({ path: path.join(shots, 'phone-example.png'), fullPage: true });
    clean(r2);
    await p2.close();
  }
});
