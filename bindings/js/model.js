// The model pipeline: `as.createModel(config)` -> Model with `run(text | { source, target }, options)`.
// Layer: bindings/js. Validates and normalises the config here (types, unknown options, defaults); the C++
// core (src/model/transformer.h) repeats the range checks and owns the messages for sizes, divisibility,
// weights and token limits. Design, defaults, weight naming and the result shape: docs/model.md.
import { fail, unwrap } from './errors.js';
import {
  bool, checkString, int, num, oneOf, scalar, validate,
} from './validate.js';

const FN = 'createModel';

function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'Array';
  if (ArrayBuffer.isView(v)) return v.constructor.name;
  return typeof v;
}

// tokenizer: 'word' | 'char' | { kind: 'bpe', vocab, merges }
const tokenizer = () => scalar((fn, name, v) => {
  if (v === undefined || v === 'word' || v === 'char') return v;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const key of Object.keys(v)) {
      if (!['kind', 'vocab', 'merges'].includes(key)) fail('TypeError', `${fn}: unknown option 'tokenizer.${key}'`);
    }
    if (v.kind !== 'bpe') fail('RangeError', `${fn}: tokenizer.kind (${JSON.stringify(v.kind)}) must be 'bpe'`);
    let { vocab } = v;
    if (vocab === undefined) fail('TypeError', `${fn}: tokenizer.vocab is required`);
    if (v.merges === undefined) fail('TypeError', `${fn}: tokenizer.merges is required`);
    if (vocab !== null && typeof vocab === 'object') vocab = JSON.stringify(vocab);
    checkString(fn, 'tokenizer.vocab', vocab);
    checkString(fn, 'tokenizer.merges', v.merges);
    return { kind: 'bpe', vocab, merges: v.merges };
  }
  fail(typeof v === 'string' ? 'RangeError' : 'TypeError',
    `${fn}: tokenizer (${typeof v === 'string' ? JSON.stringify(v) : typeName(v)}) must be 'word', 'char' or { kind: 'bpe', vocab, merges }`);
  return undefined;
});

const seed = () => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') fail('TypeError', `${fn}: ${name} must be a number, got ${typeName(v)}`);
  if (!Number.isSafeInteger(v) || v < 0) fail('RangeError', `${fn}: ${name} (${v}) must be a non-negative safe integer`);
  return v;
});

// embeddings: { [token]: number[] | Float32Array } with dModel entries each -> tokens + one flat Float32Array.
const embeddings = () => (fn, name, v, args) => {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v) || ArrayBuffer.isView(v)) {
    fail('TypeError', `${fn}: ${name} must be an object mapping tokens to arrays of dModel numbers, got ${typeName(v)}`);
  }
  const tokens = Object.keys(v);
  const values = new Float32Array(tokens.length * args.dModel);
  tokens.forEach((token, t) => {
    const row = v[token];
    const arg = `${name}[${JSON.stringify(token)}]`;
    if (!(Array.isArray(row) || (ArrayBuffer.isView(row) && !(row instanceof DataView)))) {
      fail('TypeError', `${fn}: ${arg} must be a Float32Array or an array of numbers, got ${typeName(row)}`);
    }
    if (row.length !== args.dModel) {
      fail('RangeError', `${fn}: ${arg} must have length ${args.dModel} (dModel = ${args.dModel}), got ${row.length}`);
    }
    for (let i = 0; i < row.length; i++) {
      if (typeof row[i] !== 'number' || !Number.isFinite(row[i])) {
        fail('RangeError', `${fn}: ${arg}[${i}] (${String(row[i])}) must be finite`);
      }
      values[t * args.dModel + i] = row[i];
    }
  });
  return { tokens, values };
};

const bytes = () => (fn, name, v) => {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  fail('TypeError', `${fn}: ${name} must be a Uint8Array or an ArrayBuffer (safetensors bytes), got ${typeName(v)}`);
  return undefined;
};

const SPEC = {
  architecture: oneOf('encoder', 'decoder', 'encoder-decoder'),
  tokenizer: tokenizer(),
  dModel: int({ optional: true }),
  numHeads: int({ optional: true }),
  numLayers: int({ min: 0, optional: true }),
  numDecoderLayers: int({ optional: true }),
  dFF: int({ optional: true }),
  normFirst: bool(),
  activation: oneOf('relu', 'gelu'),
  eps: num({ positive: true }),
  positional: oneOf('sinusoidal', 'learned', 'none'),
  positionalBase: num({ positive: true }),
  maxPositions: int({ optional: true }),
  attention: oneOf('learned', 'simple'),
  seed: seed(),
  embeddings: embeddings(),
  weights: bytes(),
  topK: int({ min: 0, optional: true }),
  maxTokens: int({ optional: true }),
};

const DEFAULTS = {
  architecture: 'encoder', tokenizer: 'word', dModel: 16, numHeads: 2, numLayers: 2, normFirst: false,
  activation: 'relu', eps: 1e-5, positional: 'sinusoidal', positionalBase: 10000, maxPositions: 512,
  attention: 'learned', seed: 42, topK: 5, maxTokens: 1024,
};

const RUN_OPTIONS = { trace: oneOf('full', 'weights', 'none'), padTo: int({ optional: true, max: 65536 }) };

// JS strings may hold lone surrogates; the core takes UTF-8 (same rule as tokenize()).
const wellFormed = (s) => (typeof s.toWellFormed === 'function' ? s.toWellFormed() : s);

/** A transformer built by `as.createModel(config)`; free it with delete(). */
export class Model {
  #handle;

  constructor(handle, config) {
    this.#handle = handle;
    /** The normalised config (every default applied; weights, embeddings and BPE texts omitted). */
    this.config = Object.freeze(config);
  }

  #live(fn) {
    if (this.#handle === null) fail('Error', `${fn}: this model has been deleted`);
    return this.#handle;
  }

  /**
   * Runs text through tokenizer, embeddings (+ positions) and every layer; returns every intermediate.
   * `input`: a string, or `{ source, target }` for architecture 'encoder-decoder' (a string is then both).
   * `options.trace`: 'full' (default) | 'weights' (per layer only attention weights and outputs) | 'none'.
   * `options.padTo`: pad with '<pad>' tokens (id -1) to this many positions, blocked as keys (key-padding
   * mask): real rows equal the unpadded run's; pad query rows attend to the real keys. Encoder-decoder: both sides.
   */
  run(input, options = {}) {
    const h = this.#live('run');
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      fail('TypeError', `run: options must be an object, got ${typeName(options)}`);
    }
    const { trace = 'full', padTo = 0 } = validate('run', RUN_OPTIONS, options);
    let arg;
    if (typeof input === 'string') {
      arg = { text: wellFormed(input) };
    } else if (input !== null && typeof input === 'object' && !Array.isArray(input) && !ArrayBuffer.isView(input)) {
      for (const key of Object.keys(input)) {
        if (key !== 'source' && key !== 'target') fail('TypeError', `run: unknown option '${key}'`);
      }
      checkString('run', 'source', input.source);
      checkString('run', 'target', input.target);
      arg = { source: wellFormed(input.source), target: wellFormed(input.target) };
    } else {
      fail('TypeError', `run: text must be a string${this.config.architecture === 'encoder-decoder' ? ' or { source, target }' : ''}, got ${typeName(input)}`);
    }
    return unwrap(h.run(arg, trace, padTo));
  }

  /** Names and shapes of the model's parameters: the safetensors names `weights` may hold (docs/model.md). */
  parameters() {
    return this.#live('parameters').parameters();
  }

  /** Frees the wasm memory of this model; later calls throw. Calling it twice is harmless. */
  delete() {
    if (this.#handle !== null) {
      this.#handle.delete();
      this.#handle = null;
    }
  }
}

/** Validates `config`, builds the model in wasm and wraps it (index.js: `as.createModel(config)`). */
export function createModel(module, config = {}) {
  const input = config === undefined ? {} : config;
  const args = validate(FN, SPEC, input, {
    defaults(a) {
      for (const [k, v] of Object.entries(DEFAULTS)) a[k] ??= v;
      a.dFF ??= 4 * a.dModel;
      a.numDecoderLayers ??= a.numLayers;
    },
  });
  const native = { ...args };
  const tok = args.tokenizer;
  if (typeof tok === 'object') {
    native.tokenizer = 'bpe';
    native.bpeVocab = tok.vocab;
    native.bpeMerges = tok.merges;
  }
  delete native.embeddings;
  if (args.embeddings !== undefined) {
    native.embeddingTokens = args.embeddings.tokens;
    native.embeddingValues = args.embeddings.values;
  }
  const handle = new module.ModelHandle();
  const err = handle.load(native);
  if (err !== null) {
    handle.delete();
    unwrap(err);
  }
  const shown = {};
  for (const key of Object.keys(SPEC)) {
    if (key !== 'weights' && key !== 'embeddings') shown[key] = args[key];
  }
  if (typeof tok === 'object') shown.tokenizer = 'bpe';
  return new Model(handle, shown);
}
