// patching-reverse.test.js: the page's digit-reversal patching example (web/inside-presets.js REVERSE, panel 9) on the
// bundled `reverse` model. Every per-head site equals a full run of the corrupted prompt with that head's weights · V
// replaced by hand by the clean run's (run option ablate with a per-position `mean`, as patching.test.js checks on
// float64 references); patching layer 0's input at the changed digit gives the clean run exactly. And the effect the
// preset's description states (measured: heads (2, 0) and (2, 3) restore 0.59 and 0.22, every other head < 0.03;
// per layer × position the effect sits at the changed digit in every layer) holds.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createAttnScope } from 'attnscope';
import { REVERSE } from '../../web/inside-presets.js';

const as = await createAttnScope();

// logit[a] − logit[b] at the last position of a run with every probability: ln(p_a / p_b)
function logitDiff(model, text, [a, b], options = {}) {
  const r = model.run(text, { ...options, trace: 'none', topK: 1e6 });
  const p = (tok) => r.next.probs[r.next.tokens.indexOf(tok)];
  return Math.log(p(a) / p(b));
}

test('patching preset REVERSE: every head site equals a hand-patched full run, and the effect is the one described', async () => {
  const model = await as.loadBundled(REVERSE.model);
  try {
    const { clean, corrupted, tokens } = REVERSE;
    // the model writes the clean prompt's last digit first
    assert.equal(model.run(clean, { trace: 'none', topK: 1 }).next.tokens[0], tokens[0]);
    assert.equal(model.run(corrupted, { trace: 'none', topK: 1 }).next.tokens[0], tokens[1]);
    const heads = await as.patch(model, { clean, corrupted, tokens });
    const { numLayers: L, numHeads: H } = model.config;
    assert.ok(Math.abs(heads.clean - logitDiff(model, clean, tokens)) < 1e-3);
    assert.ok(Math.abs(heads.corrupted - logitDiff(model, corrupted, tokens)) < 1e-3);
    assert.ok(heads.clean > 10 && heads.corrupted < -10, `clean ${heads.clean}, corrupted ${heads.corrupted}`);
    // by hand: the clean run's weights · V of head (l, h), every position, put into the corrupted run
    const ref = model.run(clean);
    const n = ref.n;
    for (let l = 0; l < L; l++) {
      const { concat } = ref.layers[l].attention;
      const inner = concat.length / n;
      const hd = inner / H;
      for (let h = 0; h < H; h++) {
        const z = new Float32Array(n * hd);
        for (let i = 0; i < n; i++) z.set(concat.subarray(i * inner + h * hd, i * inner + (h + 1) * hd), i * hd);
        const byHand = logitDiff(model, corrupted, tokens, { ablate: [{ layer: l, head: h, mean: z }] });
        assert.ok(Math.abs(heads.values[l * H + h] - byHand) < 1e-3, `head (${l}, ${h}): ${heads.values[l * H + h]} vs ${byHand}`);
      }
    }
    // the effect: layer 2's heads 0 and 3 restore most of it, no other head more than 0.05
    const norm = (l, h) => heads.normalized[l * H + h];
    assert.ok(norm(2, 0) > 0.5, `(2, 0) restores ${norm(2, 0)}`);
    assert.ok(norm(2, 3) > 0.15, `(2, 3) restores ${norm(2, 3)}`);
    assert.ok(norm(2, 0) + norm(2, 3) > 0.75);
    for (let i = 0; i < L * H; i++) if (i !== 2 * H && i !== 2 * H + 3) assert.ok(Math.abs(heads.normalized[i]) < 0.05, `head ${i}: ${heads.normalized[i]}`);
    // per layer × position: the changed digit's column carries the effect in every layer, every other site ~0
    const resid = await as.patch(model, { clean, corrupted, tokens, granularity: 'residual' });
    const at = Array.from(clean).findIndex((c, i) => c !== corrupted[i]);
    assert.equal(resid.cols, n);
    assert.equal(resid.tokens[at], corrupted[at]);
    assert.ok(Math.abs(resid.values[at] - resid.clean) < 1e-4, 'layer 0 at the changed digit gives the clean run');
    for (let l = 0; l < L; l++) {
      for (let p = 0; p < n; p++) {
        const v = resid.normalized[l * n + p];
        if (p === at) assert.ok(v > 0.95, `layer ${l} at the digit: ${v}`);
        else assert.ok(Math.abs(v) < 0.05, `layer ${l} position ${p}: ${v}`);
      }
    }
  } finally {
    model.delete();
  }
});
