// inside-long.test.js: the page worker's head detectors (web/inside-work.js op 'heads') on a text over the page's
// 512-token limit answer from the run's per-head summaries, never from every head's full map (8 GB at 2,048 tokens
// through a 1B-shaped model): only the sink share, equal to headScores over the materialised weights, and `long`
// naming the token count; a short text keeps every detector. A Llama-shaped fixture (byte-level tokens) with its
// position limit raised (RoPE has no position table) stands in for a loaded checkpoint.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadAs } from './helpers.js';
import { insideWork } from '../../web/inside-work.js';
import { DEFAULTS } from '../../web/state.js';

const DIR = new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url);

test("inside 'heads' over 512 tokens: the sink share from the summaries, equal to headScores of the full weights", async () => {
  const as = await loadAs();
  const config = { ...JSON.parse(readFileSync(new URL('config.json', DIR), 'utf8')), max_position_embeddings: 1024 };
  const model = await as.loadPretrained({ config, weights: readFileSync(new URL('model.safetensors', DIR)), tokenizer: readFileSync(new URL('tokenizer.json', DIR), 'utf8') });
  try {
    const pipeline = { as, loaded: () => model };
    const text = 'the cat sat on the mat; '.repeat(26); // 624 bytes: over 512 byte-level tokens
    const got = await insideWork(pipeline, { ...DEFAULTS, model: 'checkpoint', text }, 'heads', {});
    const full = model.run(text, { trace: 'weights' });
    assert.ok(full.n > 512);
    assert.equal(got.long, full.n);
    assert.equal(got.previousToken, undefined, 'no score that needs the full maps');
    const want = as.headScores({ weights: full.layers.map((l) => l.attention.weights), numHeads: 4, n: full.n }).sinkShare;
    assert.equal(got.sinkShare.length, want.length);
    assert.equal(got.numLayers * got.numHeads, want.length);
    for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got.sinkShare[i] - want[i]) < 1e-6, `sink ${i}: ${got.sinkShare[i]} vs ${want[i]}`);
    const short = await insideWork(pipeline, { ...DEFAULTS, model: 'checkpoint', text: text.slice(0, 100) }, 'heads', {});
    assert.equal(short.long, undefined);
    assert.equal(short.previousToken.length, want.length, 'a short text keeps every detector');
  } finally {
    model.delete();
  }
});
