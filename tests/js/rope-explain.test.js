// rope-explain.test.js: as.ropeExplain (issue 28, the page's RoPE panel) against a float64 reference written here
// from Hugging Face's modeling_rope_utils.py (_compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
// _compute_dynamic_ntk_parameters, _compute_llama3_parameters, _compute_yarn_parameters) and modeling_llama.py
// (rotate_half, apply_rotary_pos_emb); the same-offset invariance within 1e-6 relative; the rotation equal to a model
// run's own (the Llama fixture's layer-0 q and k); errors naming the argument, with the module working afterwards.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadAs } from './helpers.js';

const as = await loadAs();

// ---- the float64 reference

function invFreq({ headDim, theta = 10000, partialRotaryFactor = 1, maxPositions = 0, scaling = {} }, seqLen) {
  const dim = Math.trunc(headDim * partialRotaryFactor);
  const type = scaling.type ?? 'default';
  let base = theta;
  if (type === 'dynamic') { // _compute_dynamic_ntk_parameters (seq_len at least max_position_embeddings)
    const len = Math.max(seqLen, maxPositions);
    base = theta * ((scaling.factor * len) / maxPositions - (scaling.factor - 1)) ** (dim / (dim - 2));
  }
  let inv = [];
  for (let j = 0; j < dim; j += 2) inv.push(1 / base ** (j / dim));
  let attention = 1;
  if (type === 'linear') inv = inv.map((f) => f / scaling.factor);
  if (type === 'llama3') {
    const { factor, lowFreqFactor: lo, highFreqFactor: hi, originalMaxPositions: old } = scaling;
    inv = inv.map((f) => {
      const wl = (2 * Math.PI) / f;
      const scaled = wl > old / lo ? f / factor : f;
      const smooth = (old / wl - lo) / (hi - lo);
      const medium = !(wl < old / hi) && !(wl > old / lo);
      return medium ? ((1 - smooth) * scaled) / factor + smooth * scaled : scaled;
    });
  }
  if (type === 'yarn') {
    const { factor, betaFast = 32, betaSlow = 1 } = scaling;
    const maxPos = scaling.originalMaxPositions ?? maxPositions;
    const corr = (rot) => (dim * Math.log(maxPos / (rot * 2 * Math.PI))) / (2 * Math.log(theta));
    const low = Math.max(Math.floor(corr(betaFast)), 0);
    let high = Math.min(Math.ceil(corr(betaSlow)), dim - 1);
    if (low === high) high += 0.001;
    inv = inv.map((f, j) => {
      const extra = 1 - Math.min(1, Math.max(0, (j - low) / (high - low)));
      return (f / factor) * (1 - extra) + f * extra;
    });
    attention = scaling.attentionFactor ?? 0.1 * Math.log(factor) + 1;
  }
  return { inv, attention };
}

/** apply_rotary_pos_emb for one vector: x·cos + rotate_half(x)·sin on the first dim values. */
function rotate(x, pos, { inv, attention }) {
  const y = Array.from(x, Number);
  const half = inv.length;
  for (let j = 0; j < half; j++) {
    const c = Math.cos(pos * inv[j]) * attention, s = Math.sin(pos * inv[j]) * attention;
    y[j] = x[j] * c - x[j + half] * s;
    y[j + half] = x[j + half] * c + x[j] * s;
  }
  return y;
}
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}
const vec = (r, d) => Float32Array.from({ length: d }, () => 2 * r());

const CASES = [
  { name: 'default', headDim: 8, theta: 10000 },
  { name: 'linear', headDim: 16, theta: 10000, scaling: { type: 'linear', factor: 4 } },
  { name: 'dynamic', headDim: 16, theta: 10000, maxPositions: 32, scaling: { type: 'dynamic', factor: 2 } },
  { name: 'llama3 x32 (Llama 3.2)', headDim: 64, theta: 500000,
    scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } },
  { name: 'yarn', headDim: 32, theta: 10000, maxPositions: 4096, scaling: { type: 'yarn', factor: 4 } },
  { name: 'partial rotary 0.5', headDim: 16, theta: 10000, partialRotaryFactor: 0.5 },
];

test('ropeExplain equals a float64 computation: rotated q, k, angles, score and the offset curve', () => {
  const r = rng(7);
  for (const c of CASES) {
    const { name, ...spec } = c;
    const q = vec(r, c.headDim), k = vec(r, c.headDim);
    const m = 37, n = 12, from = -40, to = 60;
    const out = as.ropeExplain({ ...spec, q, k, m, n, from, to });
    const f = invFreq(spec, Math.max(m, n, 40 + to) + 1);
    assert.equal(out.rotaryDim, 2 * f.inv.length, name);
    let errRot = 0, errAngle = 0, errCurve = 0;
    f.inv.forEach((w, j) => {
      errAngle = Math.max(errAngle, Math.abs(out.invFreq[j] - w) / w, Math.abs(out.angleQ[j] - m * w), Math.abs(out.angleK[j] - n * w));
    });
    const qr = rotate(q, m, f), kr = rotate(k, n, f);
    for (let i = 0; i < c.headDim; i++) errRot = Math.max(errRot, Math.abs(out.qRotated[i] - qr[i]), Math.abs(out.kRotated[i] - kr[i]));
    const scale = Math.hypot(...q) * Math.hypot(...k) * f.attention ** 2;
    assert.ok(Math.abs(out.score - dot(qr, kr)) <= 1e-12 * scale, `${name}: score ${out.score} vs ${dot(qr, kr)}`);
    assert.equal(out.curve.length, to - from + 1);
    for (let d = from; d <= to; d++) {
      const want = dot(rotate(q, 40 + d, f), rotate(k, 40, f));
      errCurve = Math.max(errCurve, Math.abs(out.curve[d - from] - want) / scale);
    }
    assert.ok(errAngle < 1e-12, `${name}: inverse frequencies / angles off by ${errAngle}`);
    assert.ok(errRot < 2e-6, `${name}: rotated q/k off by ${errRot}`);
    assert.ok(errCurve < 1e-12, `${name}: curve off by ${errCurve} (relative)`);
    console.log(`ropeExplain ${name}: max abs error rotated q/k ${errRot.toExponential(2)}, relative curve ${errCurve.toExponential(2)}`);
  }
});

test('ropeExplain: the score depends on m − n only (moving q and k together keeps it, within 1e-6 relative)', () => {
  const r = rng(11);
  for (const c of CASES.filter((x) => x.name !== 'dynamic')) {
    const { name, ...spec } = c;
    const q = vec(r, c.headDim), k = vec(r, c.headDim);
    const base = as.ropeExplain({ ...spec, q, k, m: 9, n: 3, from: -8, to: 8 });
    let worst = 0;
    for (const shift of [1, 17, 250, 4000, 100000]) {
      const moved = as.ropeExplain({ ...spec, q, k, m: 9 + shift, n: 3 + shift });
      worst = Math.max(worst, Math.abs(moved.score - base.score) / Math.abs(base.score));
    }
    // the curve's point at offset 6 is the same score again
    worst = Math.max(worst, Math.abs(base.curve[6 + 8] - base.score) / Math.abs(base.score));
    assert.ok(worst < 1e-6, `${name}: same offset, scores differ by ${worst} (relative)`);
    console.log(`ropeExplain ${name}: same-offset invariance, worst relative difference ${worst.toExponential(2)}`);
  }
});

test("ropeExplain rotates as a model run does: the Llama fixture's layer-0 q and k (llama3 scaling, GQA)", async () => {
  const dir = new URL('../fixtures/modern/llama-f32-untied-gqa-llama3/', import.meta.url);
  const cfg = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));
  const model = await as.loadPretrained({
    config: cfg, weights: readFileSync(new URL('model.safetensors', dir)), tokenizer: readFileSync(new URL('tokenizer.json', dir), 'utf8'),
  });
  try {
    // 'aaaaaaa': the same byte token at positions 0..6 (this tokenizer adds no BOS), so layer 0's q and k before
    // RoPE are one vector at every position, and position 0's is unrotated: position p's must be R(p) of it
    const run = model.run('aaaaaaa', { full: [0] });
    assert.deepEqual(new Set(run.ids).size, 1);
    const nh = cfg.num_attention_heads, hd = cfg.hidden_size / nh;
    const { q, k } = run.layers[0].attention;
    // model.config carries what the page's RoPE panel and KV-cache sizes read
    assert.equal(model.config.numKeyValueHeads, cfg.num_key_value_heads);
    assert.equal(model.config.headDim, hd);
    assert.equal(model.config.rope.type, 'llama3');
    assert.equal(model.config.rope.factor, 8);
    assert.equal(model.config.rope.theta, cfg.rope_theta);
    const s = cfg.rope_scaling;
    const spec = {
      headDim: hd, theta: cfg.rope_theta, maxPositions: cfg.max_position_embeddings,
      scaling: { type: s.rope_type, factor: s.factor, lowFreqFactor: s.low_freq_factor, highFreqFactor: s.high_freq_factor, originalMaxPositions: s.original_max_position_embeddings },
    };
    let worst = 0;
    for (let h = 0; h < nh; h++) {
      const at = (x, p) => x.subarray((p * nh + h) * hd, (p * nh + h + 1) * hd);
      for (let p = 1; p < run.ids.length; p++) {
        const e = as.ropeExplain({ ...spec, q: at(q, 0), k: at(k, 0), m: p, n: p });
        for (let i = 0; i < hd; i++) {
          worst = Math.max(worst, Math.abs(e.qRotated[i] - at(q, p)[i]), Math.abs(e.kRotated[i] - at(k, p)[i]));
        }
      }
    }
    assert.ok(worst < 1e-5, `rotation differs from the model run's by ${worst}`);
    console.log(`ropeExplain vs the Llama fixture's run: max abs difference ${worst.toExponential(2)}`);
  } finally {
    model.delete();
  }
});

test('ropeExplain: bad input is an Error naming the argument; the module keeps working', () => {
  const q = new Float32Array(8).fill(0.5), k = new Float32Array(8).fill(0.25);
  const bad = [
    [{ headDim: 8, q, k: new Float32Array(4), m: 0, n: 0 }, 'ropeExplain: k must have length 8 (headDim = 8), got 4'],
    [{ headDim: 8, q, k, m: -1, n: 0 }, 'ropeExplain: m (-1) must be from 0 to 16777216'],
    [{ headDim: 8, q, k, m: 0, n: 0, partialRotaryFactor: 0 }, 'ropeExplain: partialRotaryFactor (0) must be in (0, 1]'],
    [{ headDim: 8, q, k, m: 0, n: 0, theta: -1 }, 'ropeExplain: theta (-1) must be a positive number'],
    [{ headDim: 8, q, k, m: 0, n: 0, scaling: { type: 'longrope' } }, 'ropeExplain: scaling.type ("longrope") must be one of \'default\', \'linear\', \'dynamic\', \'llama3\', \'yarn\''],
    [{ headDim: 8, q, k, m: 0, n: 0, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 4, highFreqFactor: 1, originalMaxPositions: 64 } },
      'ropeExplain: scaling.highFreqFactor (1) must be greater than scaling.lowFreqFactor (4)'],
    [{ headDim: 8, q, k, m: 0, n: 0, scaling: { type: 'yarn', factor: 2 } }, 'ropeExplain: maxPositions (0) must be a positive integer'],
    [{ headDim: 8, q: Float32Array.of(NaN, 0, 0, 0, 0, 0, 0, 0), k, m: 0, n: 0 }, 'ropeExplain: q[0] (NaN) must be finite'],
    [{ headDim: 8, q, k, m: 0, n: 0, from: 3, to: 1 }, 'ropeExplain: offsets (from 3 to 1) must have from <= to, within ±16777216, at most 65536 points'],
  ];
  for (const [args, message] of bad) assert.throws(() => as.ropeExplain(args), (e) => e instanceof Error && e.message === message, message);
  const ok = as.ropeExplain({ headDim: 8, q, k, m: 3, n: 1 });
  assert.equal(ok.qRotated.length, 8);
});
