// web/induction.js (the induction probe the page's worker and `attnscope heads` use) on models with and without a
// prefix token and with a word tokenizer (pieces joined by spaces): the probe is [prefix] + R + R on the ids, and
// each head's score is the mean, over the second copy's rows i, of the weight on key i − T + 1, computed here by a
// direct loop over the probe's own run (not through headScores). Bad texts: an Error saying why.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs, assertClose } from './helpers.js';
import { inductionScores } from '../../web/induction.js';

const as = await loadAs();
const TEXT = 'the cat sat on the mat';

function check(model, text, prefix) {
  const s = inductionScores(as, model, text);
  const r = model.run(s.probe, { trace: 'weights' });
  const T = s.period;
  assert.deepEqual(Array.from(r.ids.slice(prefix, prefix + T)), Array.from(r.ids.slice(prefix + T, prefix + 2 * T)), 'the two copies');
  assert.equal(new Set(r.ids.slice(prefix, prefix + T)).size, T, 'R has distinct ids');
  const want = [];
  for (const l of r.layers) {
    for (let h = 0; h < r.numHeads; h++) {
      let sum = 0;
      for (let i = prefix + T; i < prefix + 2 * T; i++) sum += l.attention.weights[(h * r.n + i) * r.n + i - T + 1];
      want.push(sum / T);
    }
  }
  assertClose(s.induction, want, { atol: 1e-6, rtol: 0, what: 'induction' });
  return s;
}

test('induction probe: a character decoder (no prefix), a word encoder (spaces), a bundled model with <s>', async () => {
  const dec = as.createModel({ architecture: 'decoder', tokenizer: 'char', dModel: 16, numHeads: 2, numLayers: 2, seed: 1 });
  const enc = as.createModel({ architecture: 'encoder', tokenizer: 'word', dModel: 16, numHeads: 2, numLayers: 2, seed: 1 });
  const dates = await as.loadBundled('dates');
  try {
    assert.equal(check(dec, TEXT, 0).period, 9); // t h e c a s o n m
    const w = check(enc, TEXT, 0);
    assert.equal(w.period, 5); // the cat sat on mat
    assert.match(w.probe, / /);
    assert.equal(dates.run('x').tokens[0], '<s>');
    check(dates, 'march 3 2021', 1);
    assert.throws(() => inductionScores(as, dec, 'aaaa'), /induction: the text needs at least 2 different tokens/);
    // the same seed, the same probe; another seed, another order
    assert.equal(inductionScores(as, dec, TEXT).probe, inductionScores(as, dec, TEXT).probe);
    assert.notEqual(inductionScores(as, dec, TEXT, { seed: 2 }).probe, inductionScores(as, dec, TEXT).probe);
  } finally {
    dec.delete();
    enc.delete();
    dates.delete();
  }
});
