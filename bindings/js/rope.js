// `as.ropeExplain(args)`: the RoPE panel's numbers (issue 28) from the module's own RoPE tables. Layer: bindings/js.
// The policy of every function (validate.js): JS checks JS types, unknown keys, integer fit and array lengths; the
// C++ core (src/attention/rope_explain.h) checks every value and computes.
import { unwrap } from './errors.js';
import { f32, int, num, object, oneOf, validate } from './validate.js';

const vector = f32({ len: (a) => (a.headDim > 0 ? a.headDim : NaN), shape: (a) => `headDim = ${a.headDim}` });

const SPEC = {
  headDim: int(), theta: num(), partialRotaryFactor: num(), maxPositions: int({ optional: true }),
  scaling: object({
    type: oneOf('default', 'linear', 'dynamic', 'llama3', 'yarn'), factor: num(), lowFreqFactor: num(),
    highFreqFactor: num(), originalMaxPositions: int({ optional: true }), attentionFactor: num(), betaFast: num(),
    betaSlow: num(),
  }, { optional: true }),
  q: vector, k: vector, m: int(), n: int(), from: int({ optional: true }), to: int({ optional: true }),
};

/** Validates `input`, runs ropeExplain in `module` and returns its result (or throws the core's error). */
export function ropeExplain(module, input) {
  const args = validate('ropeExplain', SPEC, input);
  return unwrap(module.ropeExplain(args));
}
