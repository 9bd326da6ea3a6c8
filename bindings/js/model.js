// The model layer's JS face: `as.createModel(config)` -> Model with `run(text | { source, target }, options)`
// and `generate(input, options)`; the checkpoint and bundled-model loaders wrap their handles in the same
// class. Layer: bindings/js. This file checks only what C++ cannot see — JS types and unknown keys — and
// passes on only what the caller gave: every default, range check, enum spelling and message about values is
// the C++ core's (src/model/model_config.h), and `model.config` is read back from it. docs/model.md.
import { createOrThrow, fail, unwrap } from './errors.js';
import { Handle, live } from './handle.js';
import {
  bool, checkString, isPlainObject, num, scalar, sourceTarget, typeName, validate, wellFormed,
} from './validate.js';

const FN = 'createModel';

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

// An enum member: a string here, its spelling checked by the core ("architecture (\"gpt\") must be one of …").
const word = () => scalar((fn, name, v) => {
  if (v !== undefined && typeof v !== 'string') {
    fail('TypeError', `${fn}: ${name} must be a string, got ${typeName(v)}`);
  }
  return v;
});

// An integer the core range-checks; here only that it is a number and fits the core's int.
// `min` only words the message as the core words its range check (0: non-negative, 1: positive).
const whole = (min = 1) => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') fail('TypeError', `${fn}: ${name} must be a number, got ${typeName(v)}`);
  if (!Number.isInteger(v) || Math.abs(v) > 2 ** 31 - 1) {
    fail('RangeError', `${fn}: ${name} (${String(v)}) must be ${min === 0 ? 'a non-negative integer' : 'a positive integer'}`);
  }
  return v;
});

// A list of layer indices (run option `full`).
const layerList = () => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) && !(ArrayBuffer.isView(v) && !(v instanceof DataView))) {
    fail('TypeError', `${fn}: ${name} must be an array of layer indices, got ${typeName(v)}`);
  }
  const out = new Int32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    if (!Number.isInteger(v[i]) || v[i] < 0 || v[i] > 2 ** 31 - 1) {
      fail('RangeError', `${fn}: ${name}[${i}] (${String(v[i])}) must be a non-negative integer`);
    }
    out[i] = v[i];
  }
  return out;
});

// Run option `ablate`: [{ layer, head, mean? }, …] -> Int32Array [layer0, head0, layer1, head1, …] (with means:
// { heads, means: [Float32Array | null, …] }). The ranges and lengths are the core's ("run: ablate[0].layer (12)
// must be an integer from 0 to 11").
const headList = () => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) fail('TypeError', `${fn}: ${name} must be an array of { layer, head }, got ${typeName(v)}`);
  const out = new Int32Array(2 * v.length);
  const means = [];
  v.forEach((item, i) => {
    if (!isPlainObject(item)) fail('TypeError', `${fn}: ${name}[${i}] must be an object { layer, head }, got ${typeName(item)}`);
    for (const key of Object.keys(item)) {
      if (key !== 'layer' && key !== 'head' && key !== 'mean') fail('TypeError', `${fn}: unknown option '${name}[${i}].${key}'`);
    }
    if (item.mean !== undefined && !(item.mean instanceof Float32Array)) {
      fail('TypeError', `${fn}: ${name}[${i}].mean must be a Float32Array (headDim or n·headDim values), got ${typeName(item.mean)}`);
    }
    means.push(item.mean ?? null);
    ['layer', 'head'].forEach((key, j) => {
      const x = item[key];
      if (x === undefined) fail('TypeError', `${fn}: ${name}[${i}].${key} is required`);
      if (typeof x !== 'number') fail('TypeError', `${fn}: ${name}[${i}].${key} must be a number, got ${typeName(x)}`);
      if (!Number.isInteger(x) || Math.abs(x) > 2 ** 31 - 1) fail('RangeError', `${fn}: ${name}[${i}].${key} (${String(x)}) must be an integer`);
      out[2 * i + j] = x;
    });
  });
  return means.some((m) => m !== null) ? { heads: out, means } : out;
});

// Run option `heads`: 'all' | 'none' | [{ layer, head }, …] -> { heads: 'all' | 'none' | 'list', headList }.
const headsOption = () => (fn, name, v) => {
  if (v === undefined) return undefined;
  if (v === 'all' || v === 'none') return v;
  if (typeof v === 'string') fail('RangeError', `${fn}: ${name} (${JSON.stringify(v)}) must be 'all', 'none' or an array of { layer, head }`);
  if (!Array.isArray(v)) fail('TypeError', `${fn}: ${name} must be 'all', 'none' or an array of { layer, head }, got ${typeName(v)}`);
  return { list: headList()(fn, name, v) };
};

// Run option `summaries`: true | false | { topK } -> the top-k per row (a number), or undefined when off.
const summariesOption = () => (fn, name, v) => {
  if (v === undefined || v === false) return undefined;
  if (v === true) return 5;
  if (!isPlainObject(v)) fail('TypeError', `${fn}: ${name} must be a boolean or { topK }, got ${typeName(v)}`);
  for (const key of Object.keys(v)) {
    if (key !== 'topK') fail('TypeError', `${fn}: unknown option '${name}.${key}'`);
  }
  return v.topK === undefined ? 5 : whole(0)(fn, `${name}.topK`, v.topK);
};

const seed = () => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') fail('TypeError', `${fn}: ${name} must be a number, got ${typeName(v)}`);
  if (!Number.isSafeInteger(v) || v < 0) fail('RangeError', `${fn}: ${name} (${v}) must be a non-negative safe integer`);
  return v;
});

// embeddings: { [token]: number[] | Float32Array } -> tokens + one Float32Array per row (the core checks each
// row's length against dModel).
const embeddings = () => (fn, name, v) => {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v) || ArrayBuffer.isView(v)) {
    fail('TypeError', `${fn}: ${name} must be an object mapping tokens to arrays of dModel numbers, got ${typeName(v)}`);
  }
  const tokens = Object.keys(v);
  const rows = tokens.map((token) => {
    const row = v[token];
    const arg = `${name}[${JSON.stringify(token)}]`;
    if (!(Array.isArray(row) || (ArrayBuffer.isView(row) && !(row instanceof DataView)))) {
      fail('TypeError', `${fn}: ${arg} must be a Float32Array or an array of numbers, got ${typeName(row)}`);
    }
    for (let i = 0; i < row.length; i++) {
      if (typeof row[i] !== 'number') fail('TypeError', `${fn}: ${arg}[${i}] must be a number, got ${typeName(row[i])}`);
    }
    return Float32Array.from(row);
  });
  return { tokens, rows };
};

const bytes = () => (fn, name, v) => {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  fail('TypeError', `${fn}: ${name} must be a Uint8Array or an ArrayBuffer (safetensors bytes), got ${typeName(v)}`);
  return undefined;
};

const SPEC = {
  architecture: word(),
  tokenizer: tokenizer(),
  dModel: whole(),
  numHeads: whole(),
  numLayers: whole(0),
  numDecoderLayers: whole(),
  dFF: whole(),
  normFirst: bool(),
  activation: word(),
  eps: num(),
  positional: word(),
  positionalBase: num(),
  maxPositions: whole(),
  attention: word(),
  seed: seed(),
  embeddings: embeddings(),
  weights: bytes(),
  topK: whole(0),
  maxTokens: whole(),
};

const RUN_OPTIONS = {
  trace: word(),
  full: layerList(),
  fullSource: layerList(),
  positionalTable: whole(0),
  padTo: whole(),
  padMultiple: whole(0),
  topK: whole(0),
  logProbs: bool(),
  ablate: headList(),
  lens: whole(),
  heads: headsOption(),
  summaries: summariesOption(),
  layerOutputs: bool(),
};
const GENERATE_OPTIONS = { maxNewTokens: whole(0), numBeams: whole() };

// An encoder-decoder checkpoint's run input: { source, target = '' } or { source, targetIds } (API.md
// "Encoder–decoder checkpoints"); the ids' range is the core's.
function checkpointSourceTarget(input) {
  if (input.targetIds === undefined) return sourceTarget('run', { ...input, target: input.target ?? '' });
  for (const key of Object.keys(input)) {
    if (key !== 'source' && key !== 'targetIds') fail('TypeError', `run: unknown option '${key}'${key === 'target' ? ' (give target or targetIds, not both)' : ''}`);
  }
  checkString('run', 'source', input.source);
  const ids = input.targetIds;
  if (!Array.isArray(ids) && !(ids instanceof Int32Array)) {
    fail('TypeError', `run: targetIds must be an array of token ids or an Int32Array, got ${typeName(ids)}`);
  }
  for (let i = 0; i < ids.length; i++) {
    if (!Number.isInteger(ids[i]) || Math.abs(ids[i]) > 2 ** 31 - 1) fail('TypeError', `run: targetIds[${i}] must be an integer, got ${typeName(ids[i])}`);
  }
  return { source: wellFormed(input.source), targetIds: Int32Array.from(ids) };
}

/** A model built by `as.createModel(config)`, `as.loadPretrained(...)` or `as.loadBundled(name)`; free it with delete(). */
export class Model extends Handle {
  constructor(handle, info = {}) {
    super(handle, 'model');
    /** The model's config with every default applied, as the core holds it (weights, embeddings and tokenizer texts omitted). */
    this.config = Object.freeze({ ...handle.config(), ...info });
  }

  /**
   * Runs text through tokenizer, embeddings (+ positions) and every layer; returns every intermediate.
   * `input`: a string, or `{ source, target }` for encoder-decoder models (a string is then both).
   * `options.trace`: 'full' (default) | 'weights' (per layer only attention weights and outputs) | 'none'.
   * `options.full`: layer indices that keep the full trace whatever `trace` says (`fullSource`: the encoder's).
   * `options.positionalTable`: also return that many rows of the positional table (`positionalTable`).
   * `options.padTo` / `options.padMultiple`: pad with '<pad>' tokens (id -1) to this many positions / to the next
   * multiple (at least one pad), blocked as keys (key-padding mask): real rows equal the unpadded run's.
   * `options.topK`: size of `next` (default: the model's topK).
   * `options.logProbs`: also return `logProbs` [n − 1], ln p(token i+1 | tokens 0..i) under the next-token head
   * (−mean = Hugging Face's `labels=input_ids` loss; encoder-decoder: the target after `<s>`).
   * `options.ablate`: [{ layer, head }, …] (0-based, the main side's layers): those heads' weights and weights · V
   * are zero (Hugging Face's `head_mask` with zeros there), and everything after them reflects it. With
   * `mean` (a Float32Array of headDim values, or n·headDim: one row per position) the head's weights · V is that
   * instead (mean ablation: `as.headMeans(model, texts)` gives every head's mean).
   * `options.lens`: k — the logit lens: every `layers[i].lens` is `{ ids: Int32Array, probs: Float32Array, k }`,
   * [n, k] row-major, the top-k of softmax(LM head(final norm(layers[i].output))) at every position (the last
   * layer's last row equals `next`). A model without a language-model head throws saying so.
   * `options.heads`: which self-attention maps of the main side are computed. 'all' (default): as `trace` says.
   * 'none' or [{ layer, head }, …]: the layers not in `full` run a tiled (online-softmax) attention that never
   * holds an [n, n] matrix, so no layer keeps `attention.weights`; the listed maps alone come back in `result.heads`
   * ([{ layer, head, weights: Float32Array(n·n) }], in the order asked). Needs `trace: 'none'` (its default then).
   * `options.summaries`: true | { topK } (default 5): every self-attention layer gets `attention.summary` =
   * { entropy, distance, sink } (Float32Array per head, means over the text's rows) and { topK, topIds, topWeights }
   * ([numHeads, nReal, topK], each row's heaviest keys, id −1 where a row has fewer).
   * `options.layerOutputs`: whether every layer of the main side keeps `layers[i].output` [n, dModel]. Default true, but false with
   * `heads` 'none' or a list (16 MB a layer at 2,048 tokens of a Llama-3.2-1B shape); layers in `full` always do.
   */
  run(input, options = {}) {
    const h = live(this, 'run');
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      fail('TypeError', `run: options must be an object, got ${typeName(options)}`);
    }
    const opts = validate('run', RUN_OPTIONS, options);
    if (opts.ablate?.means) {
      opts.ablateMeans = opts.ablate.means;
      opts.ablate = opts.ablate.heads;
    }
    if (typeof opts.heads === 'object') {
      opts.headList = opts.heads.list;
      opts.heads = 'list';
    }
    let arg;
    if (typeof input === 'string') {
      arg = { text: wellFormed(input) };
    } else if (isPlainObject(input)) {
      arg = this.config.decoderStartTokenId !== undefined ? checkpointSourceTarget(input) : sourceTarget('run', input);
    } else {
      fail('TypeError', `run: text must be a string${this.config.architecture === 'encoder-decoder' ? ' or { source, target }' : ''}, got ${typeName(input)}`);
    }
    return unwrap(h.run(arg, opts));
  }

  /**
   * Greedy decoding (argmax, ties to the smaller id) with a key/value cache: a language model continues `input`
   * (the result holds only the new tokens), an encoder-decoder model reads it as the source and returns the
   * target; stops at the end token or after `options.maxNewTokens` (default 32). `options.numBeams` > 1: beam search
   * (encoder-decoder models; Hugging Face's BeamSearchScorer with the checkpoint's length_penalty and early_stopping).
   * @returns {{ text: string, ids: Int32Array, tokens: string[], stoppedAtEnd: boolean }}
   */
  generate(input, options = {}) {
    const h = live(this, 'generate');
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      fail('TypeError', `generate: options must be an object, got ${typeName(options)}`);
    }
    const { maxNewTokens = 32, numBeams = 1 } = validate('generate', GENERATE_OPTIONS, options);
    checkString('generate', 'input', input);
    return unwrap(h.generate(wellFormed(input), maxNewTokens, numBeams));
  }

  /** Names and shapes of the model's parameters: the safetensors names `weights` may hold (docs/model.md). */
  parameters() {
    return live(this, 'parameters').parameters();
  }
}

/** Checks `config`'s JS types, builds the model in wasm and wraps it (index.js: `as.createModel(config)`). */
export function createModel(module, config = {}) {
  const input = config === undefined ? {} : config;
  const args = validate(FN, SPEC, input);
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
    native.embeddingRows = args.embeddings.rows;
  }
  return new Model(createOrThrow(module.ModelHandle, (h) => h.load(native)));
}
