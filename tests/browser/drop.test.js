// Real-browser test of the checkpoint drop box (web/views/picker.js, issue 17) under corrupt, truncated,
// empty, wrong-kind and mismatched files: a BERT config.json with GPT-2 weights, a tokenizer.json of another
// model, a 0-byte model.safetensors, a PNG renamed .safetensors, headers claiming 10 GB, random bytes, a
// truncated JSON config, and the bad files of tests/fixtures/hf/bad (see its README). Each set of three files
// is given once through the box's file input (page.setInputFiles) and once as a drop event carrying a
// DataTransfer, as a file manager delivers it. Each must give a visible message (role alert) naming the file
// and the problem, start no run, and leave the loaded model in place: its attention weights stay PyTorch's
// (tests/fixtures/hf/bert-mlm-f16/expected.json), and a new text after the bad files is run by it with
// PyTorch's numbers again. Harness: tests/browser/harness.js.
// Run: node --test --test-concurrency=1 tests/browser/drop.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import {
  useBrowser, settled, clean, errorText, root,
} from './harness.js';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';

const open = useBrowser();
const HF = path.join(root, 'tests', 'fixtures', 'hf');
const GOOD = 'bert-mlm-f16';
const exp = JSON.parse(readFileSync(path.join(HF, GOOD, 'expected.json'), 'utf8'));
const fixture = (c, name, as = name) => ({ name: as, buffer: readFileSync(path.join(HF, c, name)) });
const good = (name) => fixture(GOOD, name);

// ---- files built here

/** A valid 1×1 PNG (signature, IHDR, IDAT, IEND with their CRCs). */
function png() {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0, 255]))), chunk('IEND', Buffer.alloc(0))]);
}

/** A safetensors file: 8-byte little-endian header length (given, or the true one), the header, then `data`. */
function safetensors(header, data = Buffer.alloc(0), claimedLength = null) {
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(claimedLength ?? json.length));
  return Buffer.concat([len, json, data]);
}

/** Seeded bytes (xorshift32), so the random file is the same every run. */
function randomBytes(n, seed) {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

const TEN_GB = 10 * 2 ** 30;
const config = readFileSync(path.join(HF, GOOD, 'config.json'));

/**
 * The bad sets: three files each, and what the message must say — the file it names and a key phrase of the
 * problem (the core's wording, checked here against the words of tests/fixtures/hf/bad/README.md).
 */
function cases() {
  const gpt2Tokenizer = Buffer.from(JSON.stringify(makeGpt2TokenizerJson({ merges: 'pairs' })));
  return [
    {
      what: 'a BERT config.json with GPT-2 weights',
      files: [good('config.json'), fixture('gpt2-model-f16', 'model.safetensors'), good('tokenizer.json')],
      names: 'model.safetensors', phrase: /none of the tensors a bert model needs .*another model's file/,
    },
    {
      what: 'a tokenizer.json of another model (GPT-2 BPE, 50257 tokens)',
      files: [good('config.json'), good('model.safetensors'), { name: 'tokenizer.json', buffer: gpt2Tokenizer }],
      names: 'tokenizer.json', phrase: /tokenizer has 50257 tokens but config\.vocab_size is 398/,
    },
    {
      // (the other way round — a smaller vocabulary than the embedding table — is valid, as in Hugging Face)
      what: 'a tokenizer.json of another model (English BERT, 398 tokens, for the 331-row Chinese BERT)',
      files: [fixture('bert-chinese-bf16', 'config.json'), fixture('bert-chinese-bf16', 'model.safetensors'), good('tokenizer.json')],
      names: 'tokenizer.json', phrase: /tokenizer has 398 tokens but config\.vocab_size is 331/,
    },
    {
      what: 'a 0-byte model.safetensors',
      files: [good('config.json'), fixture('bad', 'empty.safetensors', 'model.safetensors'), good('tokenizer.json')],
      names: 'model.safetensors', phrase: /\(0 bytes\) is shorter than the 8-byte header length/,
    },
    {
      what: 'a PNG renamed .safetensors (the only weights file, so it is used)',
      files: [good('config.json'), { name: 'cat-photo.safetensors', buffer: png() }, good('tokenizer.json')],
      names: 'cat-photo.safetensors', phrase: /header length \(727905341920923785\) exceeds/,
    },
    {
      what: 'a header length claiming 10 GB',
      files: [good('config.json'), { name: 'model.safetensors', buffer: safetensors({ __metadata__: { format: 'pt' } }, Buffer.alloc(0), TEN_GB) }, good('tokenizer.json')],
      names: 'model.safetensors', phrase: /header length \(10737418240\) exceeds the 32 bytes/,
    },
    {
      what: 'a header whose tensor claims 10 GB of data',
      files: [good('config.json'), {
        name: 'model.safetensors',
        buffer: safetensors({ 'embeddings.word_embeddings.weight': { dtype: 'F32', shape: [51200, 51200], data_offsets: [0, 4 * 51200 * 51200] } }, Buffer.alloc(64)),
      }, good('tokenizer.json')],
      names: 'model.safetensors', phrase: /data_offsets \[0, 10485760000\] exceed the data section/,
    },
    {
      what: 'random bytes as the only .safetensors',
      files: [good('config.json'), { name: 'random.safetensors', buffer: randomBytes(4096, 17) }, good('tokenizer.json')],
      names: 'random.safetensors', phrase: /header length \(\d+\) exceeds the 4088 bytes/,
    },
    {
      what: 'a truncated JSON config.json',
      files: [{ name: 'config.json', buffer: config.subarray(0, Math.floor(config.length / 2)) }, good('model.safetensors'), good('tokenizer.json')],
      names: 'config.json', phrase: /config is not valid JSON .*unexpected end of input/,
    },
    {
      what: 'a truncated tokenizer.json',
      files: [good('config.json'), good('model.safetensors'), { name: 'tokenizer.json', buffer: readFileSync(path.join(HF, GOOD, 'tokenizer.json')).subarray(0, 1500) }],
      names: 'tokenizer.json', phrase: /tokenizer is not valid JSON .*at byte 1500/,
    },
    {
      what: 'random bytes as tokenizer.json',
      files: [good('config.json'), good('model.safetensors'), { name: 'tokenizer.json', buffer: randomBytes(2048, 5) }],
      names: 'tokenizer.json', phrase: /tokenizer is not valid JSON/,
    },
    {
      what: 'a tokenizer.json given as config.json (wrong kind)',
      files: [{ name: 'config.json', buffer: readFileSync(path.join(HF, GOOD, 'tokenizer.json')) }, good('model.safetensors'), good('tokenizer.json')],
      names: 'config.json', phrase: /config\.model_type is required/,
    },
    {
      what: 'a PNG renamed config.json',
      files: [{ name: 'config.json', buffer: png() }, good('model.safetensors'), good('tokenizer.json')],
      names: 'config.json', phrase: /config is not valid JSON/,
    },
    {
      what: 'a config of a model type attnscope does not read (falcon)',
      files: [fixture('bad', 'config-falcon.json', 'config.json'), good('model.safetensors'), good('tokenizer.json')],
      names: 'config.json', phrase: /model_type 'falcon' is not supported/,
    },
    {
      what: 'a truncated model.safetensors (data cut)',
      files: [fixture('bert-model-f32', 'config.json'), fixture('bad', 'bert-truncated.safetensors', 'model.safetensors'), fixture('bert-model-f32', 'tokenizer.json')],
      names: 'model.safetensors', phrase: /data_offsets \[4864, 30336\] exceed the data section \(24608 bytes\)/,
    },
    {
      what: 'a model.safetensors cut inside its header',
      files: [fixture('bert-model-f32', 'config.json'), fixture('bad', 'bert-truncated-header.safetensors', 'model.safetensors'), fixture('bert-model-f32', 'tokenizer.json')],
      names: 'model.safetensors', phrase: /header length \(4040\) exceeds the 2020 bytes/,
    },
    {
      what: 'a tensor of the wrong shape',
      files: [fixture('bert-model-f32', 'config.json'), fixture('bad', 'bert-wrong-shape.safetensors', 'model.safetensors'), fixture('bert-model-f32', 'tokenizer.json')],
      names: 'model.safetensors', phrase: /has shape \[32,8\], expected \[16,16\]/,
    },
    {
      what: 'a missing tensor',
      files: [fixture('bert-model-f32', 'config.json'), fixture('bad', 'bert-missing-tensor.safetensors', 'model.safetensors'), fixture('bert-model-f32', 'tokenizer.json')],
      names: 'model.safetensors', phrase: /tensor "encoder\.layer\.1\.output\.dense\.weight" \[16,32\] is missing/,
    },
  ];
}

/** Gives `files` to the box — its file input, or a drop event with a DataTransfer — and waits for the verdict. */
async function give(page, files, via) {
  if (via === 'input') {
    await page.locator('#ckpt-files').setInputFiles(files.map((f) => ({ name: f.name, mimeType: 'application/octet-stream', buffer: f.buffer })));
  } else {
    await page.evaluate((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
      const zone = document.getElementById('ckpt-drop');
      zone.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files.map((f) => ({ name: f.name, b64: f.buffer.toString('base64') })));
  }
  await page.waitForFunction(() => {
    const m = document.getElementById('ckpt-msg').textContent;
    return !document.documentElement.dataset.loading && m !== '' && !/^Loading/.test(m);
  }, null, { timeout: 60000 });
  return page.evaluate(() => {
    const m = document.getElementById('ckpt-msg');
    return { text: m.textContent, role: m.getAttribute('role'), visible: !!m.getClientRects().length && getComputedStyle(m).visibility !== 'hidden' };
  });
}

/** Max |shown − PyTorch| over every layer's attention weights of the trace on screen, for the reference text. */
const pytorchDiff = (page, ref) => page.evaluate((r) => {
  const t = window.__attnscope.trace;
  let d = 0;
  t.layers.forEach((ly, l) => {
    const w = ly.attention.weights;
    if (w.length !== r.attentions[l].length) d = Infinity;
    for (let c = 0; c < w.length; c++) d = Math.max(d, Math.abs(w[c] - r.attentions[l][c]));
  });
  return { d, tokens: t.tokens, model: window.__attnscope.traceState.model };
}, ref);

test('drop: corrupt, truncated, empty, wrong-kind and mismatched files each name the file and the problem; the loaded model stays', { timeout: 600000 }, async (t) => {
  const ref = exp.texts[0];
  const { page, rec } = await open(`#text=${encodeURIComponent(ref.text)}`);
  assert.equal(await page.evaluate(() => window.__attnscope.info.ready), true, 'the module loaded');
  if (!await page.evaluate(() => window.__attnscope.info.pretrained)) {
    t.skip('this build of the module has no as.loadPretrained');
    return page.close();
  }
  // the model that must survive: BERT (bert-mlm-f16) through the file input
  await page.selectOption('#model', 'checkpoint');
  const loaded = await give(page, ['config.json', 'model.safetensors', 'tokenizer.json'].map(good), 'input');
  assert.match(loaded.text, /^Loaded in [\d.]+ s: bert · 2 layers × 2 heads · d 8\.$/);
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint' && !document.documentElement.dataset.busy, null, { timeout: 30000 });
  const base = await pytorchDiff(page, ref);
  assert.deepEqual(base.tokens, ref.tokens);
  assert.ok(base.d <= exp.tolerance.attentions.atol, `loaded model = PyTorch (max diff ${base.d})`);

  const seen = [];
  const problems = [];
  let k = 0;
  for (const c of cases()) {
    for (const via of ['input', 'drop']) {
      const runs = await page.evaluate(() => window.__attnscope.runs);
      const msg = await give(page, c.files, via);
      const where = `${c.what} (${via}): ${msg.text}`;
      seen.push(`${c.what} (${via}): ${msg.text}`);
      const want = (ok, what) => { if (!ok) problems.push(`${where}: ${what}`); };
      want(msg.visible, 'the message is visible');
      want(msg.role === 'alert', `an error (role alert), not ${msg.role}`);
      want(msg.text.startsWith(`${c.names}:`) || msg.text.includes(`${c.names}:`), `names ${c.names}`);
      want(c.phrase.test(msg.text), `says what is wrong (${c.phrase})`);
      want(/the previous model stays\.$/.test(msg.text), 'says the model stays');
      want(!/RuntimeError|Aborted|unreachable|\[object|undefined/.test(msg.text), 'no internal error text');
      await page.waitForTimeout(50);
      want(await page.evaluate(() => window.__attnscope.runs) === runs, 'no new run');
      const now = await pytorchDiff(page, ref);
      want(now.model === 'checkpoint' && now.d <= exp.tolerance.attentions.atol, `the shown weights are still PyTorch's (${now.model}, ${now.d})`);
      want(await errorText(page) === null, 'the page\'s own error banner stays hidden');
      // every few sets, the loaded model runs a new text with PyTorch's numbers
      if (++k % 6 === 0) {
        const r = exp.texts[1 + ((k / 6) % 2)]; // texts[0] is on screen: another text makes a run
        const before = await page.evaluate(() => window.__attnscope.runs);
        await page.fill('#text', r.text);
        await settled(page, before);
        const d = await pytorchDiff(page, r);
        want(JSON.stringify(d.tokens) === JSON.stringify(r.tokens), `the next text's tokens ${d.tokens}`);
        want(d.d <= exp.tolerance.attentions.atol, `a run after it = PyTorch (${d.d})`);
        await page.fill('#text', ref.text);
        await settled(page, before + 1);
      }
    }
  }
  console.log(`drop: ${seen.length} bad file sets refused:\n  ${seen.join('\n  ')}`);
  assert.deepEqual(problems, [], 'every bad set named its file and problem and left the model');
  // only some files: what is still needed; then a good load again replaces the model
  await page.locator('#ckpt-files').setInputFiles([{ name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: good('model.safetensors').buffer }]);
  assert.match(await page.textContent('#ckpt-msg'), /^Still needed: config\.json, tokenizer\.json/);
  const r = exp.texts[1];
  const before = await page.evaluate(() => window.__attnscope.runs);
  await page.fill('#text', r.text);
  await settled(page, before);
  const last = await pytorchDiff(page, r);
  assert.deepEqual(last.tokens, r.tokens);
  assert.ok(last.d <= exp.tolerance.attentions.atol, `after all the bad files, a new text = PyTorch (${last.d})`);
  clean(rec);
  await page.close();
});
