// Real-browser tests of the page's model picker (issues 11, 12): the user's own Hugging Face checkpoint
// chosen as files (tests/fixtures/hf: tiny GPT-2 / BERT checkpoints with PyTorch reference outputs in
// expected.json), a broken file that leaves the previous model in place with a message naming the file,
// GPT-2's next-token top-k and "generate", BERT's [MASK] predictions, and the bundled trained models.
// Harness: tests/browser/harness.js. Numbers on screen are compared with the fixtures' PyTorch outputs.
// Run: node --test --test-concurrency=1 tests/browser/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, settled, clean, errorText, shots, root,
} from './harness.js';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { createAttnScope } from '../../bindings/js/index.js';

const open = useBrowser();
const HF = path.join(root, 'tests', 'fixtures', 'hf');
const expected = (c) => JSON.parse(readFileSync(path.join(HF, c, 'expected.json'), 'utf8'));
const file = (c, name, as = name) => ({ name: as, mimeType: 'application/octet-stream', buffer: readFileSync(path.join(HF, c, name)) });

/** Chooses `files` in the checkpoint picker and waits until the load has ended (loaded or refused). */
async function choose(page, files) {
  if (await page.inputValue('#model') !== 'checkpoint') await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(files);
  await page.waitForFunction(() => !document.documentElement.dataset.loading && document.getElementById('ckpt-msg').textContent !== ''
    && !/^Loading/.test(document.getElementById('ckpt-msg').textContent), null, { timeout: 60000 });
}

/** Waits until the page shows a trace of the checkpoint (a run after the load). */
const checkpointShown = (page) => page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint'
  && !document.documentElement.dataset.busy, null, { timeout: 30000 });

/** The module must have loaded; a build without as.loadPretrained skips (it is feature-detected). */
async function skipWithoutCheckpoints(t, page) {
  assert.equal(await page.evaluate(() => window.__attnscope.info.ready), true, `the module loaded (${await page.evaluate(() => window.__attnscope.error)})`);
  const ok = await page.evaluate(() => window.__attnscope.info.pretrained);
  if (!ok) t.skip('this build of the module has no as.loadPretrained');
  return ok;
}

test('models: a BERT checkpoint from chosen files shows every head and the [MASK] predictions; a broken file leaves it', async (t) => {
  const exp = expected('bert-mlm-f16');
  const ref = exp.texts[0];
  const { page, rec } = await open(`#text=${encodeURIComponent(ref.text)}`);
  if (!await skipWithoutCheckpoints(t, page)) return page.close();
  assert.equal(await page.isVisible('#ckpt-files'), false, 'the file picker shows only when asked for');
  await choose(page, ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => file('bert-mlm-f16', f)));
  await checkpointShown(page);
  assert.match(await page.textContent('#ckpt-msg'), /^Loaded in [\d.]+ s: bert · 2 layers × 2 heads · d 8\.$/);
  const tr = await page.evaluate(() => {
    const x = window.__attnscope.trace;
    return { tokens: x.tokens, n: x.n, weights: x.layers.map((ly) => Array.from(ly.attention.weights)), full: x.layers.map((ly) => ly.full) };
  });
  assert.deepEqual(tr.tokens, ref.tokens, 'the checkpoint tokenizer\'s tokens');
  assert.deepEqual(tr.full, [true, false]);
  tr.weights.forEach((w, l) => {
    assert.equal(w.length, ref.attentions[l].length);
    const err = Math.max(...w.map((v, c) => Math.abs(v - ref.attentions[l][c])));
    assert.ok(err <= exp.tolerance.attentions.atol, `layer ${l} attention weights within ${exp.tolerance.attentions.atol} of PyTorch (max ${err})`);
  });
  // every layer × head reachable: two layer tabs, two head chips, 2 × 2 model-view tiles
  assert.equal(await page.locator('#attention-view .tab').count(), 2);
  assert.equal(await page.locator('canvas[data-kind="attention"]').count(), 2);
  // the [MASK] predictions, as PyTorch's MLM head gives them
  const m = ref.mlm[0];
  const shown = await page.locator(`#predictions [data-name="mask-${m.position}"] li`).evaluateAll((lis) => lis.map((li) => ({
    id: Number(li.dataset.id), p: Number(li.dataset.prob), tok: li.querySelector('.topk-tok').textContent,
  })));
  assert.deepEqual(shown.map((x) => x.id), m.ids);
  assert.deepEqual(shown.map((x) => x.tok), m.tokens);
  shown.forEach((x, k) => assert.ok(Math.abs(x.p - m.probs[k]) <= 1e-6 + 2e-3 * m.probs[k], `prob ${k}`));
  assert.equal(await page.locator('#generate').count(), 0, 'BERT cannot generate: no button');
  await page.locator('#panel-input').screenshot({ path: path.join(shots, 'desktop-checkpoint-bert.png') });

  // a truncated model.safetensors: the message names the file and the problem, the loaded model stays
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await choose(page, [file('bert-mlm-f16', 'config.json'), file('bad', 'bert-truncated.safetensors'), file('bert-mlm-f16', 'tokenizer.json')]);
  const msg = await page.textContent('#ckpt-msg');
  assert.match(msg, /^bert-truncated\.safetensors: weights: safetensors tensor .* exceed the data section .* the previous model stays\.$/);
  assert.equal(await page.getAttribute('#ckpt-msg', 'role'), 'alert');
  await page.locator('#controls').screenshot({ path: path.join(shots, 'desktop-checkpoint-error.png') });
  assert.equal(await page.evaluate(() => window.__attnscope.runs), runs, 'no new run: the previous model is still shown');
  assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.tokens), ref.tokens);
  // a config of another kind names config.json; the model still answers a new text
  await choose(page, [file('bad', 'config-falcon.json', 'config.json'), file('bert-mlm-f16', 'model.safetensors'), file('bert-mlm-f16', 'tokenizer.json')]);
  assert.match(await page.textContent('#ckpt-msg'), /^config\.json: config\.model_type 'falcon' is not supported \(gpt2, bert, llama, /);
  const r2 = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', exp.texts[1].text);
  await settled(page, r2);
  assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.tokens), exp.texts[1].tokens);
  // only some of the files: the picker says which are still needed
  await page.locator('#ckpt-files').setInputFiles([file('bert-mlm-f16', 'config.json')]);
  assert.match(await page.textContent('#ckpt-msg'), /^Still needed: model\.safetensors, tokenizer\.json/);
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('models: dropping config.json, model.safetensors and vocab.txt loads BERT with its older vocabulary file', async (t) => {
  const exp = expected('bert-mlm-f16');
  const ref = exp.texts[1];
  const { page, rec } = await open(`#text=${encodeURIComponent(ref.text)}`);
  if (!await skipWithoutCheckpoints(t, page)) return page.close();
  await page.selectOption('#model', 'checkpoint');
  const files = ['config.json', 'model.safetensors', 'vocab.txt'].map((f) => ({ name: f, b64: readFileSync(path.join(HF, 'bert-mlm-f16', f)).toString('base64') }));
  // a drop of three files on the drop zone, as a file manager would deliver it
  await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
    const zone = document.getElementById('ckpt-drop');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
  await checkpointShown(page);
  assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.tokens), ref.tokens, 'vocab.txt, lowercased as BertTokenizer does');
  const m = ref.mlm[0];
  const ids = await page.locator(`#predictions [data-name="mask-${m.position}"] li`).evaluateAll((lis) => lis.map((li) => Number(li.dataset.id)));
  assert.deepEqual(ids, m.ids);
  clean(rec);
  await page.close();
});

test('models: a GPT-2 checkpoint shows the next-token top-k and "generate" continues the text greedily', async (t) => {
  const exp = expected('gpt2-lmhead-f32');
  const ref = exp.texts[0];
  const tokenizer = makeGpt2TokenizerJson({ merges: 'pairs' });
  for (const [name, viewport] of [['desktop', undefined], ['phone', { width: 390, height: 844 }]]) {
    const { page, rec } = await open(`#text=${encodeURIComponent(ref.text)}`, viewport);
    if (!await skipWithoutCheckpoints(t, page)) return page.close();
    await choose(page, [file('gpt2-lmhead-f32', 'config.json'), file('gpt2-lmhead-f32', 'model.safetensors'),
      { name: 'tokenizer.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tokenizer)) }]);
    await checkpointShown(page);
    assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.tokens), ref.tokens);
    const next = await page.locator('#predictions [data-name="next"] li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.id)));
    assert.deepEqual(next, ref.next.ids, 'next-token top-5 as PyTorch');
    // causal: every weight above the diagonal is 0
    const w = JSON.parse(await page.getAttribute('canvas[data-kind="attention"]', 'data-values'));
    const n = ref.n;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(w[i * n + j], 0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name}: no horizontal scroll (${overflow}px over)`);
    await page.locator('#panel-input').screenshot({ path: path.join(shots, `${name}-checkpoint-gpt2.png`) });
    if (name === 'desktop') {
      const runs = await page.evaluate(() => window.__attnscope.runs);
      await page.click('#generate');
      await settled(page, runs);
      assert.equal(await page.inputValue('#text'), ref.text + ref.generate.text, '8 greedy tokens appended');
      assert.ok(await page.evaluate(() => window.__attnscope.trace.n) > ref.n, 'the longer text is run again');
    }
    assert.equal(await errorText(page), null);
    clean(rec);
    await page.close();
  }
});

test('models: the bundled trained models are offered, and a transformer one is drawn', async (t) => {
  const { page, rec } = await open();
  assert.equal(await page.evaluate(() => window.__attnscope.info.ready), true, 'the module loaded');
  const bundled = await page.evaluate(() => window.__attnscope.info.bundled);
  if (!bundled.length) {
    t.skip('this build of the module has no bundled models');
    return page.close();
  }
  const options = await page.locator('#model-bundled option').evaluateAll((os) => os.map((o) => ({ value: o.value, disabled: o.disabled })));
  assert.deepEqual(options.map((o) => o.value), bundled.map((m) => m.name), 'one option per bundled model');
  for (const o of options) {
    const arch = bundled.find((m) => m.name === o.value).architecture;
    assert.equal(o.disabled, !['encoder', 'decoder', 'encoder-decoder'].includes(arch), `${o.value} (${arch})`);
  }
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', '3 9 1 4 7>');
  await page.selectOption('#model', 'reverse');
  await settled(page, runs);
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'reverse' && !document.documentElement.dataset.busy);
  assert.equal(await page.evaluate(() => window.__attnscope.trace.layers.length), 3);
  assert.equal(await errorText(page), null);
  assert.match(await page.textContent('#model-about'), /Reverses a sequence of digits/);
  // the held-out score is measured in the page, with the module's generate, on models/reverse/heldout.json
  await page.waitForSelector('#model-about [data-name="heldout"]:text-matches("exact")', { timeout: 60000 });
  const [, correct, total] = /(\d+) of (\d+) exact/.exec(await page.textContent('#model-about [data-name="heldout"]'));
  assert.equal(Number(total), JSON.parse(readFileSync(path.join(root, 'models', 'reverse', 'heldout.json'), 'utf8')).items.length);
  assert.ok(Number(correct) / Number(total) >= 0.99, `held-out exact ${correct}/${total}`);
  const runs2 = await page.evaluate(() => window.__attnscope.runs);
  await page.click('#generate');
  await settled(page, runs2);
  assert.match(await page.inputValue('#text'), /^3 9 1 4 7>74193/, 'the model reverses the digits');
  // the date model: the source is the text, the target its greedy output, cross-attention drawn
  const runs3 = await page.evaluate(() => window.__attnscope.runs);
  await page.selectOption('#model', 'dates');
  await page.fill('#text', 'November 22, 2026');
  await settled(page, runs3);
  await page.waitForFunction(() => window.__attnscope.traceState?.text === 'November 22, 2026' && !document.documentElement.dataset.busy);
  assert.equal(await page.textContent('#predictions [data-name="generated"] strong'), '2026-11-22');
  assert.equal(await page.locator('canvas[data-kind="cross"]').count(), await page.evaluate(() => window.__attnscope.trace.numHeads));
  await page.locator('#panel-input').screenshot({ path: path.join(shots, 'desktop-bundled-dates.png') });
  // the output grows token by token: with the first 4 output tokens shown, the cross-attention rows are the
  // first 4 rows of the whole output's (the decoder is causal and greedy decoding is prefix-consistent)
  const whole = await page.evaluate(() => {
    const x = window.__attnscope.trace;
    return { n: x.n, m: x.source.n, H: x.numHeads, w: x.layers.map((ly) => Array.from(ly.cross.weights)) };
  });
  const runs4 = await page.evaluate(() => window.__attnscope.runs);
  await page.locator('#grow').fill('4');
  await settled(page, runs4);
  const part = await page.evaluate(() => {
    const x = window.__attnscope.trace;
    return { n: x.n, tokens: x.tokens, w: x.layers.map((ly) => Array.from(ly.cross.weights)) };
  });
  // the decoder reads <s> + the output so far (row i is what it attended to while writing output token i)
  assert.deepEqual(part.tokens, ['<s>', '2', '0', '2', '6']);
  part.w.forEach((w, l) => {
    let err = 0;
    for (let hd = 0; hd < whole.H; hd++) {
      for (let c = 0; c < part.n * whole.m; c++) err = Math.max(err, Math.abs(w[hd * part.n * whole.m + c] - whole.w[l][hd * whole.n * whole.m + c]));
    }
    assert.ok(err < 1e-6, `layer ${l}: the shown rows equal the whole output's first rows (max diff ${err})`);
  });
  assert.match(await page.textContent('#predictions'), /the first 4 of 10 output tokens/);
  assert.match(await page.evaluate(() => location.hash), /model=dates/, 'a bundled model is in the link');
  clean(rec);
  await page.close();
});

test("models: a bundled model's labelled heads are listed under its paragraph and select their head", async () => {
  const { page, rec } = await open();
  assert.equal(await page.evaluate(() => window.__attnscope.info.ready), true, 'the module loaded');
  const cfg = JSON.parse(readFileSync(path.join(root, 'models', 'english', 'config.json'), 'utf8'));
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', 'the act of writing, reading, or speaking');
  await page.selectOption('#model', 'english');
  await settled(page, runs);
  await page.waitForSelector('#model-about [data-name="head-legend"] button');
  const chips = await page.locator('#model-about [data-name="head-legend"] button').evaluateAll((bs) => bs.map((b) => ({
    layer: Number(b.dataset.layer), head: Number(b.dataset.head), measures: b.dataset.measures, text: b.textContent,
  })));
  // one chip per labelled head of config.json (its labels together), numbered from 1 as the page numbers them
  const want = new Map();
  for (const hd of cfg.heads) want.set(`${hd.layer}:${hd.head}`, [...(want.get(`${hd.layer}:${hd.head}`) ?? []), hd.measure]);
  assert.deepEqual(chips.map(({ layer, head, measures }) => [`${layer}:${head}`, measures.split(' ')]), [...want]);
  const prev = cfg.heads.find((hd) => hd.measure === 'previousToken' && hd.layer === 1 && hd.head === 2);
  assert.ok(chips.some((c) => c.text === `L2 H3: previous token (${prev.score.toFixed(2)})`), JSON.stringify(chips));
  // clicking the head with the strongest space score shows its layer with only that head selected
  const space = cfg.heads.filter((hd) => hd.measure === 'space').sort((x, y) => y.score - x.score)[0];
  const chip = `#model-about [data-name="head-legend"] button[data-layer="${space.layer}"][data-head="${space.head}"]`;
  assert.match(await page.textContent(chip), new RegExp(`^L${space.layer + 1} H${space.head + 1}: spaces \\(${space.score.toFixed(2)}\\)`));
  await page.locator(chip).click();
  // the worker may still be measuring the model's held-out loss (below), which the run for this click waits behind:
  // on a loaded machine that passed the default 30 s once (ci10)
  await page.waitForFunction((l) => window.__attnscope.state.layer === l && !document.documentElement.dataset.busy, space.layer, { timeout: 120000 });
  const st = await page.evaluate(() => window.__attnscope.state);
  assert.equal(st.layer, space.layer);
  assert.equal(st.heads, String(space.head));
  assert.equal(await page.getAttribute(chip, 'aria-pressed'), 'true');
  assert.equal(await page.locator('#model-about [data-name="head-legend"] button.on').count(), 1);
  // the language model's held-out loss is measured in the page (run option logProbs over heldout.json's texts)
  // and agrees with the training script's PyTorch figure for the same texts
  const held = JSON.parse(readFileSync(path.join(root, 'models', 'english', 'heldout.json'), 'utf8'));
  await page.waitForSelector('#model-about [data-name="heldout"]:text-matches("nats per character")', { timeout: 120000 });
  const [, loss, texts] = /([\d.]+) nats per character over \d+ characters of (\d+) texts/.exec(await page.textContent('#model-about [data-name="heldout"]'));
  assert.equal(Number(texts), held.texts.length);
  assert.ok(Math.abs(Number(loss) - held.pytorchLoss) < 1e-3, `held-out loss ${loss} vs PyTorch ${held.pytorchLoss}`);
  await page.locator('#model-picker').screenshot({ path: path.join(shots, 'desktop-bundled-english-heads.png') });
  // dates: its labelled heads are cross-attention heads, and say so
  const dates = JSON.parse(readFileSync(path.join(root, 'models', 'dates', 'config.json'), 'utf8'));
  const best = dates.heads.reduce((x, y) => (y.score > x.score ? y : x));
  await page.selectOption('#model', 'dates');
  const bestChip = `#model-about [data-name="head-legend"] button[data-layer="${best.layer}"][data-head="${best.head}"]`;
  await page.waitForSelector(bestChip);
  assert.equal(await page.locator('#model-about [data-name="head-legend"] button').count(), dates.heads.length);
  assert.equal(await page.textContent(bestChip),
    `L${best.layer + 1} H${best.head + 1} (cross-attention): the source field being written (${best.score.toFixed(2)})`);
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('models: chinese-poems offers its example prompts, shows the next character and its previous-line head, and measures its held-out loss', async () => {
  const dir = path.join(root, 'models', 'chinese-poems');
  const cfg = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const held = JSON.parse(readFileSync(path.join(dir, 'heldout.json'), 'utf8'));
  const as = await createAttnScope({ relaxedSimd: false });
  const ref = await as.loadBundled('chinese-poems');
  const prompt = cfg.examples[0];
  const r = ref.run(prompt);
  const best = cfg.heads.find((hd) => hd.measure === 'previousLine'); // config.json's previous-line head
  for (const [name, viewport] of [['desktop', undefined], ['phone', { width: 390, height: 844 }]]) {
    const { page, rec } = await open(undefined, viewport);
    assert.equal(await page.evaluate(() => window.__attnscope.info.ready), true, 'the module loaded');
    let runs = await page.evaluate(() => window.__attnscope.runs);
    const typed = await page.inputValue('#text');
    await page.selectOption('#model', 'chinese-poems');
    await settled(page, runs);
    // the examples are buttons (config.json's examples): the text box keeps what was there until one is clicked
    await page.waitForSelector('#model-about .example');
    assert.deepEqual(await page.locator('#model-about .example').evaluateAll((bs) => bs.map((b) => b.title)), cfg.examples);
    assert.equal(await page.inputValue('#text'), typed);
    runs = await page.evaluate(() => window.__attnscope.runs);
    await page.locator('#model-about .example').first().click();
    await settled(page, runs);
    await page.waitForFunction((p) => window.__attnscope.traceState?.text === p && !document.documentElement.dataset.busy, prompt);
    assert.equal(await page.inputValue('#text'), prompt);
    assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.tokens), r.tokens);
    const next = await page.locator('#predictions [data-name="next"] li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.id)));
    assert.deepEqual(next, Array.from(r.next.ids).slice(0, next.length), 'the next characters as attnscope computes them in Node');
    // L3 H4 (config.json's previousLine head) on the poem: from the query that writes a character of line 2, the
    // row's largest weight is on the character in the same place of line 1, as the page's heatmap shows it
    const w = r.layers[best.layer].attention.weights;
    const line2 = prompt.indexOf('\n') + 1;
    let hits = 0;
    for (let o = 1; o < 5; o++) {
      const q = line2 + o - 1;
      const row = Array.from(w.subarray((best.head * r.n + q) * r.n, (best.head * r.n + q) * r.n + q + 1));
      if (row.indexOf(Math.max(...row)) === o) hits += 1;
    }
    assert.ok(hits >= 3, `L${best.layer + 1} H${best.head + 1} looks one line up (${hits} of 4 rows)`);
    assert.equal(await page.textContent(`#model-about [data-name="head-legend"] button[data-layer="${best.layer}"][data-head="${best.head}"]`),
      `L${best.layer + 1} H${best.head + 1}: same position of the previous line (${best.score.toFixed(2)})`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name}: no horizontal scroll (${overflow}px over)`);
    if (name === 'desktop') {
      await page.waitForSelector('#model-about [data-name="heldout"]:text-matches("nats per character")', { timeout: 120000 });
      const [, loss, texts] = /([\d.]+) nats per character over \d+ characters of (\d+) texts/.exec(await page.textContent('#model-about [data-name="heldout"]'));
      assert.equal(Number(texts), held.texts.length);
      assert.ok(Math.abs(Number(loss) - held.pytorchLoss) < 1e-3, `held-out loss ${loss} vs PyTorch ${held.pytorchLoss}`);
      // a first verse: "generate" continues it (the whole poem of examples[0] ends: the model writes </s>)
      const verse = cfg.examples[1];
      runs = await page.evaluate(() => window.__attnscope.runs);
      await page.locator('#model-about .example').nth(1).click();
      await settled(page, runs);
      runs = await page.evaluate(() => window.__attnscope.runs);
      await page.click('#generate');
      await settled(page, runs);
      const more = ref.generate(verse, { maxNewTokens: 8 }).text;
      assert.equal(more.length, 8);
      assert.equal(await page.inputValue('#text'), verse + more, '8 greedy characters appended');
      // in 中文 the paragraph is config.json's zh-CN description, marked as Chinese
      await page.selectOption('#lang', 'zh-CN');
      await page.waitForFunction((d) => document.querySelector('#model-about span[lang="zh-CN"]')?.textContent === d, cfg.descriptions['zh-CN']);
      await page.locator('#model-picker').screenshot({ path: path.join(shots, 'desktop-bundled-chinese-poems-zh.png') });
      await page.selectOption('#lang', 'en');
      await page.waitForSelector('#model-about span[lang="en"]');
    }
    await page.locator('#model-picker').screenshot({ path: path.join(shots, `${name}-bundled-chinese-poems.png`) });
    await page.screenshot({ path: path.join(shots, `${name}-bundled-chinese-poems-page.png`), fullPage: false });
    assert.equal(await errorText(page), null);
    clean(rec);
    await page.close();
  }
  ref.delete();
});
