// attnscope's public ES module: createAttnScope() and the API.md surface, nothing else exported.
// Layer: bindings/js. Each method validates its argument object (validate.js), calls the matching
// Embind function with normalised typed arrays and unwraps the result (errors.js). Results are fresh
// JS-owned typed arrays. See ../../README.md and index.d.ts for the contract and examples.
import { loadModule } from './loader.js';
import { createOrThrow, fail, unwrap } from './errors.js';
import { Handle, live } from './handle.js';
import { createModel } from './model.js';
import { loadPretrained } from './pretrained.js';
import { loadTokenizer } from './tokenizer.js';
import {
  bool, checkString, f32, idArray, int, mask, num, object, oneOf, validate, wellFormed,
} from './validate.js';
import { BUNDLED, loadBundled } from './bundled.js';
import { readAttentionFile, openAttentionFile } from './attention_file.js';
import { runAnalysis } from './analysis.js';
import * as inside from './inside.js';
import { ropeExplain } from './rope.js';

// core/parallel.h kMaxThreads
const MAX_THREADS = 16;

// ---- shapes used in length messages

const dims = (...names) => (a) => names.map((n) => (typeof n === 'number' ? n : a[n]));
// NaN when a dimension is not positive: the length check is then skipped and the core reports the dimension.
const len = (...names) => (a) => dims(...names)(a).reduce((p, x) => (x > 0 ? p * x : NaN), 1);
const shape = (...names) => (a) => `${names.join('*')} = ${dims(...names)(a).join('*')}`;
const tensor = (names, opts = {}) => f32({ len: len(...names), shape: shape(...names), ...opts });
const maskOf = (...names) => mask({ len: len(...names), shape: shape(...names) });

// key defaults to query and value to key (API.md), which only fits when nk = nq and kdim = dModel.
function requireKeyUnlessSelf(fn, a, input) {
  if (input.key === undefined && (a.nk !== a.nq || a.kdim !== a.dModel)) {
    fail('TypeError', `${fn}: key is required when nk (${a.nk}) or kdim (${a.kdim}) differ from nq/dModel`);
  }
}

// ---- argument specs (API.md "Functions")

const SPEC = {
  positionalEncoding: {
    spec: { n: int(), d: int(), base: num() },
    outputs: (a) => [['PE', a.n * a.d, `n*d = ${a.n}*${a.d}`]],
  },
  softmax: {
    spec: { x: tensor(['rows', 'cols']), rows: int(), cols: int() },
  },
  layerNorm: {
    spec: {
      x: tensor(['n', 'd']), n: int(), d: int(),
      gamma: tensor(['d'], { optional: true }), beta: tensor(['d'], { optional: true }),
      eps: num(),
    },
  },
  simpleSelfAttention: {
    spec: { x: tensor(['n', 'd']), n: int(), d: int() },
    outputs: (a) => [['scores', a.n * a.n, `n*n = ${a.n}*${a.n}`]],
  },
  scaledDotProductAttention: {
    spec: {
      q: tensor(['nq', 'dk']), k: tensor(['nk', 'dk']), v: tensor(['nk', 'dv']),
      nq: int(), nk: int(), dk: int(), dv: int(),
      mask: maskOf('nq', 'nk'), causal: bool(), scale: num(),
    },
    outputs: (a) => [['scores', a.nq * a.nk, `nq*nk = ${a.nq}*${a.nk}`]],
  },
  multiHeadAttention: {
    spec: {
      query: tensor(['nq', 'dModel']), key: tensor(['nk', 'kdim'], { optional: true }),
      value: tensor(['nk', 'vdim'], { optional: true }),
      nq: int(), nk: int({ optional: true }), dModel: int(), numHeads: int(),
      kdim: int({ optional: true }), vdim: int({ optional: true }),
      wq: tensor(['dModel', 'dModel']), wk: tensor(['kdim', 'dModel']), wv: tensor(['vdim', 'dModel']),
      wo: tensor(['dModel', 'dModel']),
      bq: tensor(['dModel'], { optional: true }), bk: tensor(['dModel'], { optional: true }),
      bv: tensor(['dModel'], { optional: true }), bo: tensor(['dModel'], { optional: true }),
      mask: maskOf('nq', 'nk'), causal: bool(), needWeights: bool(),
    },
    defaults(a, input) {
      a.nk ??= a.nq;
      a.kdim ??= a.dModel;
      a.vdim ??= a.dModel;
      requireKeyUnlessSelf('multiHeadAttention', a, input);
    },
    outputs: (a) => [['weights', a.numHeads * a.nq * a.nk, `numHeads*nq*nk = ${a.numHeads}*${a.nq}*${a.nk}`]],
  },
  additiveAttention: {
    spec: {
      queries: tensor(['nq', 'dq']), keys: tensor(['nk', 'dk']), values: tensor(['nk', 'dv']),
      nq: int(), nk: int(), dq: int(), dk: int(), dv: int(), hidden: int(),
      wq: tensor(['dq', 'hidden']), wk: tensor(['dk', 'hidden']), wv: tensor(['hidden']),
      validLen: int({ optional: true }),
    },
    outputs: (a) => [['scores', a.nq * a.nk, `nq*nk = ${a.nq}*${a.nk}`]],
  },
  kernelRegression: {
    spec: {
      xTrain: f32(),
      yTrain: f32({ len: (a) => a.xTrain.length, shape: (a) => `nTrain = ${a.xTrain.length}, the length of xTrain` }),
      xQuery: f32(),
      w: num(),
    },
    outputs: () => [],
  },
};

// Prepared multi-head attention (createMultiHeadAttention / forward): the same specs and messages as
// multiHeadAttention, split into the construction arguments (weights, checked once) and the call ones.
const MHA_WEIGHT_KEYS = ['dModel', 'numHeads', 'kdim', 'vdim', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo'];
const MHA_CALL_KEYS = ['query', 'key', 'value', 'nq', 'nk', 'mask', 'causal', 'needWeights'];
const pick = (obj, keys) => Object.fromEntries(keys.map((k) => [k, obj[k]]));
SPEC.createMultiHeadAttention = {
  spec: pick(SPEC.multiHeadAttention.spec, MHA_WEIGHT_KEYS),
  defaults(a) {
    a.kdim ??= a.dModel;
    a.vdim ??= a.dModel;
  },
};
// forward's spec needs the module's dims ({ dModel, numHeads, kdim, vdim }) for lengths and messages.
function forwardHooks(dimsOf) {
  return {
    defaults(a, input) {
      Object.assign(a, dimsOf);
      a.nk ??= a.nq;
      requireKeyUnlessSelf('forward', a, input);
    },
    outputs: SPEC.multiHeadAttention.outputs,
  };
}
const FORWARD_SPEC = pick(SPEC.multiHeadAttention.spec, MHA_CALL_KEYS);

function layerSpec(fn, decoder) {
  const block = {
    wq: tensor(['dModel', 'dModel']), wk: tensor(['dModel', 'dModel']), wv: tensor(['dModel', 'dModel']),
    wo: tensor(['dModel', 'dModel']),
    bq: tensor(['dModel']), bk: tensor(['dModel']), bv: tensor(['dModel']), bo: tensor(['dModel']),
  };
  const norms = decoder ? [1, 2, 3] : [1, 2];
  const params = {
    ...(decoder ? { self: object(block), cross: object(block) } : block),
    w1: tensor(['dModel', 'dFF']), b1: tensor(['dFF']), w2: tensor(['dFF', 'dModel']), b2: tensor(['dModel']),
  };
  for (const i of norms) {
    params[`norm${i}Gamma`] = tensor(['dModel']);
    params[`norm${i}Beta`] = tensor(['dModel']);
  }
  const spec = {
    x: tensor(['n', 'dModel']), n: int(), dModel: int(), numHeads: int(), dFF: int(),
    params: object(params), normFirst: bool(), activation: oneOf('relu', 'gelu'), eps: num(),
    causal: bool(),
  };
  if (decoder) {
    Object.assign(spec, { memory: tensor(['m', 'dModel']), m: int(), memoryMask: maskOf('n', 'm') });
  } else {
    spec.mask = maskOf('n', 'n');
  }
  return {
    spec,
    outputs: (a) => [['weights', a.numHeads * a.n * (decoder ? Math.max(a.n, a.m) : a.n), 'numHeads*n*n']],
  };
}
SPEC.transformerEncoderLayer = layerSpec('transformerEncoderLayer', false);
SPEC.transformerDecoderLayer = layerSpec('transformerDecoderLayer', true);

const TOKENIZE_OPTIONS = { kind: oneOf('word', 'char') };

/** A GPT-2 byte-level BPE tokenizer; free it with delete(). */
class BpeTokenizer extends Handle {
  constructor(handle) {
    super(handle, 'tokenizer');
  }

  /** Number of entries in the vocabulary. */
  get vocabSize() {
    return live(this, 'vocabSize').vocabSize();
  }

  /** Encodes text into GPT-2 ids, the tokens' text and their [start, end) UTF-16 offsets. */
  encode(text) {
    checkString('encode', 'text', text);
    return unwrap(live(this, 'encode').encode(wellFormed(text)));
  }

  /** Decodes ids back into text (invalid UTF-8 byte sequences become U+FFFD, as GPT-2 does). */
  decode(ids) {
    const h = live(this, 'decode');
    const arr = idArray('decode', 'ids', ids);
    return unwrap(h.decode(arr)).text;
  }
}

/** A multi-head attention whose weights stay in wasm memory (see createMultiHeadAttention); free it with delete(). */
class MultiHeadAttention extends Handle {
  #dims;

  constructor(handle, dims) {
    super(handle, 'attention module');
    this.#dims = dims;
  }

  /** Same semantics, results and errors as multiHeadAttention with this module's weights. */
  forward(args) {
    const h = live(this, 'forward');
    const a = validate('forward', FORWARD_SPEC, args, forwardHooks(this.#dims));
    for (const k of ['dModel', 'numHeads', 'kdim', 'vdim']) delete a[k];
    return unwrap(h.forward(a));
  }
}


/** One loaded attnscope module. Every method is synchronous and takes one argument object. */
class AttnScope {
  #m;

  constructor(module, simd, threads, relaxedSimd, startup) {
    this.#m = module;
    /** True when the SIMD128 build is the one running. */
    this.simd = simd;
    /** Threads the computations use (1: the single-threaded build). */
    this.threads = threads;
    /** True when the fused multiply-add (relaxed SIMD) GEMM micro-kernel runs. */
    this.relaxedSimd = relaxedSimd;
    /**
     * How the build running was chosen: `fallbacks`, the builds that failed to start before it ({ build, reason },
     * build 'simd-threads' | 'simd' | 'scalar'), and `singleThread`, why one thread runs (null when several do).
     */
    this.startup = Object.freeze({
      fallbacks: Object.freeze(startup.fallbacks.map((f) => Object.freeze({ ...f }))),
      singleThread: startup.singleThread,
    });
    /** The package version. */
    this.version = module.version();
    Object.freeze(this);
  }

  #call(fn, input) {
    const { spec, ...hooks } = SPEC[fn];
    const args = validate(fn, spec, input, hooks);
    return unwrap(this.#m[fn](args));
  }

  positionalEncoding(args) { return this.#call('positionalEncoding', args); }

  softmax(args) { return this.#call('softmax', args); }

  layerNorm(args) { return this.#call('layerNorm', args); }

  simpleSelfAttention(args) { return this.#call('simpleSelfAttention', args); }

  scaledDotProductAttention(args) { return this.#call('scaledDotProductAttention', args); }

  multiHeadAttention(args) { return this.#call('multiHeadAttention', args); }

  additiveAttention(args) { return this.#call('additiveAttention', args); }

  kernelRegression(args) { return this.#call('kernelRegression', args); }

  transformerEncoderLayer(args) { return this.#call('transformerEncoderLayer', args); }

  transformerDecoderLayer(args) { return this.#call('transformerDecoderLayer', args); }

  // ---- looking inside (bindings/js/analysis.js; README "Looking inside")

  /** Per-head previous-token, duplicate-token, induction and sink scores from attention weights. */
  headScores(args) { return runAnalysis(this.#m, 'headScores', args); }

  /** [bos] + R + R with R `length` seeded random ids: the input the induction score expects. */
  repeatedTokens(args) { return runAnalysis(this.#m, 'repeatedTokens', args); }

  /** Attention flow (Abnar & Zuidema 2020): max-flow from output positions to input positions across layers. */
  attentionFlow(args) { return runAnalysis(this.#m, 'attentionFlow', args); }

  /** AttentionViz's joint query/key map, projected on two principal components. */
  qkMap(args) { return runAnalysis(this.#m, 'qkMap', args); }

  /** Every head's mean output over texts (mean ablation values), [numLayers, numHeads, headDim]. */
  headMeans(model, texts) { return inside.headMeans(this.#m, model, texts); }

  /** Activation patching clean → corrupted per head or per residual position (bindings/js/inside.js). */
  patch(model, args) { return inside.patch(this.#m, model, args); }

  /** Every head ablated in turn, ranked by its effect on the loss or a token's logit (bindings/js/inside.js). */
  ablationSweep(model, text, args) { return inside.ablationSweep(this.#m, model, text, args); }

  /** Direct logit attribution per head at the last position toward a token (bindings/js/inside.js). */
  logitAttribution(model, text, token) { return inside.logitAttribution(this.#m, model, text, token); }

  /** RoPE for one q and k (issue 28): rotated vectors, angles m·θᵢ, and the score against the offset m − n. */
  ropeExplain(args) { return ropeExplain(this.#m, args); }

  /** Splits text into word or character tokens with [start, end) UTF-16 offsets. */
  tokenize(text, options = {}) {
    checkString('tokenize', 'text', text);
    if (options === null || typeof options !== 'object') fail('TypeError', 'tokenize: options must be an object');
    const { kind = 'word' } = validate('tokenize', TOKENIZE_OPTIONS, options);
    const out = unwrap(this.#m.tokenize(wellFormed(text), kind));
    return { tokens: out.tokens, offsets: out.offsets };
  }

  /** Builds a GPT-2 byte-level BPE tokenizer from encoder.json (string or object) and vocab.bpe text. */
  createBpeTokenizer(args) {
    const fn = 'createBpeTokenizer';
    if (args === null || typeof args !== 'object') fail('TypeError', `${fn}: expected one argument object`);
    for (const key of Object.keys(args)) {
      if (key !== 'vocab' && key !== 'merges') fail('TypeError', `${fn}: unknown option '${key}'`);
    }
    let { vocab } = args;
    if (vocab === undefined) fail('TypeError', `${fn}: vocab is required`);
    if (args.merges === undefined) fail('TypeError', `${fn}: merges is required`);
    if (vocab !== null && typeof vocab === 'object') vocab = JSON.stringify(vocab);
    checkString(fn, 'vocab', vocab);
    checkString(fn, 'merges', args.merges);
    return new BpeTokenizer(createOrThrow(this.#m.BpeHandle, (h) => h.load(vocab, args.merges)));
  }

  /**
   * Prepares a multi-head attention: the weights (validated once, finiteness included) are copied into wasm
   * memory and kept there; forward() then takes only the inputs. Free it with delete().
   */
  createMultiHeadAttention(args) {
    const fn = 'createMultiHeadAttention';
    const { spec, ...hooks } = SPEC[fn];
    const a = validate(fn, spec, args, hooks);
    const handle = createOrThrow(this.#m.MhaHandle, (h) => h.load(a));
    return new MultiHeadAttention(handle, { dModel: a.dModel, numHeads: a.numHeads, kdim: a.kdim, vdim: a.vdim });
  }

  /** Builds a transformer pipeline; see docs/model.md. Free it with delete(). */
  createModel(config) { return createModel(this.#m, config); }

  /**
   * Loads a Hugging Face GPT-2 or BERT checkpoint: `{ config, weights, tokenizer, onProgress }` (API.md
   * "Pretrained checkpoints"); resolves to a Model (run / generate / parameters / delete).
   */
  loadPretrained(options) { return loadPretrained(this.#m, options); }

  /**
   * The config.model_type values whose layers loadPretrained's streamWeights keeps in the file (the decoder-only
   * families; any other is an Error naming streamWeights), from the core that decides it: a fresh array each time.
   */
  get streamableModelTypes() { return this.#m.streamableModelTypes(); }

  /**
   * Loads a Hugging Face tokenizer.json on its own (text or parsed object): `encode(text, { addSpecialTokens })`
   * gives the ids Hugging Face's tokenizers library gives; free it with delete().
   */
  loadTokenizer(tokenizerJson) { return loadTokenizer(this.#m, tokenizerJson); }

  /** Wasm heap facts: { heapSize, allocated } in bytes (for leak checks). */
  memoryStats() { return this.#m.memoryStats(); }

  // ---- bundled trained models (bindings/js/bundled.js; API.md "Bundled trained models")

  /** The models shipped in the package: [{ name, task, architecture, description }] (fresh copies). */
  get bundledModels() { return BUNDLED.map((m) => ({ ...m })); }

  /**
   * Loads a bundled model by name from the package (Node) or the same origin (browsers): a transformer Model
   * ('encoder-decoder', 'decoder'), a GRU model ('gru-bahdanau') or a kernel-regression model; free it with delete().
   * @example
   *   const dates = await as.loadBundled('dates');
   *   dates.generate('November 22, 2026').text;  // '2026-11-22'
   */
  loadBundled(name) { return loadBundled(this.#m, this, name); }

  // ---- attention computed elsewhere (bindings/js/attention_file.js; API.md "Attention files")

  /**
   * Reads an attention file (safetensors: attentions.<i> [heads, n, n], optional cross_attentions.<i>, tokens in
   * __metadata__; python/attnscope.save writes one) from a Uint8Array or ArrayBuffer: { tokens, sourceTokens?,
   * model?, n, numHeads, layers: [{ attention: { weights, numHeads }, cross?: { weights, numHeads } }] }.
   */
  readAttentionFile(bytes) { return readAttentionFile(this.#m, bytes); }

  /**
   * Opens an attention file lazily: `source` is a Blob (a File) or { size, read(begin, end) → Promise<Uint8Array> }.
   * Only the header is read now; head(layer, head, attention?) reads and checks that head's bytes alone.
   */
  openAttentionFile(source) {
    if (typeof Blob !== 'undefined' && source instanceof Blob) {
      const blob = source;
      source = { size: blob.size, read: async (a, b) => new Uint8Array(await blob.slice(a, b).arrayBuffer()) };
    } else if (!source || typeof source.read !== 'function' || !Number.isSafeInteger(source.size) || source.size < 0) {
      return Promise.reject(new TypeError('openAttentionFile: source must be a Blob or { size, read(begin, end) }'));
    }
    return openAttentionFile(this.#m, source);
  }
}

/**
 * Loads attnscope. `options.simd`: 'auto' (default: SIMD128 when the engine supports it), true or false.
 * `options.threads`: 'auto' (default: up to 4 cores in Node and cross-origin-isolated pages, else 1) or a
 * positive integer (at most 16). `options.relaxedSimd`: 'auto' (default: the fused multiply-add GEMM kernel
 * where the engine validates relaxed SIMD and the SIMD128 build runs), true (require it: throws where it
 * cannot run) or false.
 * @example
 *   import { createAttnScope } from 'attnscope';
 *   const as = await createAttnScope();
 *   const { weights } = as.softmax({ x: new Float32Array([1, 2, 3]), rows: 1, cols: 3 });
 */
export async function createAttnScope(options = {}) {
  if (options === null || typeof options !== 'object') fail('TypeError', 'createAttnScope: options must be an object');
  for (const key of Object.keys(options)) {
    if (key !== 'simd' && key !== 'threads' && key !== 'relaxedSimd') {
      fail('TypeError', `createAttnScope: unknown option '${key}'`);
    }
  }
  const { simd = 'auto', threads = 'auto', relaxedSimd = 'auto' } = options;
  if (simd !== 'auto' && simd !== true && simd !== false) {
    fail('TypeError', `createAttnScope: simd (${String(simd)}) must be 'auto', true or false`);
  }
  if (threads !== 'auto' && !(Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS)) {
    const shown = typeof threads === 'string' ? `'${threads}'` : String(threads);
    fail(typeof threads === 'number' ? 'RangeError' : 'TypeError',
      `createAttnScope: threads (${shown}) must be 'auto' or an integer from 1 to ${MAX_THREADS}`);
  }
  if (relaxedSimd !== 'auto' && relaxedSimd !== true && relaxedSimd !== false) {
    fail('TypeError', `createAttnScope: relaxedSimd (${String(relaxedSimd)}) must be 'auto', true or false`);
  }
  const { module, simd: useSimd, threads: useThreads, relaxedSimd: useRelaxed, ...startup } = await loadModule(simd, threads, relaxedSimd);
  return new AttnScope(module, useSimd, useThreads, useRelaxed, startup);
}
