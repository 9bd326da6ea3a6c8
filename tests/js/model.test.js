// model.test.js: the model pipeline through the public package (as.createModel / model.run): the docs
// example, the classic 3-d example, the PyTorch fixtures (tests/fixtures/model), trace levels, BPE,
// errors with exact messages, and a flat wasm heap over 1,000 runs. Runs against either build:
// ATTNSCOPE_SIMD=false selects the scalar module.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const FIXTURES = new URL('../fixtures/model/', import.meta.url);

const CLASSIC = {
  Your: [0.43, 0.15, 0.89], journey: [0.55, 0.87, 0.66], starts: [0.57, 0.85, 0.64],
  with: [0.22, 0.58, 0.33], one: [0.77, 0.25, 0.10], step: [0.05, 0.80, 0.55],
};

const fixed4 = (xs) => Array.from(xs, (x) => x.toFixed(4)).join(' ');

function throwsExactly(fn, Kind, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.constructor, Kind, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.message, message);
    return true;
  });
}

function maxAbsErr(got, want, what, { atol, rtol }) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i] - want[i]);
    worst = Math.max(worst, err);
    if (!(err <= atol + rtol * Math.abs(want[i]))) assert.fail(`${what}[${i}]: got ${got[i]}, want ${want[i]} (|err| ${err})`);
  }
  return worst;
}

test('createModel: the docs example (shapes of every field)', () => {
  const model = as.createModel({ dModel: 16, numHeads: 2, numLayers: 2 });
  const r = model.run('The cat sat on the mat');
  assert.deepEqual(r.tokens, ['The', 'cat', 'sat', 'on', 'the', 'mat']);
  assert.deepEqual(Array.from(r.ids), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(r.offsets.slice(0, 4)), [0, 3, 4, 7]);
  const { n, dModel, numHeads, headDim, dFF } = r;
  assert.deepEqual([n, dModel, numHeads, headDim, dFF], [6, 16, 2, 8, 64]);
  for (const k of ['embeddings', 'positional', 'input', 'output']) assert.equal(r[k].length, n * dModel, k);
  for (let i = 0; i < r.input.length; i++) assert.equal(r.input[i], Math.fround(r.embeddings[i] + r.positional[i]));
  assert.equal(r.layers.length, 2);
  for (const L of r.layers) {
    assert.equal(L.kind, 'encoder');
    assert.equal(L.input.length, n * dModel);
    for (const k of ['q', 'k', 'v', 'concat', 'output']) assert.equal(L.attention[k].length, n * dModel, k);
    assert.equal(L.attention.scores.length, numHeads * n * n);
    assert.equal(L.attention.weights.length, numHeads * n * n);
    assert.equal(L.ffHidden.length, n * dFF);
    assert.equal(L.output.length, n * dModel);
    assert.equal(L.cross, undefined);
    for (let row = 0; row < numHeads * n; row++) {
      const s = L.attention.weights.slice(row * n, row * n + n).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(s - 1) < 1e-5);
    }
  }
  assert.deepEqual(r.layers[1].input, r.layers[0].output);
  assert.deepEqual(r.output, r.layers[1].output);
  assert.equal(r.next.tokens.length, 5);
  assert.ok(r.next.probs[0] >= r.next.probs[4]);
  assert.deepEqual(r.next.tokens, Array.from(r.next.ids, (id) => r.tokens[Array.from(r.ids).indexOf(id)]));
  assert.equal(model.config.dFF, 64);
  assert.ok(model.parameters().some((p) => p.name === 'encoder.layers.1.linear2.weight' && p.shape.join() === '64,16'));
  model.delete();
});

test('createModel: the classic "Your journey starts with one step" example to the printed digits', () => {
  const model = as.createModel({ dModel: 3, positional: 'none', attention: 'simple', numLayers: 1, embeddings: CLASSIC });
  const r = model.run('Your journey starts with one step');
  assert.equal(r.layers[0].kind, 'simple');
  assert.equal(r.numHeads, 1);
  assert.equal(fixed4(r.layers[0].attention.weights.slice(6, 12)), '0.1385 0.2379 0.2333 0.1240 0.1082 0.1581');
  assert.equal(fixed4(r.layers[0].output.slice(3, 6)), '0.4419 0.6515 0.5683');
  assert.deepEqual(r.output, r.layers[0].attention.output);
  assert.deepEqual(r.input, r.embeddings);
  model.delete();
});

test('createModel: decoder is causal, encoder-decoder has cross-attention, same word same row', () => {
  const dec = as.createModel({ architecture: 'decoder', numLayers: 1 });
  const r = dec.run('a b c');
  assert.equal(r.layers[0].kind, 'decoder');
  const w = r.layers[0].attention.weights;
  assert.equal(w[1], 0); // head 0, query 0 cannot see key 1
  assert.equal(r.layers[0].attention.scores[1], -Infinity);
  const r2 = dec.run('c b a');
  assert.deepEqual(r2.embeddings.slice(0, 16), r.embeddings.slice(32, 48)); // "c" has one row whatever the text
  dec.delete();
  const ed = as.createModel({ architecture: 'encoder-decoder', numLayers: 1 });
  const s = ed.run({ source: 'one two three', target: 'un deux' });
  assert.equal(s.source.tokens.length, 3);
  assert.deepEqual(s.tokens, ['un', 'deux']);
  assert.deepEqual(Array.from(s.ids), [3, 4]);
  assert.equal(s.layers[0].cross.weights.length, 2 * 2 * 3);
  assert.equal(s.layers[0].cross.k.length, 3 * 16);
  assert.deepEqual(s.layers[0].cross.k.length, s.source.output.length);
  ed.delete();
});

test('run: trace levels keep less and compute the same', () => {
  const model = as.createModel({ architecture: 'encoder-decoder' });
  const full = model.run({ source: 'x y z', target: 'p q' });
  const weights = model.run({ source: 'x y z', target: 'p q' }, { trace: 'weights' });
  const none = model.run({ source: 'x y z', target: 'p q' }, { trace: 'none' });
  assert.deepEqual(weights.output, full.output);
  assert.deepEqual(none.output, full.output);
  assert.deepEqual(Object.keys(weights.layers[0].attention), ['weights']);
  assert.deepEqual(weights.layers[0].cross.weights, full.layers[0].cross.weights);
  assert.equal(weights.layers[0].ffHidden, undefined);
  assert.deepEqual(Object.keys(none.layers[0].attention), []);
  model.delete();
});

test('run: full trace has residual/LayerNorm/FFN tensors in post-norm and pre-norm order, and the scale', () => {
  for (const normFirst of [false, true]) {
    for (const architecture of ['encoder', 'encoder-decoder']) {
      const model = as.createModel({ architecture, normFirst, dModel: 8, numHeads: 2 });
      const r = model.run(architecture === 'encoder' ? 'a b c' : { source: 'a b c', target: 'x y' });
      const nd = r.n * r.dModel;
      for (const L of r.layers) {
        const cross = architecture === 'encoder-decoder';
        const names = cross ? ['residual1', 'norm1', 'residual2', 'norm2', 'residual3', 'norm3', 'ffOutput'] : ['residual1', 'norm1', 'residual2', 'norm2', 'ffOutput'];
        for (const k of names) assert.equal(L[k].length, nd, k);
        if (!cross) assert.equal(L.residual3, undefined);
        assert.equal(L.attention.scale, Math.fround(1 / Math.sqrt(r.headDim)));
        for (let i = 0; i < nd; i++) assert.equal(L.residual1[i], Math.fround(L.input[i] + L.attention.output[i]));
        const last = cross ? [L.residual3, L.norm3] : [L.residual2, L.norm2];
        assert.deepEqual(normFirst ? last[0] : last[1], L.output);
        // LayerNorm of one row by hand: mean, biased variance, (x − μ)/√(σ² + ε) (gamma 1, beta 0 when seeded)
        const src = normFirst ? L.input : L.residual1;
        const row = Array.from(src.subarray(0, r.dModel));
        const mu = row.reduce((a, b) => a + b, 0) / row.length;
        const v = row.reduce((a, b) => a + (b - mu) ** 2, 0) / row.length;
        row.forEach((x, c) => assert.ok(Math.abs((x - mu) / Math.sqrt(v + 1e-5) - L.norm1[c]) < 1e-5));
      }
      const w = model.run(architecture === 'encoder' ? 'a b c' : { source: 'a b c', target: 'x y' }, { trace: 'weights' });
      assert.equal(w.layers[0].residual1, undefined);
      assert.equal(w.layers[0].ffOutput, undefined);
      model.delete();
    }
  }
  const simple = as.createModel({ attention: 'simple', numLayers: 1, dModel: 3, positional: 'none', embeddings: CLASSIC });
  const s = simple.run('Your journey starts');
  assert.equal(s.layers[0].attention.scale, 1);
  assert.equal(s.layers[0].residual1, undefined);
  simple.delete();
});

test('run: padTo adds <pad> keys that no query sees; real rows equal the unpadded run', () => {
  const realRows = (padded, plain, nReal, N, what) => {
    const w = padded.length / N;
    assert.equal(plain.length, nReal * w, what);
    assert.deepEqual(padded.subarray(0, nReal * w), plain, what);
  };
  const square = (padded, plain, nq, nk, nqReal, nkReal, masked, what) => {
    const H = padded.length / (nq * nk);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < nq; i++) {
        for (let j = 0; j < nk; j++) {
          const v = padded[(h * nq + i) * nk + j];
          if (j >= nkReal) assert.equal(v, masked, `${what} [${h},${i},${j}]`);
          else if (i < nqReal) assert.equal(v, plain[(h * nqReal + i) * nkReal + j], `${what} [${h},${i},${j}]`);
        }
      }
    }
  };
  const sideCheck = (p, u, N, pm, um) => {
    assert.equal(p.n, N);
    assert.equal(p.nReal, u.n);
    assert.equal(u.nReal, u.n);
    assert.deepEqual(p.tokens, [...u.tokens, ...Array(N - u.n).fill('<pad>')]);
    assert.deepEqual(Array.from(p.ids.subarray(u.n)), Array(N - u.n).fill(-1));
    assert.ok(p.embeddings.subarray(u.n * p.embeddings.length / N).every((x) => x === 0));
    realRows(p.input, u.input, u.n, N, 'input');
    p.layers.forEach((L, li) => {
      const U = u.layers[li];
      for (const k of ['output', 'residual1', 'norm1', 'residual2', 'norm2', 'ffHidden', 'ffOutput']) {
        if (U[k]) realRows(L[k], U[k], u.n, N, `layer ${li} ${k}`);
      }
      realRows(L.attention.output, U.attention.output, u.n, N, `layer ${li} attention output`);
      square(L.attention.scores, U.attention.scores, N, N, u.n, u.n, -Infinity, `layer ${li} scores`);
      square(L.attention.weights, U.attention.weights, N, N, u.n, u.n, 0, `layer ${li} weights`);
      assert.ok(L.output.every(Number.isFinite), 'pad query rows are computed');
      if (L.cross) {
        square(L.cross.scores, U.cross.scores, N, pm.n, u.n, um.n, -Infinity, `layer ${li} cross scores`);
        square(L.cross.weights, U.cross.weights, N, pm.n, u.n, um.n, 0, `layer ${li} cross weights`);
      }
    });
    realRows(p.output, u.output, u.n, N, 'output');
  };
  for (const architecture of ['encoder', 'decoder', 'encoder-decoder']) {
    for (const normFirst of [false, true]) {
      const model = as.createModel({ architecture, normFirst, numHeads: 4 });
      const input = architecture === 'encoder-decoder' ? { source: 'the quick brown fox', target: 'le renard' } : 'the quick brown fox';
      const u = model.run(input);
      for (const N of [4, 5, 13]) {
        const p = model.run(input, { padTo: N });
        if (p.source) sideCheck(p.source, u.source, N);
        sideCheck(p, u, N, p.source, u.source);
        assert.deepEqual(p.next, u.next);
      }
      model.delete();
    }
  }
  const simple = as.createModel({ attention: 'simple', numLayers: 2, numHeads: 1, dModel: 3, positional: 'none', embeddings: CLASSIC });
  const text = 'Your journey starts with one step';
  const p = simple.run(text, { padTo: 8 });
  sideCheck(p, simple.run(text), 8);
  assert.deepEqual(Array.from(p.offsets.subarray(12)), [33, 33, 33, 33]);
  throwsExactly(() => simple.run('Your journey starts', { padTo: 2 }), RangeError,
    'run: padTo (2) must be at least the number of tokens of the text (3)');
  throwsExactly(() => simple.run('Your', { padTo: 1.5 }), RangeError, 'run: padTo (1.5) must be a positive integer');
  throwsExactly(() => simple.run('Your', { padTo: '4' }), TypeError, 'run: padTo must be a number, got string');
  simple.delete();
});

test('createModel: BPE tokenizer config, vocab-entry embeddings and next token over all ids', () => {
  // A 259-entry byte-level vocabulary: the 256 GPT-2 byte tokens plus "at", "Ġc", "Ġcat".
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let extra = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + extra++); }
  const byteChar = new Map(bs.map((b, i) => [b, String.fromCodePoint(cs[i])]));
  const vocab = {};
  for (let b = 0; b < 256; b++) vocab[byteChar.get(b)] = b;
  Object.assign(vocab, { at: 256, 'Ġc': 257, 'Ġcat': 258 });
  const merges = '#version: 0.2\na t\nĠ c\nĠc at\n';
  const row = [1, 0, 0, 0, 0, 0, 0, 0];
  const model = as.createModel({ tokenizer: { kind: 'bpe', vocab, merges }, dModel: 8, embeddings: { 'Ġcat': row }, topK: 3 });
  const r = model.run('a cat');
  assert.deepEqual(Array.from(r.ids), [97, 258]);
  assert.deepEqual(r.tokens, ['a', ' cat']);
  assert.deepEqual(Array.from(r.embeddings.slice(8, 16)), row);
  assert.equal(r.next.ids.length, 3);
  assert.ok(r.next.ids.every((id) => id >= 0 && id < 259));
  model.delete();
  throwsExactly(() => as.createModel({ tokenizer: { kind: 'bpe', vocab, merges }, dModel: 8, embeddings: { cat: row } }),
    RangeError, 'createModel: embeddings: token "cat" is not in the BPE vocabulary (use the vocab entry, e.g. "Ġjourney")');
});

test('createModel: PyTorch fixtures (2-layer encoder-decoder, encoder, decoder), every layer', (t) => {
  for (const name of ['encdec', 'encoder', 'decoder']) {
    const fx = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));
    const weights = new Uint8Array(readFileSync(new URL(fx.weights, FIXTURES)));
    const model = as.createModel({ ...fx.config, embeddings: fx.embeddings, weights });
    const r = model.run(fx.config.architecture === 'encoder-decoder' ? { source: fx.source, target: fx.target } : fx.text);
    let worst = 0;
    let worstInter = 0;
    const side = (got, want, what) => {
      worst = Math.max(worst, maxAbsErr(got.input, want.input, `${name} ${what} input`, fx.tolerance));
      assert.equal(got.layers.length, want.layers.length);
      got.layers.forEach((L, i) => {
        const W = want.layers[i];
        const at = `${name} ${what} layer ${i}`;
        worst = Math.max(worst, maxAbsErr(L.output, W.output, `${at} output`, fx.tolerance));
        worst = Math.max(worst, maxAbsErr(L.attention.weights, W.weights, `${at} weights`, fx.tolerance));
        if (W.crossWeights) worst = Math.max(worst, maxAbsErr(L.cross.weights, W.crossWeights, `${at} cross`, fx.tolerance));
        // every intermediate vs the float64 recomputation of the layer's forward (generate.py)
        const got = { ...L, attnOutput: L.attention.output, crossOutput: L.cross?.output };
        for (const key of ['attnOutput', 'crossOutput', 'residual1', 'norm1', 'residual2', 'norm2', 'residual3', 'norm3', 'ffHidden', 'ffOutput']) {
          if (W[key] === undefined) {
            assert.equal(got[key], undefined, `${at} ${key}`);
          } else {
            worstInter = Math.max(worstInter, maxAbsErr(got[key], W[key], `${at} ${key}`, fx.tolerance));
          }
        }
        assert.ok(Math.abs(L.attention.scale - W.scale) < 1e-7, `${at} scale ${L.attention.scale}`);
      });
      worst = Math.max(worst, maxAbsErr(got.output, want.output, `${name} ${what} output`, fx.tolerance));
    };
    if (fx.expected.source) side(r.source, fx.expected.source, 'source');
    side(r, fx.expected, 'main');
    assert.deepEqual(r.next.tokens, fx.expected.next.tokens);
    maxAbsErr(r.next.probs, fx.expected.next.probs, `${name} next`, fx.tolerance);
    t.diagnostic(`${name}: max abs error vs PyTorch ${worst.toExponential(2)}, intermediates ${worstInter.toExponential(2)} (torch ${fx.torch})`);
    // the padded run (padTo) vs the float64 recomputation with key-padding masks, pad rows included
    const P = fx.padded;
    const p = model.run(fx.config.architecture === 'encoder-decoder' ? { source: fx.source, target: fx.target } : fx.text, { padTo: P.padTo });
    let worstPad = 0;
    const padded = (got, want, what) => {
      assert.equal(got.n, P.padTo);
      got.layers.forEach((L, i) => {
        const W = want.layers[i];
        const at = `${name} padded ${what} layer ${i}`;
        worstPad = Math.max(worstPad, maxAbsErr(L.output, W.output, `${at} output`, fx.tolerance));
        worstPad = Math.max(worstPad, maxAbsErr(L.attention.weights, W.weights, `${at} weights`, fx.tolerance));
        if (W.crossWeights) worstPad = Math.max(worstPad, maxAbsErr(L.cross.weights, W.crossWeights, `${at} cross`, fx.tolerance));
      });
      maxAbsErr(got.output, want.output, `${name} padded ${what} output`, fx.tolerance);
    };
    if (P.source) padded(p.source, P.source, 'source');
    padded(p, P, 'main');
    t.diagnostic(`${name} padded to ${P.padTo}: max abs error ${worstPad.toExponential(2)}`);
    model.delete();
  }
});

test('createModel: bad configs and runs give exact messages and the module keeps working', () => {
  const cases = [
    [{ dModel: 10, numHeads: 3 }, RangeError, 'createModel: dModel (10) must be divisible by numHeads (3)'],
    [{ dModel: 0 }, RangeError, 'createModel: dModel (0) must be a positive integer'],
    [{ dModel: '16' }, TypeError, 'createModel: dModel must be a number, got string'],
    [{ dModel: 9000 }, RangeError, 'createModel: dModel (9000) must be at most 8192'],
    [{ architecture: 'gpt' }, RangeError, "createModel: architecture (\"gpt\") must be one of 'encoder', 'decoder', 'encoder-decoder'"],
    [{ tokenizer: 'bpe' }, RangeError, "createModel: tokenizer (\"bpe\") must be 'word', 'char' or { kind: 'bpe', vocab, merges }"],
    [{ tokenizer: { kind: 'bpe', vocab: '{}' } }, TypeError, 'createModel: tokenizer.merges is required'],
    [{ colour: 'red' }, TypeError, "createModel: unknown option 'colour'"],
    [{ positional: 'rotary' }, RangeError, "createModel: positional (\"rotary\") must be one of 'sinusoidal', 'learned', 'none'"],
    [{ seed: -1 }, RangeError, 'createModel: seed (-1) must be a non-negative safe integer'],
    [{ dModel: 4, embeddings: { x: [1, 2] } }, RangeError, 'createModel: embeddings["x"] must have length 4 (dModel = 4), got 2'],
    [{ dModel: 2, embeddings: { x: [1, NaN] } }, RangeError, 'createModel: embeddings["x"][1] (NaN) must be finite'],
    [{ weights: new Uint8Array([1, 2, 3]) }, Error, 'createModel: weights: safetensors buffer (3 bytes) is shorter than the 8-byte header length'],
    [{ weights: [1, 2] }, TypeError, 'createModel: weights must be a Uint8Array or an ArrayBuffer (safetensors bytes), got Array'],
    [{ architecture: 'decoder', attention: 'simple' }, RangeError, "createModel: attention ('simple') needs architecture 'encoder' or 'encoder-decoder' (it has no causal mask)"],
    [{ tokenizer: { kind: 'bpe', vocab: '{', merges: '' } }, Error, null],
  ];
  for (const [config, Kind, message] of cases) {
    if (message === null) {
      assert.throws(() => as.createModel(config), (e) => e.message.startsWith('createModel: tokenizer.vocab'));
    } else {
      throwsExactly(() => as.createModel(config), Kind, message);
    }
  }
  const model = as.createModel({ maxTokens: 8 });
  throwsExactly(() => model.run(42), TypeError, 'run: text must be a string, got number');
  throwsExactly(() => model.run('a b c d e f g h i'), RangeError, 'run: text has 9 tokens, more than maxTokens (8)');
  throwsExactly(() => model.run(' '), RangeError, 'run: text has no tokens');
  throwsExactly(() => model.run('a', { trace: 'some' }), RangeError, "run: trace (\"some\") must be one of 'full', 'weights', 'none'");
  throwsExactly(() => model.run({ source: 'a', target: 'b' }), TypeError,
    "run: text must be a string for architecture 'encoder' ({ source, target } needs 'encoder-decoder')");
  const ed = as.createModel({ architecture: 'encoder-decoder' });
  throwsExactly(() => ed.run({ source: 'a' }), TypeError, 'run: target must be a string, got undefined');
  throwsExactly(() => ed.run({ source: 'a', target: '' }), RangeError, 'run: target has no tokens');
  ed.delete();
  // still working, and a deleted model says so
  assert.equal(model.run('a b').n, 2);
  model.delete();
  model.delete();
  throwsExactly(() => model.run('a'), Error, 'run: this model has been deleted');
  const probe = as.softmax({ x: new Float32Array([0, 0]), rows: 1, cols: 2 });
  assert.deepEqual(Array.from(probe), [0.5, 0.5]);
});

test('run: 1,000 repeated runs keep the wasm heap flat', (t) => {
  const model = as.createModel({ architecture: 'encoder-decoder', dModel: 32, numHeads: 4 });
  const input = { source: 'the quick brown fox jumps over the lazy dog', target: 'le renard brun rapide saute' };
  const first = model.run(input);
  for (let i = 0; i < 50; i++) model.run(input);
  const before = as.memoryStats();
  let last;
  for (let i = 0; i < 1000; i++) last = model.run(input);
  const after = as.memoryStats();
  t.diagnostic(`heapSize before ${before.heapSize}, after ${after.heapSize}; allocated before ${before.allocated}, after ${after.allocated}`);
  assert.equal(after.heapSize, before.heapSize);
  assert.ok(after.allocated <= before.allocated + 4096, `allocated grew from ${before.allocated} to ${after.allocated}`);
  assert.deepEqual(last.output, first.output);
  assert.deepEqual(last.layers[1].cross.weights, first.layers[1].cross.weights);
  model.delete();
});
