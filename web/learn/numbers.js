// Small pure helpers of the guided path (layer: web, no DOM): a seeded Gaussian source for step 3's random
// vectors and the statistics the steps print next to the module's results. The attention math itself always
// comes from the attnscope module; these only summarise its outputs. Node can import this file (tests do).
import { mulberry32 } from '../rng.js';

/** Float32Array(n) of standard normal draws (Box–Muller over mulberry32(seed), web/rng.js). */
export function gaussians(n, seed) {
  const u = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - u()));
    const a = 2 * Math.PI * u();
    out[i] = r * Math.cos(a);
    if (i + 1 < n) out[i + 1] = r * Math.sin(a);
  }
  return out;
}

/** Mean and biased variance of the numbers in `a` (any iterable). */
export function meanVar(a) {
  let n = 0; let s = 0; let s2 = 0;
  for (const v of a) { n++; s += v; s2 += v * v; }
  const mean = s / n;
  return { mean, variance: s2 / n - mean * mean };
}

/** The diagonal of an n×n row-major matrix: the dot products q_i·k_i of step 3's independent pairs. */
export function diagonal(m, n) {
  return Float32Array.from({ length: n }, (_, i) => m[i * n + i]);
}

/** Mean squared error of two equal-length arrays. */
export function mse(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
  return s / a.length;
}

/** Index of the largest entry of a[from, to) (the first on ties), relative to from. */
export function argmax(a, from = 0, to = a.length) {
  let best = from;
  for (let i = from + 1; i < to; i++) if (a[i] > a[best]) best = i;
  return best - from;
}

/**
 * Per head, the mean distance from a query to the keys it reads: Σ_i Σ_j w[h,i,j]·|i − j| / n, the weights
 * `[heads, n, n]` of one layer (bertviz-style "how far does this head look").
 */
export function meanDistance(weights, heads, n) {
  return Array.from({ length: heads }, (_, hd) => {
    let s = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) s += weights[(hd * n + i) * n + j] * Math.abs(i - j);
    return s / n;
  });
}

/** A number typed by a learner: '0.25', '0,25', '０.２５', ' .25 ' → 0.25; anything else → NaN. */
export function parseAnswer(text) {
  const t = String(text).trim()
    .replace(/[０-９]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFF10 + 48))
    .replace(/[．。，,]/g, '.').replace(/^[−–]/, '-').replace(/^－/, '-');
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : NaN;
}
