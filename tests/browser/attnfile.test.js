// Real-browser test of attention files in the page (issue 29; API.md "Attention files"): a file written by the
// Python helper from PyTorch tensors (tests/fixtures/attention_file, generate.py) is chosen in the picker or
// dropped on its box; the page reads it in its worker (Blob.slice, a head at a time) and its trace holds the same
// numbers as torch (F32 within 1e-6, F16/BF16 widened exactly: expected.json). The weights-only views draw it
// (heatmaps, lines, model view, aggregates, words, exports); the views that need the model say the file has none.
// Bad files get an error naming the tensor or field, and the page keeps what it showed. No request leaves the page.
// A last test writes the files now, with the Python helper from torch tensors (Debian's python3-torch).
// Run: node --test --test-concurrency=1 tests/browser/attnfile.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, settled, clean, root, afterDraw, axeProblems,
} from './harness.js';

const open = useBrowser();
const DIR = path.join(root, 'tests', 'fixtures', 'attention_file');
const expected = JSON.parse(readFileSync(path.join(DIR, 'expected.json'), 'utf8'));
const SHOTS = process.env.ATTNSCOPE_SHOTS ?? path.join(root, 'build', 'screenshots');
mkdirSync(SHOTS, { recursive: true });
const fixture = (name) => ({ name, mimeType: 'application/octet-stream', buffer: readFileSync(path.join(DIR, name)) });

/** Chooses "an attention file…" and gives `file` to the box's input; waits for the page to show it (or the error). */
async function choose(page, file, { fails = false } = {}) {
  const runs = await page.evaluate(() => window.__attnscope.runs);
  if (await page.locator('#attnfile-box').isHidden()) await page.selectOption('#model', 'file');
  await page.setInputFiles('#attnfile-input', file);
  if (fails) {
    await page.waitForFunction(() => document.getElementById('attnfile-msg').getAttribute('role') === 'alert');
    return page.textContent('#attnfile-msg');
  }
  await settled(page, runs);
  return page.textContent('#attnfile-msg');
}

/** The largest |page − torch| over every layer of `key`'s expected weights (self, or cross). */
async function maxError(page, key, attention = 'attention') {
  const got = await page.evaluate((a) => window.__attnscope.trace.layers.map((ly) => Array.from(ly[a].weights)), attention);
  const want = expected[key].layers.map((ly) => (attention === 'cross' ? ly.cross : ly.weights));
  let err = 0;
  want.forEach((w, l) => {
    assert.equal(got[l].length, w.length, `layer ${l}: ${got[l].length} weights, torch ${w.length}`);
    w.forEach((v, i) => { err = Math.max(err, Math.abs(got[l][i] - v)); });
  });
  return err;
}

test('a file written from torch tensors opens in the page with torch\'s numbers (F32 1e-6, BF16/F16 exact)', async () => {
  const { page, rec } = await open('#lang=en');
  for (const [key, file, tol] of [['f32', 'f32.safetensors', 1e-6], ['bf16', 'bf16.safetensors', 0], ['f16', 'f16.safetensors', 0]]) {
    const msg = await choose(page, fixture(file));
    assert.match(msg, new RegExp(`Opened ${file}: 3 layers`));
    const tr = await page.evaluate(() => ({ tokens: window.__attnscope.trace.tokens, file: window.__attnscope.trace.file, model: window.__attnscope.state.model }));
    assert.equal(tr.model, 'file');
    assert.deepEqual(tr.tokens, expected[key].tokens);
    const err = await maxError(page, key);
    assert.ok(err <= tol, `${key}: max |page − torch| = ${err} > ${tol}`);
    console.log(`# ${key}: page vs torch max error ${err}`);
  }
  const cross = await choose(page, fixture('cross-bf16.safetensors'));
  assert.match(cross, /Opened cross-bf16/);
  assert.equal(await maxError(page, 'cross-bf16', 'cross'), 0);
  assert.equal(await page.isVisible('#export-cross'), true, 'the cross-attention export is offered');
  clean(rec);
  await page.close();
});

test('weights-only views draw the file; the views that need the model say it has none; exports work', async () => {
  const { page, rec } = await open('#lang=en');
  await choose(page, fixture('uniform-f32.safetensors'));
  // heatmaps (one per head) and lines of layer 1; the model view's grid; the steps and embeddings notes
  assert.equal(await page.locator('#attention-view canvas[data-kind="attention"]').count(), 2);
  await page.evaluate(() => document.getElementById('panel-model').scrollIntoView());
  await page.waitForSelector('#model-view .mv-grid'); // model view: every layer × head
  await page.evaluate(() => window.scrollTo(0, 0));
  for (const id of ['steps', 'embeddings', 'positional-view']) assert.match(await page.textContent(`#${id}`), /attention file: it holds attention weights only/);
  assert.equal(await page.isHidden('#panel-causal'), true);
  assert.match(await page.textContent('[data-name="file-summary"]'), /uniform-f32\.safetensors: 6 tokens · 2 layers · 2 heads · model: torch-softmax-uniform-f32/);
  // mean over heads equals the mean of torch's two heads
  await afterDraw(page, () => page.selectOption('#agg', 'mean'));
  assert.ok(await page.locator('#aggregate-view canvas').count() >= 1, 'the mean map is drawn');
  for (const agg2 of ['max', 'rollout']) await afterDraw(page, () => page.selectOption('#agg', agg2));
  assert.ok(await page.locator('#aggregate-view canvas').count() >= 1, 'rollout drawn for a whole file');
  await afterDraw(page, () => page.selectOption('#agg', 'heads'));
  await afterDraw(page, () => page.check('#merge-words'));
  assert.ok(await page.locator('#attention-view canvas[data-kind="attention"]').count() >= 1, 'words merged');
  await afterDraw(page, () => page.uncheck('#merge-words'));
  await afterDraw(page, () => page.fill('#topk', '2'));
  // the heatmap CSV export: layer 1, head 1 and 2, top-2 kept as on screen
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('button[data-export="heatmap"][data-format="csv"]')]);
  const csv = readFileSync(await dl.path(), 'utf8');
  assert.match(csv, /The|cat/);
  const [dl2] = await Promise.all([page.waitForEvent('download'), page.click('button[data-export="overview"][data-format="json"]')]);
  const ov = JSON.parse(readFileSync(await dl2.path(), 'utf8'));
  assert.ok(JSON.stringify(ov).length > 100);
  await afterDraw(page, () => page.fill('#topk', '0'));
  await page.screenshot({ path: path.join(SHOTS, 'attnfile-page.png'), fullPage: false });
  clean(rec);
  await page.close();
});

/** A safetensors file from a header object and float32 data. */
function safetensors(header, f32) {
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.from(new Float32Array(f32).buffer)]);
}
const meta = (tokens) => ({ tokens: JSON.stringify(tokens) });

test('bad files: an error naming the tensor or field, and the page keeps what it showed', async () => {
  const { page, rec } = await open('#lang=en');
  await choose(page, fixture('uniform-f32.safetensors'));
  const before = await page.evaluate(() => ({ serial: window.__attnscope.runs, w: Array.from(window.__attnscope.trace.layers[0].attention.weights) }));
  const row12 = [0.6, 0.6, 0.5, 0.5]; // row 0 sums to 1.2
  const cases = [
    ['not-safetensors.safetensors', Buffer.from('hello, this is not a safetensors file at all'), /header length|safetensors/],
    ['truncated.safetensors', readFileSync(path.join(DIR, 'f32.safetensors')).subarray(0, 300), /truncat|beyond|end of the file|data_offsets|bytes/],
    ['shape.safetensors', safetensors({ __metadata__: meta(['a', 'b', 'c']), 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, [1, 0, 0, 1]), /attentions\.0/],
    ['negative.safetensors', safetensors({ __metadata__: meta(['a', 'b']), 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, [1.5, -0.5, 0, 1]), /attentions\.0/],
    ['nan.safetensors', safetensors({ __metadata__: meta(['a', 'b']), 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, [NaN, 0, 0, 1]), /attentions\.0/],
    ['row12.safetensors', safetensors({ __metadata__: meta(['a', 'b']), 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, row12), /attentions\.0.*row 0|row 0.*attentions\.0/],
    ['no-tokens.safetensors', safetensors({ __metadata__: { model: 'x' }, 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, [1, 0, 0, 1]), /tokens/],
  ];
  const big = Buffer.alloc(64);
  big.writeBigUInt64LE(10n * 2n ** 30n);
  cases.push(['10gb-header.safetensors', big, /header length/]);
  for (const [name, buffer, re] of cases) {
    const msg = await choose(page, { name, mimeType: 'application/octet-stream', buffer }, { fails: true });
    assert.match(msg, re, `${name}: ${msg}`);
    assert.match(msg, new RegExp(`^${name.replace('.', '\\.')}: readAttentionFile:`), `${name}: the message names the file and the function`);
    assert.match(msg, /the file shown before stays/);
    const now = await page.evaluate(() => ({ serial: window.__attnscope.runs, w: Array.from(window.__attnscope.trace.layers[0].attention.weights) }));
    assert.deepEqual(now, before, `${name}: the page keeps what it showed`);
  }
  clean(rec);
  await page.close();
});

test('dropped on its box, in 中文, on a phone: the file opens; axe-core finds no serious or critical violation', async () => {
  const { page, rec } = await open('#lang=zh-CN', { width: 390, height: 844 });
  await page.selectOption('#model', 'file');
  const runs = await page.evaluate(() => window.__attnscope.runs);
  const buffer = readFileSync(path.join(DIR, 'uniform-f32.safetensors'));
  await page.evaluate((b64) => {
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'uniform-f32.safetensors'));
    const zone = document.getElementById('attnfile-drop');
    for (const type of ['dragenter', 'dragover', 'drop']) zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, buffer.toString('base64'));
  await settled(page, runs);
  assert.match(await page.textContent('#attnfile-msg'), /^已打开 uniform-f32\.safetensors：2 层 × 2 个头，6 个词元/);
  assert.match(await page.textContent('#steps'), /此轨迹读自注意力文件/);
  assert.equal(await maxError(page, 'uniform-f32'), 0);
  // two files pinned in the compare panel
  await page.click('#compare-pin-a');
  await page.click('#attention-view .tab[data-layer="1"]');
  await page.waitForFunction(() => window.__attnscope.state.layer === 1);
  await page.click('#compare-pin-b');
  await page.waitForSelector('#compare-view canvas[data-kind="compare-diff"]');
  const problems = await axeProblems(page);
  assert.deepEqual(problems, [], 'axe-core: no serious or critical violation (file open, compare drawn, phone, 中文)');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page fits the phone's width (overflow ${overflow} px)`);
  await page.evaluate(() => document.getElementById('panel-compare').scrollIntoView());
  await page.screenshot({ path: path.join(SHOTS, 'compare-phone-zh.png') });
  clean(rec);
  await page.close();
});

/** Rollout to each layer (Abnar & Zuidema 2020) in float64, written here from its definition: per layer the head mean
 * W, Â = W + I with rows renormalised, R = Â_l ⋯ Â_0. `layers[l][hd]` is a head [N, N] (null: all zeros). */
function rolloutRef(layers, N) {
  let R = null;
  for (const heads of layers) {
    const A = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (__, j) => (i === j ? 1 : 0)));
    for (const w of heads) if (w) for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) A[i][j] += w[i * N + j] / heads.length;
    for (const row of A) { const s = row.reduce((x, y) => x + y, 0); row.forEach((v, j) => { row[j] = v / s; }); }
    R = R ? A.map((row) => R[0].map((_, j) => row.reduce((s, a, k) => s + a * R[k][j], 0))) : A;
  }
  return R;
}

test('a file too big to hold (200 MiB as F32): a layer read when shown, rollout and the model view streamed head by head', async () => {
  // 50 layers × 16 heads × 256 tokens: layer 0 uniform rows, layer 1 heads 0 and 1 the previous token, layer 2 head 2
  // half on token 0 and half on itself, layer 9's head 3 with a row summing to 1.2, the rest a hole (zeros: a fully
  // masked query's row) — written sparse, so it takes a few MB of disk
  const { mkdtempSync, openSync, writeSync, ftruncateSync, closeSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const L = 50; const H = 16; const N = 256;
  const per = H * N * N * 4;
  const header = { __metadata__: { tokens: JSON.stringify(Array.from({ length: N }, (_, i) => `t${i}`)) } };
  for (let l = 0; l < L; l++) header[`attentions.${l}`] = { dtype: 'F32', shape: [H, N, N], data_offsets: [l * per, (l + 1) * per] };
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-lazy-'));
  const file = path.join(dir, 'lazy.safetensors');
  const fd = openSync(file, 'w');
  writeSync(fd, Buffer.concat([len, json]));
  const base = 8 + json.length;
  const at = (l, hd) => base + l * per + hd * N * N * 4;
  const layers = Array.from({ length: 6 }, () => Array(H).fill(null)); // what layers 0…5 hold, for the reference
  layers[0] = layers[0].map(() => new Float32Array(N * N).fill(1 / N));
  writeSync(fd, Buffer.from(new Float32Array(H * N * N).fill(1 / N).buffer), 0, per, at(0, 0));
  const prev = new Float32Array(N * N);
  for (let i = 1; i < N; i++) prev[i * N + i - 1] = 1;
  const half = new Float32Array(N * N);
  half[0] = 1;
  for (let i = 1; i < N; i++) { half[i * N] = 0.5; half[i * N + i] = 0.5; }
  for (const [l, hd, w] of [[1, 0, prev], [1, 1, prev], [2, 2, half]]) {
    layers[l][hd] = w;
    writeSync(fd, Buffer.from(w.buffer), 0, w.byteLength, at(l, hd));
  }
  const bad = new Float32Array(N).fill(0);
  bad[0] = 0.6; bad[1] = 0.6; // row 7 of layer 9, head 3 sums to 1.2
  writeSync(fd, Buffer.from(bad.buffer), 0, N * 4, at(9, 3) + 7 * N * 4);
  ftruncateSync(fd, base + L * per);
  closeSync(fd);
  try {
    const { page, rec } = await open('#lang=en');
    const msg = await choose(page, file);
    assert.match(msg, /Opened lazy\.safetensors: 50 layers × 16 heads, 256 tokens \(200\.0 MB: read one layer at a time/);
    const held = await page.evaluate(() => window.__attnscope.trace.layers.map((ly) => !!ly.attention.weights));
    assert.deepEqual(held, held.map((_, l) => l === 0), 'the trace holds the shown layer only');
    // the model view streams all 800 heads into block-max thumbnails; layer 10's head 3 is refused (its row 7), drawn
    // blank and named, and every other head drawn
    // (drawn off screen while idle, it waits for a click; drawn on screen, it reads at once)
    await page.evaluate(() => document.getElementById('panel-model').scrollIntoView());
    await page.waitForSelector('#model-view [data-name="stream-start"], #model-view [data-name="file-stream"] progress, #model-view canvas.mv-canvas');
    if (await page.locator('#model-view [data-name="stream-start"]').count()) {
      assert.match(await page.textContent('#model-view [data-name="stream-start"]'), /Read the file head by head for the model view \(200 MB\)/);
      await page.click('#model-view [data-name="stream-start"]');
    }
    await page.waitForSelector('#model-view canvas.mv-canvas[data-stride="8"]');
    assert.match(await page.textContent('#model-view [data-name="model-refused"]'), /\(1: L10 H4\).*attentions\.9.*head 3.*row 7/);
    await page.evaluate(() => window.scrollTo(0, 0));
    // layer 6: read when shown (zeros are valid rows); rollout to it streamed from layers 1…6 against float64
    let runs = await page.evaluate(() => window.__attnscope.runs);
    await page.click('#attention-view .tab[data-layer="5"]');
    await settled(page, runs);
    assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.layers.map((ly) => !!ly.attention.weights).flatMap((v, l) => (v ? [l] : []))), [5]);
    await page.screenshot({ path: path.join(SHOTS, 'attnfile-lazy.png') });
    await page.selectOption('#agg', 'rollout');
    await page.waitForSelector('#aggregate-view canvas[data-kind="aggregate"][data-agg="rollout"]');
    const got = await page.evaluate(() => Array.from(window.__attnscope.streamed('rollout', 5).rollout));
    const want = rolloutRef(layers, N);
    let err = 0;
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) err = Math.max(err, Math.abs(got[i * N + j] - want[i][j]));
    console.log(`# streamed rollout to layer 6 vs float64: max error ${err.toExponential(2)}`);
    assert.ok(err <= 1e-6, `rollout: max |page − float64| = ${err}`);
    await page.selectOption('#agg', 'heads');
    // layer 10: its head 3's row 7 is refused as it is read; the page keeps layer 6
    runs = await page.evaluate(() => window.__attnscope.runs);
    await page.click('#attention-view .tab[data-layer="9"]');
    await settled(page, runs);
    assert.match(await page.evaluate(() => window.__attnscope.error), /attentions\.9.*head 3.*row 7/);
    assert.deepEqual(await page.evaluate(() => window.__attnscope.trace.layers.map((ly) => !!ly.attention.weights).flatMap((v, l) => (v ? [l] : []))), [5]);
    rec.errors = rec.errors.filter((e) => !/attentions\.9/.test(e)); // the refused head is the error shown, not a fault
    const mv = await page.evaluate(() => {
      const v = window.__attnscope.streamed('model');
      const s = v.sections[0];
      return { stride: v.stride, L: s.thumbs.length, tn: s.tn, heads: [0, 1, 2].map((l) => Array.from(s.thumbs[l])), entropy: [0, 1].map((l) => Array.from(s.entropy[l])), refused: [s.entropy[9][3], s.entropy[9][2]] };
    });
    assert.deepEqual([mv.stride, mv.L, mv.tn], [8, 50, 32]);
    const pool = (w) => { // block max of 8 × 8 cells, from the data written above
      const out = new Float32Array(32 * 32);
      if (w) for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) out[(i >> 3) * 32 + (j >> 3)] = Math.max(out[(i >> 3) * 32 + (j >> 3)], w[i * N + j]);
      return Array.from(out);
    };
    for (const l of [0, 1, 2]) {
      for (let hd = 0; hd < H; hd++) assert.deepEqual(mv.heads[l].slice(hd * 1024, (hd + 1) * 1024), pool(layers[l][hd]), `thumbnail of layer ${l + 1} head ${hd + 1}`);
    }
    assert.ok(Math.abs(mv.entropy[0][0] - Math.log(N)) < 1e-5, 'a uniform head\'s entropy is ln 256');
    assert.equal(mv.entropy[1][0], 0, 'a previous-token head\'s entropy is 0');
    assert.ok(Number.isNaN(mv.refused[0]) && mv.refused[1] === 0, 'the refused head has no entropy; its neighbour (all zeros) has 0');
    assert.match(await page.textContent('#model-view [data-name="model-streamed"]'), /block of cells \(block max\)/);
    // the every-layer export of a big file: the model view's thumbnails (JSON here)
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('button[data-export="overview"][data-format="json"]')]);
    const ov = JSON.parse(readFileSync(await dl.path(), 'utf8'));
    assert.equal(ov.panels.length, 50 * 16);
    assert.deepEqual(ov.panels[16].shape, [32, 32]);
    assert.deepEqual(ov.panels[16].values.flat(), pool(prev), 'the export holds layer 2 head 1\'s thumbnail');
    assert.equal(ov.tokens[1], 't8…t15');
    await page.evaluate(() => document.getElementById('panel-model').scrollIntoView());
    await page.screenshot({ path: path.join(SHOTS, 'attnfile-lazy-model.png') });
    clean(rec);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('round trip now: python/attnscope.save writes torch tensors (F32, BF16), the page reads torch\'s numbers back', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-rt-'));
  // Hugging Face's eager attention: softmax(q k^T * scale + mask), [batch, heads, n, n] per layer; batch index 1 saved
  const script = `
import sys, json, torch
sys.path.insert(0, ${JSON.stringify(path.join(root, 'python'))})
import attnscope
g = torch.Generator().manual_seed(291)
tokens = ["Hello", "Ġworld", "Ġ你好", "!"]
att = tuple(torch.softmax(torch.randn(2, h, 4, 4, generator=g) * 3, dim=-1) for h in (4, 2))
out = {}
for dt, name in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16")):
    attnscope.save(${JSON.stringify(dir)} + "/rt-" + name + ".safetensors", att, tokens, model="rt", batch_index=1, dtype=name)
    out[name] = [a[1].to(dt).float().reshape(-1).tolist() for a in att]
json.dump(out, open(${JSON.stringify(dir)} + "/expected.json", "w"))
`;
  try {
    // Debian's python3, with python3-torch
    const py = spawnSync(existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', ['-c', script], { encoding: 'utf8' });
    assert.equal(py.status, 0, py.stderr);
    const want = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    const { page, rec } = await open('#lang=en');
    for (const [name, tol] of [['float32', 1e-6], ['bfloat16', 0]]) {
      await choose(page, path.join(dir, `rt-${name}.safetensors`));
      const got = await page.evaluate(() => window.__attnscope.trace.layers.map((ly) => Array.from(ly.attention.weights)));
      let err = 0;
      want[name].forEach((w, l) => { assert.equal(got[l].length, w.length); w.forEach((v, i) => { err = Math.max(err, Math.abs(got[l][i] - v)); }); });
      console.log(`# live round trip ${name}: max |page − torch| = ${err}`);
      assert.ok(err <= tol, `${name}: ${err} > ${tol}`);
    }
    clean(rec);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
