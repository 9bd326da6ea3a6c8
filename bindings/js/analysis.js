// "Looking inside" (issue 27): headScores, repeatedTokens, attentionFlow and qkMap over attention weights, query/key
// vectors and token ids. Layer: bindings/js. The same policy as every function (validate.js): JS checks JS types,
// unknown keys, integer fit and array lengths; the C++ core (src/attention/analysis.h) checks every value and
// computes. Per-layer arrays are concatenated here into one [L, H, n, n] Float32Array for the core.
import { fail, unwrap } from './errors.js';
import { bool, f32, int, validate, typeName } from './validate.js';

const INT32_MAX = 0x7fffffff;
const headLen = (a) => (a.numHeads > 0 && a.n > 0 ? a.numHeads * a.n * a.n : NaN);
const headShape = (a) => `numHeads*n*n = ${a.numHeads}*${a.n}*${a.n}`;
const layerTensor = f32({ len: headLen, shape: headShape });

/**
 * An array of per-layer [H, n, n] tensors (or, with `single`, one such tensor for one layer): returns
 * { data, numLayers } with data the layers concatenated.
 */
const layerList = ({ single = false } = {}) => (fn, name, v, args) => {
  if (v === undefined || v === null) fail('TypeError', `${fn}: ${name} is required`);
  const isList = Array.isArray(v) && (v.length === 0 || typeof v[0] !== 'number');
  if (!isList) {
    if (single) return { data: layerTensor(fn, name, v, args), numLayers: 1 };
    fail('TypeError', `${fn}: ${name} must be an array of Float32Array (one [H, n, n] per layer), got ${typeName(v)}`);
  }
  if (v.length === 0) fail('RangeError', `${fn}: ${name} must not be empty`);
  const parts = v.map((x, l) => layerTensor(fn, `${name}[${l}]`, x, args));
  const data = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return { data, numLayers: v.length };
};

/** Token ids: an Int32Array or an array of integers, `n` of them. */
const ids = () => (fn, name, v, args) => {
  if (v === undefined || v === null) return undefined;
  if (!(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView)))) {
    fail('TypeError', `${fn}: ${name} must be an Int32Array or an array of integers, got ${typeName(v)}`);
  }
  if (args.n > 0 && v.length !== args.n) fail('RangeError', `${fn}: ${name} must have length ${args.n} (n), got ${v.length}`);
  for (let i = 0; i < v.length; i++) {
    if (!Number.isInteger(v[i]) || Math.abs(v[i]) > INT32_MAX) {
      fail('RangeError', `${fn}: ${name}[${i}] (${String(v[i])}) must be an integer id`);
    }
  }
  return Int32Array.from(v);
};

const SPEC = {
  headScores: {
    spec: {
      weights: layerList({ single: true }), numHeads: int(), n: int(), ids: ids(), period: int({ optional: true }),
    },
    prepare: ({ weights, ...a }) => ({ ...a, weights: weights.data, numLayers: weights.numLayers }),
  },
  repeatedTokens: {
    spec: { vocabSize: int({ max: INT32_MAX }), length: int(), seed: int({ max: INT32_MAX }), bos: int({ optional: true, max: INT32_MAX }) },
    outputs: (a) => [['ids', 2 * a.length + 1, `2*length+1 = 2*${a.length}+1`]],
  },
  attentionFlow: {
    spec: { layers: layerList(), numHeads: int(), n: int(), output: int({ optional: true }) },
    outputs: (a) => [['flow', a.n * a.n, `n*n = ${a.n}*${a.n}`]],
    prepare: ({ layers, ...a }) => ({ ...a, layers: layers.data, numLayers: layers.numLayers }),
  },
  qkMap: {
    spec: {
      q: f32({ len: (a) => (a.nq > 0 && a.d > 0 ? a.nq * a.d : NaN), shape: (a) => `nq*d = ${a.nq}*${a.d}` }),
      k: f32({ len: (a) => (a.nk > 0 && a.d > 0 ? a.nk * a.d : NaN), shape: (a) => `nk*d = ${a.nk}*${a.d}` }),
      nq: int(), nk: int(), d: int(), normalize: bool(),
    },
  },
};

/** Validates `input` for analysis `fn`, runs it in `module` and returns its result (or throws the core's error). */
export function runAnalysis(module, fn, input) {
  const { spec, prepare, ...hooks } = SPEC[fn];
  const args = validate(fn, spec, input, hooks);
  return unwrap(module[fn](prepare ? prepare(args) : args));
}
