// Shared helpers for the node --test suites: load the module under test (the same files run against
// the SIMD and the scalar artifact: ATTNSCOPE_SIMD=true|false, default 'auto'), read fixtures, compare.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createAttnScope } from 'attnscope';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const fixturesDir = path.join(root, 'tests', 'fixtures');

const simdEnv = process.env.ATTNSCOPE_SIMD;
export const SIMD = simdEnv === 'true' ? true : simdEnv === 'false' ? false : 'auto';

/**
 * Runs `source` (an ES module that writes one JSON value to stdout) in a child `node --experimental-wasm-relaxed-simd`
 * from the source root (plain Node 20 rejects the relaxed module), asserts it exited 0, and returns the parsed value.
 */
export function runRelaxedChild(source, { maxBuffer = 64 << 20 } = {}) {
  const child = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', source],
    { cwd: root, timeout: 120_000, encoding: 'utf8', maxBuffer });
  assert.equal(child.status, 0, `child exited ${child.status}: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

let shared;
/** One module instance per test file (instantiation costs ~10 ms). */
export function loadAs() {
  shared ??= createAttnScope({ simd: SIMD });
  return shared;
}

/** Every fixture JSON for `fn` (or all): [{ name, function, args, expected, atol, rtol }]. */
export function fixtures(fn) {
  return readdirSync(fixturesDir)
    .filter((f) => f.endsWith('.json') && f.includes('__') && (!fn || f.startsWith(`${fn}__`)))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), ...JSON.parse(readFileSync(path.join(fixturesDir, f), 'utf8')) }));
}

const MASKS = new Set(['mask', 'memoryMask']);
const INTS = new Set(['n', 'm', 'd', 'nq', 'nk', 'dk', 'dv', 'dq', 'rows', 'cols', 'dModel', 'numHeads', 'kdim', 'vdim',
  'dFF', 'hidden', 'validLen']);

/** Fixture args (JSON lists) -> the API's typed arrays; nested params objects recurse. */
export function toTyped(args) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    if (Array.isArray(v)) out[k] = MASKS.has(k) ? Uint8Array.from(v) : Float32Array.from(v.map(Number));
    else if (v !== null && typeof v === 'object') out[k] = toTyped(v);
    else out[k] = v;
  }
  return out;
}

/**
 * Asserts |got - want| <= atol + rtol*|want| element-wise (equal infinities pass), and reports the max abs
 * error, the first failing index and a few pairs on failure. Returns the max abs error.
 */
export function assertClose(got, want, { atol = 1e-5, rtol = 1e-4, what = 'tensor' } = {}) {
  const w = Array.from(want, Number);
  assert.equal(got.length, w.length, `${what}: length ${got.length} != ${w.length}`);
  let maxAbs = 0;
  let firstBad = -1;
  for (let i = 0; i < w.length; i++) {
    const g = got[i];
    if (g === w[i]) continue;
    const err = Math.abs(g - w[i]);
    if (!(err <= atol + rtol * Math.abs(w[i]))) { if (firstBad < 0) firstBad = i; }
    if (Number.isFinite(err)) maxAbs = Math.max(maxAbs, err);
    else maxAbs = Infinity;
  }
  if (firstBad >= 0) {
    const pairs = [];
    for (let i = firstBad; i < Math.min(w.length, firstBad + 4); i++) pairs.push(`[${i}] got ${got[i]} want ${w[i]}`);
    assert.fail(`${what}: max abs error ${maxAbs} exceeds ${atol} + ${rtol}*|want|; first failure at ${firstBad}: ${pairs.join('; ')}`);
  }
  return maxAbs;
}

export function assertNoNaN(arr, what) {
  const i = Array.prototype.findIndex.call(arr, (x) => Number.isNaN(x));
  assert.equal(i, -1, `${what}: NaN at ${i}`);
}

/** n reproducible uniform(-scale, scale) floats (xorshift32, no dependency). */
export function randomF32(n, seed, scale = 1) {
  // xorshift32 -> uniform(-scale, scale): reproducible without a dependency
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 2 ** 32 * 2 - 1) * scale;
  }
  return out;
}

/** float64 multi-head attention (weights [in, out], no biases), as the API defines it: the output [n, d]. */
export function mhaReference(x, n, d, h, w) {
  const proj = (m) => {
    const y = new Float64Array(n * d);
    for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) { const xv = x[i * d + k]; for (let j = 0; j < d; j++) y[i * d + j] += xv * m[k * d + j]; }
    return y;
  };
  const q = proj(w.wq), k = proj(w.wk), v = proj(w.wv);
  const hd = d / h, concat = new Float64Array(n * d), s = new Float64Array(n);
  for (let hh = 0; hh < h; hh++) {
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let c = 0; c < hd; c++) acc += q[i * d + hh * hd + c] * k[j * d + hh * hd + c];
        s[j] = acc / Math.sqrt(hd);
        max = Math.max(max, s[j]);
      }
      let sum = 0;
      for (let j = 0; j < n; j++) { s[j] = Math.exp(s[j] - max); sum += s[j]; }
      for (let j = 0; j < n; j++) for (let c = 0; c < hd; c++) concat[i * d + hh * hd + c] += (s[j] / sum) * v[j * d + hh * hd + c];
    }
  }
  const out = new Float64Array(n * d);
  for (let i = 0; i < n; i++) for (let k2 = 0; k2 < d; k2++) for (let j = 0; j < d; j++) out[i * d + j] += concat[i * d + k2] * w.wo[k2 * d + j];
  return out;
}
