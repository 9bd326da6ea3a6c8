// Real-browser test of loadPretrained's streamWeights on a File in a Web Worker (issue 28; README "Streamed weights";
// bindings/js/blob-reader.js). A small Llama-shaped BF16 checkpoint (2 layers, 4 query heads sharing 2 K/V heads,
// tied head) is written to disk at test time, chosen in a file input of a blank cross-origin-isolated page and posted
// to a module worker that loads it with the package twice: resident (its bytes) and streamed (the File). Checked:
//   - every layer's attention weights and output, the tiled path's head maps and summaries, the output and
//     next.probs are equal bit for bit (their float32 bytes), in the isolated page (the layer reads go through
//     blob-reader.js's helper worker: exactly one is made) and with crossOriginIsolated hidden (FileReaderSync on
//     the model's thread: none made);
//   - the file changed on disk after it was chosen makes the streamed run throw the named error (run, the embedding
//     table its first read, the tensor, the file, NotReadableError) on both paths; the resident model still runs, and so does the
//     streamed one's error again (the module keeps working).
// No timed assertions. Run: node --test tests/browser/stream-weights.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useBrowser, root } from './harness.js';
import { llamaCheckpoint, sparseLlamaCheckpoint } from '../js/support/llama.mjs';
import { CFG as LLAMA_1B } from '../../bench/llama1b_checkpoint.mjs';

const open = useBrowser();
const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 258, hidden_size: 64, intermediate_size: 96,
  num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 256,
  rms_norm_eps: 1e-5, rope_theta: 10000.0, hidden_act: 'silu', tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257,
};
const TOKENIZER = readFileSync(path.join(root, 'tests', 'fixtures', 'modern', 'llama-bf16-tied-mqa-headdim-linear-v5', 'tokenizer.json'), 'utf8');
const BLANK = '<!doctype html><meta charset="utf-8"><title>streamWeights</title><input type="file" id="weights"><input type="file" id="big"><input type="file" id="ckpt">';
const ISOLATED = { 'content-type': 'text/html', 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

// The worker (a module from a Blob URL; ORIGIN replaced): counts the workers it makes, then answers
// { step: 'compare' } with what differs between the resident and streamed runs, and { step: 'fail' } with the
// streamed run's error and whether the resident model still runs.
const WORKER = `import { createAttnScope } from 'ORIGIN/bindings/js/index.js';
let made = 0;
const Base = self.Worker;
self.Worker = class extends Base { constructor(...a) { super(...a); made += 1; } };
const as = await createAttnScope({ threads: 1 });
let resident = null;
let streamed = null;
const bits = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const same = (a, b) => a.length === b.length && bits(a).every((x, i) => x === bits(b)[i]);
self.onmessage = async (e) => {
  const d = e.data;
  try {
    if (d.step === 'compare') {
      if (!d.isolated) Object.defineProperty(self, 'crossOriginIsolated', { value: false, configurable: true });
      resident = await as.loadPretrained({ config: d.config, tokenizer: d.tokenizer, weights: new Uint8Array(await d.file.arrayBuffer()) });
      const before = made;
      streamed = await as.loadPretrained({ config: d.config, tokenizer: d.tokenizer, weights: d.file, streamWeights: true });
      const helpers = made - before;
      const differ = [];
      let compared = 0;
      const check = (a, b, what) => { compared += 1; if (!a || !b || !same(a, b)) differ.push(what); };
      for (const text of d.texts) {
        for (const options of [{ trace: 'full' }, { trace: 'none', heads: [{ layer: 0, head: 1 }, { layer: 1, head: 3 }], summaries: { topK: 3 } }]) {
          const a = resident.run(text, options);
          const b = streamed.run(text, options);
          a.layers.forEach((l, i) => {
            if (l.attention?.weights) check(l.attention.weights, b.layers[i].attention?.weights, text + ': layer ' + i + ' attention');
            if (l.output) check(l.output, b.layers[i].output, text + ': layer ' + i + ' output');
            if (l.attention?.summary) check(l.attention.summary.entropy, b.layers[i].attention?.summary?.entropy, text + ': layer ' + i + ' entropy');
            if (l.attention?.summary) check(l.attention.summary.topWeights, b.layers[i].attention?.summary?.topWeights, text + ': layer ' + i + ' top-k');
          });
          (a.heads ?? []).forEach((h, i) => check(h.weights, b.heads?.[i]?.weights, text + ': head map ' + i));
          check(a.output, b.output, text + ': output');
          check(a.next.probs, b.next.probs, text + ': next.probs');
          if (a.next.ids.join() !== b.next.ids.join()) differ.push(text + ': next.ids');
        }
      }
      postMessage({ helpers, streamedFlag: streamed.config.checkpoint.streamed, differ, compared, layers: resident.run(d.texts[0]).layers.length });
    } else {
      let error = null;
      try { streamed.run(d.texts[0]); } catch (err) { error = { name: err.name, message: err.message }; }
      let again = null;
      try { streamed.run(d.texts[0]); } catch (err) { again = err.message; }
      const r = resident.run(d.texts[0]);
      postMessage({ error, again, residentN: r.n });
    }
  } catch (err) {
    postMessage({ failed: String(err?.stack ?? err) });
  }
};
postMessage({ ready: true });`;

test('streamWeights on a File in a worker: streamed equals resident bit for bit (helper worker and FileReaderSync), a changed file is a named error', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-stream-'));
  const file = path.join(dir, 'model.safetensors');
  const bytes = llamaCheckpoint(CONFIG, { dtype: 'BF16', seed: 28, scale: 0.3 });
  writeFileSync(file, bytes);
  try {
    const { page } = await open('stream-blank.html', undefined, async () => {}, (p) => p.route('**/web/stream-blank.html', (route) => route.fulfill({ status: 200, headers: ISOLATED, body: BLANK })));
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), true, 'the blank page is cross-origin isolated');
    await page.locator('#weights').setInputFiles(file);
    const texts = ['The cat sat on the mat.', 'Hello, world: 12345 and a longer sentence to give the rows some length.'];
    // two workers: the isolated one (helper worker) and one with crossOriginIsolated hidden (FileReaderSync)
    await page.evaluate((src) => {
      window.workers = [true, false].map(() => {
        const w = new Worker(URL.createObjectURL(new Blob([src.replace('ORIGIN', location.origin)], { type: 'text/javascript' })), { type: 'module' });
        w.answers = [];
        w.ready = new Promise((resolve) => { w.onmessage = (e) => { if (e.data.ready) resolve(); else w.answers.shift()?.(e.data); }; });
        w.ask = (msg) => new Promise((resolve) => { w.answers.push(resolve); w.postMessage(msg); });
        return w;
      });
    }, WORKER);
    const ask = (k, msg) => page.evaluate(async ([k, m]) => {
      const w = window.workers[k];
      await w.ready;
      return w.ask({ ...m, file: document.getElementById('weights').files[0] });
    }, [k, msg]);
    for (const [k, isolated] of [[0, true], [1, false]]) {
      const r = await ask(k, { step: 'compare', isolated, config: CONFIG, tokenizer: TOKENIZER, texts });
      assert.equal(r.failed, undefined, r.failed);
      assert.equal(r.streamedFlag, true);
      assert.equal(r.layers, 2);
      assert.equal(r.helpers, isolated ? 1 : 0, `helper workers made (${isolated ? 'isolated' : 'not isolated'})`);
      assert.ok(r.compared >= 2 * (2 * 2 + 2 + 2 * 2 + 2 + 2), `compared ${r.compared} arrays`);
      assert.deepEqual(r.differ, [], `${isolated ? 'helper worker' : 'FileReaderSync'}: not bit-identical`);
    }
    // the file changes on disk after it was chosen: the File can no longer be read
    appendFileSync(file, Buffer.alloc(64));
    for (const k of [0, 1]) {
      const r = await ask(k, { step: 'fail', texts });
      assert.equal(r.failed, undefined, r.failed);
      assert.ok(r.error, `run on a changed file must throw (${k ? 'FileReaderSync' : 'helper worker'})`);
      // the run's first read: the embedding rows of its ids (the table stays in the file too)
      assert.match(r.error.message, /^run: weights: reading the embedding table \(tensor "model\.embed_tokens\.weight", bytes \d+ to \d+ of weights\) failed: the file 'model\.safetensors' could not be read \(NotReadableError: .*\); was it changed or removed since it was chosen\?$/);
      assert.equal(r.again, r.error.message, 'the same error again: the module keeps working');
      assert.equal(r.residentN, new TextEncoder().encode(texts[0]).length, 'the resident model still runs');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The worker of the test below (a module from a Blob URL; ORIGIN replaced): counts the workers it makes, the
// FileReaderSync objects made on its own thread and the warnings; { step: 'helper' } hammers blob-reader's helper
// directly, { step: 'model' } runs a streamed model at once after its load and again after an idle pause.
const BIG_WORKER = `import { createAttnScope } from 'ORIGIN/bindings/js/index.js';
import { blobHelper, PIECE } from 'ORIGIN/bindings/js/blob-reader.js';
let made = 0;
let direct = 0;
const warnings = [];
const Base = self.Worker;
self.Worker = class extends Base { constructor(...a) { super(...a); made += 1; } };
const Sync = self.FileReaderSync;
self.FileReaderSync = class extends Sync { constructor() { super(); direct += 1; } };
const warn = console.warn.bind(console);
console.warn = (...a) => { warnings.push(a.join(' ')); warn(...a); };
const as = await createAttnScope({ threads: 1 });
const pause = () => new Promise((resolve) => { setTimeout(resolve, 3000); });
const bits = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
self.onmessage = async (e) => {
  const d = e.data;
  try {
    if (d.step === 'helper') {
      const helper = await blobHelper([d.file], [d.file.name]);
      const bursts = [];
      // one synchronous burst at once after the start (the thread stays busy, as in a run), then another after an
      // idle pause: every read answered (bytes, not null), the markers where they were written
      const burst = () => {
        let answered = 0;
        const marks = [];
        for (let k = 0; k < d.reads; k++) {
          const at = Math.floor((k * (d.file.size - PIECE)) / d.reads);
          const r = helper.read(0, at, at + (k % 2 ? PIECE : 4096));
          if (r instanceof Uint8Array) answered += 1;
        }
        for (const m of d.marks) {
          const r = helper.read(0, m.at, m.at + m.bytes.length);
          marks.push(r instanceof Uint8Array ? Array.from(r) : String(r));
        }
        return { answered, marks };
      };
      bursts.push(burst());
      await pause();
      if (typeof gc === 'function') gc();
      bursts.push(burst());
      helper.close();
      postMessage({ helpers: made, bursts, closed: helper.read(0, 0, 8), warnings });
    } else {
      made = 0;
      const model = await as.loadPretrained({ config: d.config, tokenizer: d.tokenizer, weights: d.file, streamWeights: true });
      direct = 0; // the load's own one-byte checks
      const first = model.run(d.text); // at once, in the task that loaded it
      await pause();
      if (typeof gc === 'function') gc();
      const second = model.run(d.text);
      const same = bits(first.output).every((x, i) => x === bits(second.output)[i]);
      model.delete();
      postMessage({ helpers: made, direct, warnings, n: first.n, layers: first.layers.length, same });
    }
  } catch (err) {
    postMessage({ failed: String(err?.stack ?? err) });
  }
};
postMessage({ ready: true });`;

test('streamWeights on big Files: blob-reader\'s helper answers every read, at once after it starts and after an idle pause, past 2 and 4 GiB; a 1B-shaped model (6 layers, 1.26 GB) runs at once after its load with no read falling back', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-stream-big-'));
  try {
    // a sparse 4.6 GB file with bytes written past 2 GiB and past 4 GiB (offsets whose 32-bit halves matter)
    const big = path.join(dir, 'sparse.bin');
    const marks = [{ at: 2 ** 31 + 4093, bytes: [1, 2, 3, 250, 251, 252, 7] }, { at: 2 ** 32 + 8191, bytes: [9, 8, 7, 6, 5] }, { at: 4.5e9, bytes: [42] }];
    const fd = openSync(big, 'w');
    for (const m of marks) writeSync(fd, Buffer.from(m.bytes), 0, m.bytes.length, m.at);
    ftruncateSync(fd, 4.6e9);
    closeSync(fd);
    // the bench's 1B shape with 6 layers (bench/page_memory.mjs --layers 6), zero matrices as holes
    const config = { ...LLAMA_1B, num_hidden_layers: 6 };
    const ckpt = path.join(dir, 'model.safetensors');
    assert.equal(sparseLlamaCheckpoint(ckpt, config), 1255205072, 'the size of the bench\'s 6-layer file');

    const { page } = await open('stream-blank.html', undefined, async () => {}, (p) => p.route('**/web/stream-blank.html', (route) => route.fulfill({ status: 200, headers: ISOLATED, body: BLANK })));
    await page.locator('#big').setInputFiles(big);
    await page.locator('#ckpt').setInputFiles(ckpt);
    await page.evaluate((src) => {
      const w = new Worker(URL.createObjectURL(new Blob([src.replace(/ORIGIN/g, location.origin)], { type: 'text/javascript' })), { type: 'module' });
      w.answers = [];
      w.ready = new Promise((resolve) => { w.onmessage = (e) => { if (e.data.ready) resolve(); else w.answers.shift()?.(e.data); }; });
      w.ask = (msg) => new Promise((resolve) => { w.answers.push(resolve); w.postMessage(msg); });
      window.big = w;
    }, BIG_WORKER);
    const ask = (msg, input) => page.evaluate(async ([m, id]) => {
      await window.big.ready;
      return window.big.ask({ ...m, file: document.getElementById(id).files[0] });
    }, [msg, input]);

    const h = await ask({ step: 'helper', reads: 120, marks }, 'big');
    assert.equal(h.failed, undefined, h.failed);
    assert.equal(h.helpers, 1, 'one helper worker');
    for (const [k, b] of h.bursts.entries()) {
      assert.equal(b.answered, 120, `burst ${k}: every read answered by the helper`);
      assert.deepEqual(b.marks, marks.map((m) => m.bytes), `burst ${k}: the bytes written past 2 GiB and 4 GiB`);
    }
    assert.equal(h.closed, "the file 'sparse.bin' could not be read (its reader was closed)");
    assert.deepEqual(h.warnings, []);

    const r = await ask({ step: 'model', config, tokenizer: TOKENIZER, text: 'Hello world' }, 'ckpt');
    assert.equal(r.failed, undefined, r.failed);
    assert.equal(r.helpers, 1, 'the layers read by a helper worker');
    assert.equal(r.layers, 6);
    assert.equal(r.n, new TextEncoder().encode('Hello world').length);
    assert.equal(r.direct, 0, 'no layer read fell back to FileReaderSync on the model\'s thread');
    assert.deepEqual(r.warnings, [], 'no helper given up');
    assert.equal(r.same, true, 'the run after the pause gives the same bits');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
