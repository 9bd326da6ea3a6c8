// logprobs.test.js: the run option logProbs (ln p(token i+1 | tokens 0..i) under the next-token head) against
// independent PyTorch numbers: the bundled english model's held-out loss (models/english/heldout.json
// `pytorchLoss`, computed by training/charlm.py text_loss over the same 100 glosses, F16-rounded weights) and the
// tiny GPT-2 fixture's next-token probability (tests/fixtures/hf/gpt2-lmhead-f32/expected.json, PyTorch).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const root = new URL('../../', import.meta.url);
const json = (p) => JSON.parse(readFileSync(new URL(p, root), 'utf8'));

test('run logProbs: the english model reaches its PyTorch held-out loss (mean nats per predicted character)', async () => {
  const model = await as.loadBundled('english');
  try {
    const held = json('models/english/heldout.json');
    let total = 0;
    let count = 0;
    for (const text of held.texts) {
      const chars = Array.from(text).slice(0, model.config.maxPositions); // text_loss truncates to maxPositions
      if (chars.length < 2) continue;
      const r = model.run(chars.join(''), { trace: 'none', logProbs: true });
      assert.equal(r.logProbs.length, r.tokens.length - 1);
      for (const v of r.logProbs) total -= v;
      count += r.logProbs.length;
    }
    const loss = total / count;
    console.log(`# english held-out loss in attnscope ${loss.toFixed(6)} vs PyTorch ${held.pytorchLoss} over ${count} characters`);
    assert.ok(Math.abs(loss - held.pytorchLoss) < 2e-4, `loss ${loss} vs PyTorch ${held.pytorchLoss}`);
  } finally {
    model.delete();
  }
});

test('run logProbs: GPT-2 gives ln of PyTorch\'s next-token probability at the appended token', async () => {
  const dir = 'tests/fixtures/hf/gpt2-lmhead-f32/';
  const want = json(dir + 'expected.json').texts[0];
  const model = await as.loadPretrained({
    config: readFileSync(new URL(dir + 'config.json', root), 'utf8'),
    weights: readFileSync(new URL(dir + 'model.safetensors', root)),
    tokenizer: JSON.stringify(makeGpt2TokenizerJson()),
  });
  try {
    const text = want.text + want.next.tokens[0].replace(/^Ġ/, ' ');
    const r = model.run(text, { trace: 'none', logProbs: true });
    assert.deepEqual(Array.from(r.ids), [...want.ids, want.next.ids[0]], 'the appended token is one more token');
    const n = want.ids.length;
    assert.equal(r.logProbs.length, n);
    const p = Math.exp(r.logProbs[n - 1]);
    const ref = want.next.probs[0];
    assert.ok(Math.abs(p - ref) <= 1e-6 + 2e-3 * ref, `p ${p} vs PyTorch ${ref}`);
    for (const v of r.logProbs) assert.ok(Number.isFinite(v) && v <= 0);
    assert.equal(model.run(want.text, { trace: 'none' }).logProbs, undefined, 'only when asked for');
    assert.equal(model.run('Hi', { trace: 'none', logProbs: true }).logProbs.length, 0, 'one token: nothing predicted');
  } finally {
    model.delete();
  }
});

test('run logProbs: a model without a next-token head, and a bad value, are clear errors', async () => {
  const dir = 'tests/fixtures/hf/bert-model-f32/';
  const bert = await as.loadPretrained({
    config: readFileSync(new URL(dir + 'config.json', root), 'utf8'),
    weights: readFileSync(new URL(dir + 'model.safetensors', root)),
    tokenizer: readFileSync(new URL(dir + 'tokenizer.json', root), 'utf8'),
  });
  try {
    assert.throws(() => bert.run('hello world', { logProbs: true }), {
      message: /^run: logProbs needs a next-token head/,
    });
    assert.throws(() => bert.run('hello world', { logProbs: 'yes' }), { name: 'TypeError', message: /^run: logProbs/ });
    assert.equal(bert.run('hello world', { trace: 'none' }).tokens.length > 0, true, 'still works');
  } finally {
    bert.delete();
  }
});
