// Real-browser drop sweep of the newer pickers (issue 31; the checkpoint drop box's own sweep is drop.test.js): bad files
// given to the modern-checkpoint picker (a Llama-shaped checkpoint, tests/fixtures/modern: a safetensors header that is
// not JSON, a shard of another checkpoint, a truncated shard, config.json fields attnscope refuses, tokenizer.json
// files that are cut or use a component it does not implement, an index naming shards not given or not JSON, a bad
// generation_config.json) and to the attention-file picker (truncated, another format, a checkpoint instead of
// attentions, huge declared sizes, NaN and negative weights). Each set is given once, alternately through the box's
// file input and as a drop event carrying a DataTransfer. Every case: a visible message (role alert, or the picker's
// "Still needed" line for files not given) that names the file (and the field), no console or page error, the text
// the user typed kept, the model or file shown before kept, and no script-like element: every file is named
// `<img src=x onerror=…>` once, which must appear as text. A correct checkpoint and a correct file afterwards give
// the float64 references (tests/fixtures/modern/…/expected.json, tests/fixtures/attention_file/expected.json).
// Run: node --test tests/browser/drop-modern.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  useBrowser, clean, errorText, root,
} from './harness.js';

const open = useBrowser();
const LLAMA = path.join(root, 'tests', 'fixtures', 'modern', 'llama-f32-untied-gqa-llama3');
const GEMMA2 = path.join(root, 'tests', 'fixtures', 'modern', 'gemma2-f32-softcap');
const AF = path.join(root, 'tests', 'fixtures', 'attention_file');
const llamaRef = JSON.parse(readFileSync(path.join(LLAMA, 'expected.json'), 'utf8')).texts[0];
const fileRef = JSON.parse(readFileSync(path.join(AF, 'expected.json'), 'utf8')).f32;
const bytes = (dir, name) => readFileSync(path.join(dir, name));
const file = (name, buffer) => ({ name, buffer: Buffer.from(buffer) });
const PWN = '<img src=x onerror="window.__dropPwned=1">';

/** A safetensors file: 8-byte little-endian header length (given, or the true one), the header text, then `data`. */
function safetensors(header, data = Buffer.alloc(0), claimedLength = null) {
  let json = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(claimedLength ?? json.length));
  return Buffer.concat([len, json, data]);
}

// ---- the modern checkpoint: its files, and each bad set with the file and words its message must hold

const shard1 = 'model-00001-of-00002.safetensors';
const shard2 = 'model-00002-of-00002.safetensors';
const INDEX = 'model.safetensors.index.json';
const config = JSON.parse(bytes(LLAMA, 'config.json'));
const tokenizer = bytes(LLAMA, 'tokenizer.json');
const llamaSet = (over = {}) => {
  const base = {
    'config.json': bytes(LLAMA, 'config.json'), 'tokenizer.json': tokenizer,
    [shard1]: bytes(LLAMA, `sharded/${shard1}`), [shard2]: bytes(LLAMA, `sharded/${shard2}`), [INDEX]: bytes(LLAMA, `sharded/${INDEX}`),
  };
  return Object.entries({ ...base, ...over }).filter(([, b]) => b !== null).map(([name, b]) => file(name, b));
};
const configWith = (field, value) => Buffer.from(JSON.stringify({ ...config, [field]: value }));
const tokenizerWith = (edit) => { const t = JSON.parse(tokenizer); edit(t); return Buffer.from(JSON.stringify(t)); };

function checkpointCases() {
  const s1 = bytes(LLAMA, `sharded/${shard1}`);
  const index = JSON.parse(bytes(LLAMA, `sharded/${INDEX}`));
  const index3 = { ...index, weight_map: { ...index.weight_map, 'lm_head.weight': 'model-00003-of-00003.safetensors' } };
  return [
    { what: 'a shard whose header is not JSON', files: llamaSet({ [shard1]: safetensors('{"model.embed_tokens.weight": {"dtype": "F32", "shape": [258, 16], data_offsets', s1.subarray(8)) }), names: shard1, phrase: /JSON|header/ },
    { what: 'a shard of another checkpoint (Gemma 2) as shard 2', files: llamaSet({ [shard2]: bytes(GEMMA2, 'model.safetensors') }), names: /model-0000[12]-of-00002\.safetensors/, phrase: /tensor|missing|shape/ },
    { what: 'a shard cut in its data', files: llamaSet({ [shard1]: s1.subarray(0, s1.length - 1000) }), names: shard1, phrase: /data_offsets .* exceed the data section/ },
    { what: 'a shard cut in its header', files: llamaSet({ [shard1]: s1.subarray(0, 100) }), names: shard1, phrase: /header length \(\d+\) exceeds/ },
    { what: 'a shard whose header claims 10 GB', files: llamaSet({ [shard1]: safetensors({ __metadata__: { format: 'pt' } }, Buffer.alloc(0), 10 * 2 ** 30) }), names: shard1, phrase: /header length \(10737418240\) exceeds/ },
    { what: 'config.json: rope_scaling longrope', files: llamaSet({ 'config.json': configWith('rope_scaling', { rope_type: 'longrope', factor: 2 }) }), names: 'config.json', phrase: /rope_scaling.*longrope/ },
    { what: 'config.json: num_key_value_heads 3 of 4 heads', files: llamaSet({ 'config.json': configWith('num_key_value_heads', 3) }), names: 'config.json', phrase: /num_key_value_heads/ },
    { what: 'config.json: hidden_act unknown', files: llamaSet({ 'config.json': configWith('hidden_act', 'swish-9000') }), names: 'config.json', phrase: /hidden_act/ },
    { what: 'config.json: hidden_size a string', files: llamaSet({ 'config.json': configWith('hidden_size', '16') }), names: 'config.json', phrase: /hidden_size/ },
    { what: 'a tokenizer.json cut short', files: llamaSet({ 'tokenizer.json': tokenizer.subarray(0, 700) }), names: 'tokenizer.json', phrase: /not valid JSON/ },
    { what: 'a tokenizer.json with a normalizer attnscope does not implement', files: llamaSet({ 'tokenizer.json': tokenizerWith((t) => { t.normalizer = { type: 'Unicorn' }; }) }), names: 'tokenizer.json', phrase: /normalizer.*Unicorn|Unicorn.*normalizer/ },
    { what: 'a tokenizer.json with a broken Precompiled charsmap', files: llamaSet({ 'tokenizer.json': tokenizerWith((t) => { t.normalizer = { type: 'Precompiled', precompiled_charsmap: 'AAAA' }; }) }), names: 'tokenizer.json', phrase: /normalizer\.precompiled_charsmap/ },
    { what: 'a tokenizer.json whose model is not an object', files: llamaSet({ 'tokenizer.json': tokenizerWith((t) => { t.model = 7; }) }), names: 'tokenizer.json', phrase: /model/ },
    { what: 'an index naming a third shard not given', files: llamaSet({ [INDEX]: Buffer.from(JSON.stringify(index3)) }), names: 'model-00003-of-00003.safetensors', phrase: /^Still needed: /, missing: true },
    { what: 'an index that is not JSON', files: llamaSet({ [INDEX]: Buffer.from('{"weight_map": {') }), names: INDEX, phrase: /JSON/ },
    { what: 'an index without weight_map', files: llamaSet({ [INDEX]: Buffer.from('{"metadata": {}}') }), names: INDEX, phrase: /weight_map/ },
    { what: 'a generation_config.json with a text eos_token_id', files: [...llamaSet(), file('generation_config.json', '{"eos_token_id": "x"}')], names: 'generation_config.json', phrase: /eos_token_id/ },
    {
      what: 'a file named as HTML (the only weights file, random bytes)',
      files: [file('config.json', bytes(LLAMA, 'config.json')), file('tokenizer.json', tokenizer), file(`${PWN}.safetensors`, Buffer.from('not a safetensors file, just text'))],
      names: `${PWN}.safetensors`, phrase: /header length/,
    },
  ];
}

function attentionFileCases() {
  const f32 = bytes(AF, 'f32.safetensors');
  const probs = (values, tokens = ['a', 'b']) => safetensors({ __metadata__: { tokens: JSON.stringify(tokens) }, 'attentions.0': { dtype: 'F32', shape: [1, 2, 2], data_offsets: [0, 16] } }, Buffer.from(new Float32Array(values).buffer));
  const huge = safetensors({ __metadata__: { tokens: JSON.stringify(['a', 'b']) }, 'attentions.0': { dtype: 'F32', shape: [64, 100000, 100000], data_offsets: [0, 64 * 4e10] } }, Buffer.alloc(64));
  return [
    { what: 'a truncated file', file: file('cut.safetensors', f32.subarray(0, 400)), phrase: /data_offsets|exceed|bytes/ },
    { what: 'a file cut inside its 8-byte length', file: file('tiny.safetensors', f32.subarray(0, 5)), phrase: /shorter than the 8-byte header length/ },
    { what: 'another format (PNG signature)', file: file('photo.safetensors', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)])), phrase: /header length/ },
    { what: 'a checkpoint, not attentions', file: file('model.safetensors', bytes(LLAMA, 'model.safetensors')), phrase: /attentions|tokens/ },
    { what: 'a header length claiming 10 GB', file: file('10gb.safetensors', (() => { const b = Buffer.alloc(64); b.writeBigUInt64LE(10n * 2n ** 30n); return b; })()), phrase: /header length/ },
    { what: 'a tensor claiming 2.56 TB', file: file('huge.safetensors', huge), phrase: /attentions\.0/ },
    { what: 'NaN weights', file: file('nan.safetensors', probs([NaN, 0, 0, 1])), phrase: /attentions\.0/ },
    { what: 'negative weights', file: file('negative.safetensors', probs([1.5, -0.5, 0, 1])), phrase: /attentions\.0/ },
    { what: 'a file named as HTML (NaN weights)', file: file(`${PWN}.safetensors`, probs([0.5, NaN, 0, 1])), phrase: /attentions\.0/ },
  ];
}

// ---- the page side

/** Records script-like elements added to the page (as the typing sweep does) and the text box's value. */
const watchScripts = (page) => page.evaluate(() => {
  const seen = [];
  const bad = (el) => el.nodeType === 1 && (/^(SCRIPT|IFRAME|OBJECT|EMBED|IMG)$/.test(el.tagName) || [...el.attributes].some((a) => /^on/i.test(a.name)));
  new MutationObserver((list) => {
    for (const m of list) for (const n of m.addedNodes) for (const el of [n, ...(n.querySelectorAll?.('*') ?? [])]) if (bad(el)) seen.push(el.outerHTML.slice(0, 120));
  }).observe(document.documentElement, { subtree: true, childList: true });
  window.__dropSeen = seen;
});

/**
 * Gives `files` to the picker `box` ('ckpt' or 'attnfile'): its file input, or a drop event on its drop zone; waits
 * until its message changed and no load runs, and returns the message, its role and whether it is visible.
 */
async function give(page, box, files, via) {
  await page.evaluate((id) => {
    window.__msgChanged = false;
    const seen = () => { window.__msgChanged = true; };
    new MutationObserver(seen).observe(document.getElementById(`${id}-msg`), { childList: true, characterData: true, subtree: true, attributes: true });
  }, box);
  const input = box === 'ckpt' ? '#ckpt-files' : '#attnfile-input';
  if (via === 'input') {
    await page.locator(input).setInputFiles(files.map((f) => ({ name: f.name, mimeType: 'application/octet-stream', buffer: f.buffer })));
  } else {
    await page.evaluate(([id, list]) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
      const zone = document.getElementById(`${id}-drop`);
      for (const type of ['dragenter', 'dragover', 'drop']) zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, [box, files.map((f) => ({ name: f.name, b64: f.buffer.toString('base64') }))]);
  }
  await page.waitForFunction((id) => {
    const m = document.getElementById(`${id}-msg`).textContent;
    const d = document.documentElement.dataset;
    return window.__msgChanged && !d.loading && !d.busy && m !== '' && !/…$/.test(m);
  }, box, { timeout: 120000 });
  return page.evaluate((id) => {
    const m = document.getElementById(`${id}-msg`);
    return { text: m.textContent, role: m.getAttribute('role'), visible: !!m.getClientRects().length && getComputedStyle(m).visibility !== 'hidden' };
  }, box);
}

/** Max |shown − reference| over every layer's weights of the trace on screen (null: another shape). */
const traceDiff = (page, want) => page.evaluate((w) => {
  const t = window.__attnscope.trace;
  if (t.layers.length !== w.length) return null;
  let d = 0;
  for (let l = 0; l < w.length; l++) {
    const got = t.layers[l].attention.weights;
    if (!got || got.length !== w[l].length) return null;
    for (let i = 0; i < got.length; i++) d = Math.max(d, Math.abs(got[i] - w[l][i]));
  }
  return d;
}, want);

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Checks one verdict; returns the problems found. */
async function verdict(page, rec, before, msg, c, kept) {
  const problems = [];
  const want = (ok, what) => { if (!ok) problems.push(`${c.what} (${c.via}): ${what} — message: ${msg.text.slice(0, 200)}`); };
  const names = c.names instanceof RegExp ? c.names : new RegExp(escapeRe(c.names));
  want(msg.visible, 'the message is visible');
  want(c.missing ? /^Still needed: /.test(msg.text) : msg.role === 'alert', `an error (role alert), not ${msg.role}`);
  want(names.test(msg.text), `names ${c.names}`);
  want(c.phrase.test(msg.text), `says what is wrong (${c.phrase})`);
  want(!/RuntimeError|Aborted|unreachable|\[object|undefined|Cannot read/.test(msg.text), 'no internal error text');
  want(rec.errors.length === before, `no console or page error: ${rec.errors.slice(before).join(' | ')}`);
  const page2 = await page.evaluate(() => ({ pwned: window.__dropPwned !== undefined, seen: window.__dropSeen.splice(0), text: window.__attnscope.state.text, banner: !document.getElementById('error').hidden }));
  want(!page2.pwned && page2.seen.length === 0, `no script-like element (${page2.seen.join(', ')})`);
  want(page2.text === kept.text, `the typed text is kept (${JSON.stringify(page2.text)})`);
  want(!page2.banner, 'the page\'s error banner stays hidden');
  const d = await traceDiff(page, kept.weights);
  want(d !== null && d <= kept.tol, `what was shown before stays (${d})`);
  return problems;
}

test('drop (modern picker): bad shards, headers, configs, tokenizers, indexes and names each name the file; the Llama model stays; a good set computes', { timeout: 900000 }, async () => {
  const { page, rec } = await open(`#text=${encodeURIComponent(llamaRef.text)}&lang=en`);
  await watchScripts(page);
  await page.selectOption('#model', 'checkpoint');
  const loaded = await give(page, 'ckpt', llamaSet(), 'input');
  assert.match(loaded.text, /^Loaded in [\d.]+ s: Llama · 2 layers/);
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint' && !document.documentElement.dataset.busy, null, { timeout: 60000 });
  const kept = { text: llamaRef.text, weights: llamaRef.attentions, tol: 2e-5 };
  assert.ok((await traceDiff(page, kept.weights)) <= kept.tol, 'the loaded Llama model = the float64 reference');
  const problems = [];
  const seen = [];
  for (const [k, c0] of checkpointCases().entries()) {
    const c = { ...c0, via: k % 2 ? 'drop' : 'input' };
    const before = rec.errors.length;
    const msg = await give(page, 'ckpt', c.files, c.via);
    seen.push(`${c.what} (${c.via}): ${msg.text}`);
    problems.push(...await verdict(page, rec, before, msg, c, kept));
  }
  console.log(`drop-modern: ${seen.length} bad checkpoint sets:\n  ${seen.join('\n  ')}`);
  assert.deepEqual(problems, [], 'every bad set named its file and problem and left the model');
  // a good set again (the single-file checkpoint) loads and computes the reference; then a new text runs
  const good = await give(page, 'ckpt', [file('config.json', bytes(LLAMA, 'config.json')), file('tokenizer.json', tokenizer), file('model.safetensors', bytes(LLAMA, 'model.safetensors'))], 'drop');
  assert.match(good.text, /^Loaded in [\d.]+ s: Llama/);
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint' && !document.documentElement.dataset.busy, null, { timeout: 60000 });
  assert.ok((await traceDiff(page, kept.weights)) <= kept.tol, 'after the bad sets, a good one = the float64 reference');
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});

test('drop (attention-file picker): truncated, other formats, huge sizes, NaN weights and an HTML name each name the file; the file shown stays; a good file opens', { timeout: 600000 }, async () => {
  const { page, rec } = await open('#text=typed%20before%20the%20files&lang=en');
  await watchScripts(page);
  await page.selectOption('#model', 'file');
  const opened = await give(page, 'attnfile', [file('f32.safetensors', bytes(AF, 'f32.safetensors'))], 'input');
  assert.match(opened.text, /^Opened f32\.safetensors: 3 layers/);
  const kept = { text: 'typed before the files', weights: fileRef.layers.map((ly) => ly.weights), tol: 1e-6 };
  assert.ok((await traceDiff(page, kept.weights)) <= kept.tol, 'the file shown = torch');
  const problems = [];
  const seen = [];
  for (const [k, c0] of attentionFileCases().entries()) {
    const c = { ...c0, names: `${c0.file.name}: readAttentionFile:`, via: k % 2 ? 'input' : 'drop' };
    const before = rec.errors.length;
    const msg = await give(page, 'attnfile', [c.file], c.via);
    seen.push(`${c.what} (${c.via}): ${msg.text}`);
    problems.push(...await verdict(page, rec, before, msg, c, kept));
  }
  console.log(`drop-modern: ${seen.length} bad attention files:\n  ${seen.join('\n  ')}`);
  assert.deepEqual(problems, [], 'every bad file named itself and its problem and left the file shown');
  const good = await give(page, 'attnfile', [file('bf16.safetensors', bytes(AF, 'bf16.safetensors'))], 'drop');
  assert.match(good.text, /^Opened bf16\.safetensors: 3 layers/);
  const bf16 = JSON.parse(readFileSync(path.join(AF, 'expected.json'), 'utf8')).bf16.layers.map((ly) => ly.weights);
  assert.equal(await traceDiff(page, bf16), 0, 'after the bad files, a good one = torch (BF16 widened exactly)');
  assert.equal(await errorText(page), null);
  clean(rec);
  await page.close();
});
