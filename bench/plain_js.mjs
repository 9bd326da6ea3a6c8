// plain_js.mjs: the benchmark's plain-JavaScript contestant (Float32Array, straightforward loops in
// i-k-j order), an independent float64 reference, and the seeded data generator. Layer: bench.
// Weights are [in, out] as in attnscope's API: y = x·W + b. Same maths as multiHeadAttention with
// needWeights: false — Q/K/V projections, per head softmax(Q_h·K_hᵀ/√dh)·V_h, then ·W_O + b_O.
import { mulberry32 } from '../web/rng.js';

/** Seeded uniform generator in [-1, 1) (mulberry32), identical on every run and machine. */
export function rng(seed) {
  const next = mulberry32(seed);
  return () => next() * 2 - 1;
}

export function randomArray(len, next, scale = 1) {
  const a = new Float32Array(len);
  for (let i = 0; i < len; i++) a[i] = next() * scale;
  return a;
}

/** y [n, dout] = x [n, din] · w [din, dout] (+ b [dout]); i-k-j order, rows of W streamed. */
function linear(T, x, n, din, w, dout, b) {
  const y = new T(n * dout);
  for (let i = 0; i < n; i++) {
    const yi = i * dout;
    if (b) for (let j = 0; j < dout; j++) y[yi + j] = b[j];
    for (let k = 0; k < din; k++) {
      const a = x[i * din + k];
      const wk = k * dout;
      for (let j = 0; j < dout; j++) y[yi + j] += a * w[wk + j];
    }
  }
  return y;
}

function mha(T, x, n, dModel, numHeads, p) {
  const d = dModel;
  const dh = d / numHeads;
  const scale = 1 / Math.sqrt(dh);
  const q = linear(T, x, n, d, p.wq, d, p.bq);
  const k = linear(T, x, n, d, p.wk, d, p.bk);
  const v = linear(T, x, n, d, p.wv, d, p.bv);
  const ctx = new T(n * d);
  const row = new T(n);
  for (let h = 0; h < numHeads; h++) {
    const off = h * dh;
    for (let i = 0; i < n; i++) {
      // scores: row[j] = scale · q_i,h · k_j,h, with the row max kept for the softmax
      const qi = i * d + off;
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        const kj = j * d + off;
        let s = 0;
        for (let c = 0; c < dh; c++) s += q[qi + c] * k[kj + c];
        s *= scale;
        row[j] = s;
        if (s > max) max = s;
      }
      // softmax: exp(s − max), sum, normalise
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const e = Math.exp(row[j] - max);
        row[j] = e;
        sum += e;
      }
      const inv = 1 / sum;
      // context_i,h = Σ_j p_ij · v_j,h (axpy over contiguous head slices)
      for (let j = 0; j < n; j++) {
        const pij = row[j] * inv;
        const vj = j * d + off;
        for (let c = 0; c < dh; c++) ctx[qi + c] += pij * v[vj + c];
      }
    }
  }
  return linear(T, ctx, n, d, p.wo, d, p.bo);
}

/** Plain-JS float32 multi-head self-attention forward; returns Float32Array [n, dModel]. */
export const mhaF32 = (x, n, dModel, numHeads, p) => mha(Float32Array, x, n, dModel, numHeads, p);

/** Plain-JS float32 C [m, n] = A [m, k] · B [k, n], i-k-j. */
export const gemmF32 = (a, b, m, n, k) => linear(Float32Array, a, m, k, b, n, null);

// ---- float64 reference: separate, naive code (one dot per output element, everything in doubles),
// so it shares neither loop order nor V8 type feedback with the float32 contestant above.

function linear64(x, n, din, w, dout, b) {
  const y = new Float64Array(n * dout);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < dout; j++) {
      let acc = b ? b[j] : 0;
      for (let k = 0; k < din; k++) acc += x[i * din + k] * w[k * dout + j];
      y[i * dout + j] = acc;
    }
  }
  return y;
}

/** Float64 reference of multi-head self-attention (same maths as mhaF32). */
export function mhaF64(x, n, dModel, numHeads, p) {
  const d = dModel;
  const dh = d / numHeads;
  const q = linear64(x, n, d, p.wq, d, p.bq);
  const k = linear64(x, n, d, p.wk, d, p.bk);
  const v = linear64(x, n, d, p.wv, d, p.bv);
  const ctx = new Float64Array(n * d);
  const s = new Float64Array(n);
  for (let h = 0; h < numHeads; h++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < dh; c++) dot += q[i * d + h * dh + c] * k[j * d + h * dh + c];
        s[j] = dot / Math.sqrt(dh);
      }
      const max = Math.max(...s);
      let sum = 0;
      for (let j = 0; j < n; j++) {
        s[j] = Math.exp(s[j] - max);
        sum += s[j];
      }
      for (let c = 0; c < dh; c++) {
        let acc = 0;
        for (let j = 0; j < n; j++) acc += (s[j] / sum) * v[j * d + h * dh + c];
        ctx[i * d + h * dh + c] = acc;
      }
    }
  }
  return linear64(ctx, n, d, p.wo, d, p.bo);
}

/** Float64 reference GEMM. */
export const gemmF64 = (a, b, m, n, k) => linear64(a, m, k, b, n, null);
/** Max |y − ref| / max |ref| (normwise relative error; robust where ref is near zero). */
export function relError(y, ref) {
  if (!y || y.length !== ref.length) return Infinity;
  let maxErr = 0;
  let maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(y[i] - ref[i]);
    if (!(e <= maxErr)) maxErr = Number.isNaN(e) ? Infinity : e;
    const r = Math.abs(ref[i]);
    if (r > maxRef) maxRef = r;
  }
  return maxErr / (maxRef || 1);
}
