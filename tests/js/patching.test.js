// patching.test.js: as.patch (activation patching), as.ablationSweep, as.headMeans + run({ ablate: [{ mean }] }) and
// as.logitAttribution against tests/fixtures/hf/patching.py's float64 PyTorch forwards with hand-made hooks (each
// patched site replaced by hand and the whole model run again), on a GPT-2-shaped and a Llama-shaped random
// checkpoint; plus ablate and lens on the Llama-shaped one. The sweeps also equal site-by-site full runs of the
// engine, progress is reported and an AbortSignal cancels.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto' });
const FIX = JSON.parse(readFileSync(new URL('../fixtures/hf/patching.json', import.meta.url), 'utf8'));
const DIRS = {
  'gpt2-lmhead-f32': new URL('../fixtures/hf/gpt2-lmhead-f32/', import.meta.url),
  'llama-f32-untied-gqa-llama3': new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url),
};
// float32 engine vs float64 reference: logits and losses (API.md's hidden-state tolerance), attention weights
const LOGIT = { atol: 1e-4, rtol: 1e-3 };
const ATT = { atol: 2e-5, rtol: 0 };
const PROBS = { atol: 1e-6, rtol: 2e-3 };
let gpt2Tokenizer;

async function load(name) {
  const dir = DIRS[name];
  const tokenizer = name.startsWith('gpt2')
    ? (gpt2Tokenizer ??= makeGpt2TokenizerJson({ merges: 'strings' }))
    : readFileSync(new URL('tokenizer.json', dir), 'utf8');
  return as.loadPretrained({
    config: readFileSync(new URL('config.json', dir), 'utf8'), weights: readFileSync(new URL('model.safetensors', dir)), tokenizer,
  });
}

let worst = 0;
function close(got, want, { atol, rtol }, what) {
  const g = typeof got === 'number' ? [got] : got;
  const w = typeof want === 'number' ? [want] : want;
  assert.equal(g.length, w.length, `${what}: length`);
  for (let i = 0; i < w.length; i++) {
    const err = Math.abs(g[i] - w[i]);
    worst = Math.max(worst, err);
    assert.ok(err <= atol + rtol * Math.abs(w[i]), `${what}[${i}]: got ${g[i]}, want ${w[i]}`);
  }
}

// logit[a] − logit[b] at the last position of a run with every probability: ln(p_a / p_b)
function logitDiff(model, text, a, b, options = {}) {
  const r = model.run(text, { ...options, trace: 'none', topK: 1e6 });
  const p = (id) => r.next.probs[Array.from(r.next.ids).indexOf(id)];
  return Math.log(p(a) / p(b));
}
const loss = (model, text, options) => {
  const lp = model.run(text, { ...options, trace: 'none', logProbs: true }).logProbs;
  return -lp.reduce((s, x) => s + x, 0) / lp.length;
};

for (const [name, c] of Object.entries(FIX.cases)) {
  test(`patch: every site equals the float64 run with that activation replaced by hand: ${name}`, async () => {
    const model = await load(name);
    try {
      assert.deepEqual(Array.from(model.run(c.clean, { trace: 'none' }).ids), c.clean_ids);
      assert.deepEqual(Array.from(model.run(c.corrupted, { trace: 'none' }).ids), c.corrupted_ids);
      const progress = [];
      const heads = await as.patch(model, {
        clean: c.clean, corrupted: c.corrupted, tokens: c.tokens, onProgress: (done, total) => progress.push([done, total]),
      });
      const L = model.config.numLayers;
      const H = model.config.numHeads;
      assert.equal(heads.granularity, 'head');
      assert.equal(heads.numLayers, L);
      assert.equal(heads.cols, H);
      close(heads.clean, c.clean_diff, LOGIT, `${name} clean`);
      close(heads.corrupted, c.corrupted_diff, LOGIT, `${name} corrupted`);
      close(heads.values, c.patch_head, LOGIT, `${name} patch head`);
      assert.deepEqual(progress.at(-1), [L * H, L * H]);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i][0] >= progress[i - 1][0]);
      for (let i = 0; i < heads.values.length; i++) {
        close(heads.normalized[i], (heads.values[i] - heads.corrupted) / (heads.clean - heads.corrupted), { atol: 1e-6, rtol: 1e-5 }, 'normalized');
      }
      const resid = await as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: c.tokens, granularity: 'residual' });
      assert.equal(resid.cols, c.clean_ids.length);
      close(resid.values, c.patch_residual, LOGIT, `${name} patch residual`);
      // the sweep equals site-by-site full runs of the engine: the corrupted text with that head's weights · V set
      // to the clean run's (run option ablate with a per-position mean)
      const clean = model.run(c.clean);
      const n = clean.n;
      for (let l = 0; l < L; l++) {
        const concat = clean.layers[l].attention.concat;
        const inner = concat.length / n;
        const hd = inner / H;
        for (let h = 0; h < H; h++) {
          const z = new Float32Array(n * hd);
          for (let i = 0; i < n; i++) z.set(concat.subarray(i * inner + h * hd, i * inner + (h + 1) * hd), i * hd);
          const one = logitDiff(model, c.corrupted, c.tokens[0], c.tokens[1], { ablate: [{ layer: l, head: h, mean: z }] });
          close(heads.values[l * H + h], one, { atol: 2e-5, rtol: 1e-5 }, `${name} site (${l}, ${h}) vs a full run`);
        }
      }
      // the prompts differ at one position: patching layer 0's input there gives the clean run
      const at = c.clean_ids.findIndex((id, i) => id !== c.corrupted_ids[i]);
      close(resid.values[at], heads.clean, { atol: 1e-5, rtol: 0 }, 'layer 0 at the differing position');
    } finally {
      model.delete();
    }
  });

  test(`headMeans, mean ablation and ablationSweep equal the float64 reference: ${name}`, async () => {
    const model = await load(name);
    try {
      const m = as.headMeans(model, c.mean_texts);
      close(m.means, c.means, LOGIT, `${name} means`);
      const { numHeads: H, headDim: hd } = m;
      const mean = (l, h) => m.means.subarray((l * H + h) * hd, (l * H + h + 1) * hd);
      const heads = c.mean_ablate.heads.map(({ layer, head }) => ({ layer, head, mean: mean(layer, head) }));
      const r = model.run(c.sweep_text, { ablate: heads, logProbs: true });
      close(r.output, c.mean_ablate.output, LOGIT, `${name} mean-ablated output`);
      close(-r.logProbs.reduce((s, x) => s + x, 0) / r.logProbs.length, c.mean_ablate.loss, LOGIT, `${name} mean-ablated loss`);

      const zero = await as.ablationSweep(model, c.sweep_text);
      close(zero.base, c.sweep_base_loss, LOGIT, `${name} base loss`);
      close(zero.values, c.sweep_zero_loss, LOGIT, `${name} zero-ablation sweep`);
      const means = await as.ablationSweep(model, c.sweep_text, { means: m.means });
      close(means.values, c.sweep_mean_loss, LOGIT, `${name} mean-ablation sweep`);
      const logit = await as.ablationSweep(model, c.sweep_text, { metric: 'logit', tokens: [c.tokens[0]] });
      close(logit.values, c.sweep_zero_logit, LOGIT, `${name} logit sweep`);
      // site by site: full runs with the head ablated
      for (let i = 0; i < zero.values.length; i++) {
        const head = { layer: Math.floor(i / H), head: i % H };
        close(zero.values[i], loss(model, c.sweep_text, { ablate: [head] }), { atol: 1e-5, rtol: 0 }, `${name} sweep site ${i}`);
        close(means.values[i], loss(model, c.sweep_text, { ablate: [{ ...head, mean: mean(head.layer, head.head) }] }),
          { atol: 1e-5, rtol: 0 }, `${name} mean sweep site ${i}`);
        close(zero.delta[i], zero.values[i] - zero.base, { atol: 1e-6, rtol: 0 }, 'delta');
      }
      // the ranking: every head once, by |delta| descending
      assert.equal(zero.ranking.length, zero.values.length);
      for (let i = 1; i < zero.ranking.length; i++) assert.ok(Math.abs(zero.ranking[i - 1].delta) >= Math.abs(zero.ranking[i].delta));
    } finally {
      model.delete();
    }
  });

  test(`logitAttribution: per-head direct logit attribution with the final norm's scale frozen: ${name}`, async () => {
    const model = await load(name);
    try {
      const a = as.logitAttribution(model, c.sweep_text, c.dla.token);
      assert.equal(a.id, c.dla.token);
      close(a.values, c.dla.values, LOGIT, `${name} dla`);
      close(a.scale, c.dla.scale, LOGIT, `${name} scale`);
      close(a.logit, c.dla.logit, LOGIT, `${name} logit`);
    } finally {
      model.delete();
    }
  });
}

test('ablate and lens on a Llama-shaped checkpoint equal the float64 reference (RMSNorm, GQA, RoPE)', async () => {
  const c = FIX.cases['llama-f32-untied-gqa-llama3'];
  const model = await load('llama-f32-untied-gqa-llama3');
  try {
    for (const a of c.ablate) {
      const r = model.run(c.clean, { ablate: a.heads });
      r.layers.forEach((layer, i) => {
        close(layer.attention.weights, a.attentions[i], ATT, `ablate ${JSON.stringify(a.heads)} attentions[${i}]`);
        close(layer.output, a.outputs[i], LOGIT, `ablate layer ${i}`);
      });
      close(r.output, a.output, LOGIT, 'ablate output');
    }
    const k = FIX.lens_k;
    const r = model.run(c.clean, { lens: k });
    r.layers.forEach((layer, i) => {
      assert.deepEqual(Array.from(layer.lens.ids), c.lens[i].ids, `lens layer ${i} ids`);
      close(layer.lens.probs, c.lens[i].probs, PROBS, `lens layer ${i} probs`);
      assert.equal(layer.lens.tokens.length, layer.lens.ids.length);
    });
    // the labels are the vocabulary's texts: the last layer's last row reads as `next`
    const next = model.run(c.clean, { topK: k }).next;
    assert.deepEqual(r.layers.at(-1).lens.tokens.slice(-k), next.tokens);
  } finally {
    model.delete();
  }
});

test('sweeps cancel through an AbortSignal; errors name the function and argument; the model keeps working', async () => {
  const c = FIX.cases['gpt2-lmhead-f32'];
  const model = await load('gpt2-lmhead-f32');
  try {
    const ac = new AbortController();
    await assert.rejects(as.ablationSweep(model, c.sweep_text, { signal: ac.signal, onProgress: () => ac.abort() }),
      (e) => e.name === 'AbortError');
    await assert.rejects(as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: c.tokens, signal: AbortSignal.abort() }),
      (e) => e.name === 'AbortError');
    const rejects = (p, Kind, message) => assert.rejects(p, (e) => e.constructor === Kind && e.message === message, message);
    await rejects(as.patch(model, { clean: c.clean, corrupted: 'Hello', tokens: c.tokens }), Error,
      'patch: corrupted has 1 tokens and clean 4 (patching needs prompts of the same length)');
    await rejects(as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: [' world', ' brown fox'] }), Error,
      "patch: tokens[1] (\" brown fox\") is 2 tokens, not one (give an id or the vocabulary's spelling)");
    await rejects(as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: [99999999, 0] }), RangeError,
      'patch: tokens[0] (99999999) must be a token id from 0 to 50256');
    await rejects(as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: [1] }), TypeError,
      'patch: tokens must be an array of 2 tokens (ids or texts), got Array');
    await rejects(as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: c.tokens, granularity: 'layer' }), RangeError,
      "patch: granularity (\"layer\") must be 'head' or 'residual'");
    await rejects(as.ablationSweep(model, c.sweep_text, { means: new Float32Array(3) }), RangeError,
      'ablationSweep: means has 3 numbers, expected 16 (layers·heads·headDim, as headMeans gives)');
    await rejects(as.ablationSweep(model, c.sweep_text, { metric: 'kl' }), RangeError,
      "ablationSweep: metric (\"kl\") must be 'loss' or 'logit'");
    assert.throws(() => model.run(c.clean, { ablate: [{ layer: 0, head: 0, mean: new Float32Array(3) }] }),
      (e) => e instanceof RangeError && e.message === "run: ablate[0].mean has 3 numbers; layer 0's heads need headDim (4) or n·headDim (16, n = 4)");
    assert.throws(() => as.logitAttribution(model, c.clean, {}), (e) => e instanceof TypeError
      && e.message === 'logitAttribution: token must be a token id or a token text, got object');
    // token texts: ' world' encodes to one GPT-2 token, as does its vocabulary spelling
    const byText = await as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: [' world', '!'] });
    const bySpelling = await as.patch(model, { clean: c.clean, corrupted: c.corrupted, tokens: ['Ġworld', '!'] });
    assert.deepEqual(Array.from(byText.ids), c.tokens);
    assert.deepEqual(bySpelling.values, byText.values);
    const bert = await as.loadPretrained({
      config: readFileSync(new URL('../fixtures/hf/bert-model-f32/config.json', import.meta.url), 'utf8'),
      weights: readFileSync(new URL('../fixtures/hf/bert-model-f32/model.safetensors', import.meta.url)),
      tokenizer: readFileSync(new URL('../fixtures/hf/bert-model-f32/tokenizer.json', import.meta.url), 'utf8'),
    });
    try {
      await rejects(as.ablationSweep(bert, 'hello world'), Error,
        'ablationSweep: the model has no language-model head (the metric reads next-token logits)');
    } finally {
      bert.delete();
    }
    model.delete();
    await rejects(as.ablationSweep(model, c.sweep_text), Error, 'ablationSweep: this model has been deleted');
  } finally {
    model.delete();
  }
  console.log(`patching.test.js: largest error against the float64 references ${worst.toExponential(2)}`);
});
