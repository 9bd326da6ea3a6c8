// The bundled trained models: `as.bundledModels` and `as.loadBundled(name)` (API.md "Bundled trained models").
// Layer: bindings/js. The files live in the package's models/<name>/ (config.json, model.safetensors), made by
// training/ (training/README.md). Node reads them from the package folder, browsers fetch them from the same
// origin, relative to this module — never from the network at large.
//
// Why the list is a constant here and not read from the files: `bundledModels` is synchronous in Node and in
// browsers, and reading every config.json (or an index) at createAttnScope() time would cost every user a
// request (and an offline failure mode) for a feature they may not use. tests/js/bundled.test.js checks that
// this list equals the models/*/config.json fields, so it cannot drift from the files.
import { createOrThrow, fail, unwrap } from './errors.js';
import { Handle, live } from './handle.js';
import { isNode } from './loader.js';
import { Model } from './model.js';
import {
  checkString, int, isPlainObject, sourceTarget, validate, wellFormed,
} from './validate.js';

const FN = 'loadBundled';

/** [{ name, task, architecture, description }]: config.json's fields of every shipped model. */
export const BUNDLED = Object.freeze([
  {
    name: 'dates',
    task: 'date rewriting to ISO YYYY-MM-DD',
    architecture: 'encoder-decoder',
    description: "Rewrites a date written in one of eight forms ('22 Nov 2026', 'November 22, 2026', 'Sunday, 22 November 2026', '22.11.2026', '2026/11/22', '2026年11月22日', ...) into ISO 2026-11-22. Look at the decoder's cross-attention: while it writes the year digits its queries look at the source year, while it writes the month it looks at the month name or number wherever that stands, and while it writes the day at the day digits, so the alignment moves across the source differently for every form. Self-attention in the encoder groups the characters of each field.",
  },
  {
    name: 'dates-bahdanau',
    task: 'date rewriting to ISO YYYY-MM-DD',
    architecture: 'gru-bahdanau',
    description: "The date-rewriting task of 'dates' with a GRU encoder-decoder and additive (Bahdanau) attention, as in d2l. Each decoder step's attention is one row over the source characters: while it writes the year it looks at the source year, then at the month name or number, then at the day, so the rows trace the alignment between the two date forms.",
  },
  {
    name: 'reverse',
    task: 'reverse a digit sequence',
    architecture: 'decoder',
    description: "Reverses a sequence of digits: the prompt '3 9 1 4 7>' continues with '74193'. Look at the last layer's attention: while writing the k-th output digit the model looks straight at the k-th digit from the end of the prompt, an anti-diagonal line through the prompt. Earlier layers locate the '>' separator, which tells each position how long the sequence is.",
  },
  {
    name: 'english',
    task: 'English character-level language model',
    architecture: 'decoder',
    description: "A small character-level language model trained on WordNet's dictionary glosses ('a tightly knit group ...'). Its heads mostly look at the last few characters: several put about a third of their weight on the previous character (L2 H3 the most, counting from 1), which is how it spells words; L2 H1 looks at the spaces, i.e. where the current word began, and L3 H1 at punctuation. Try a random string typed twice, e.g. 'xqzvjk xqzvjk': this model is too small and briefly trained to have formed induction heads, so the second copy does not look back at the first one (induction scores stay near 0.01).",
  },
  {
    name: 'english-rope',
    task: 'English character-level language model (Llama-style blocks)',
    architecture: 'decoder',
    description: "The same small character-level language model task as 'english' (WordNet's dictionary glosses, same corpus, steps and context), built like today's LLMs: RMSNorm, rotary position embeddings (no position table: a head's score depends on the offset between query and key), a SwiGLU feed-forward and 4 query heads that share 2 key/value heads (grouped-query attention: heads 1-2 read K/V head 1, heads 3-4 K/V head 2). Compare its heads with english's on the same text.",
  },
  {
    name: 'chinese-poems',
    task: 'Chinese character-level language model',
    architecture: 'decoder',
    description: "A small character-level language model trained on 43,000 regulated Tang poems (全唐诗, in simplified characters), one verse per line: five or seven characters and a comma or a full stop. Give it a first verse such as 床前明月光， and it continues in that metre, one verse per line, until the poem ends. Look at layer 3, head 4 (L3 H4): while it writes a character it looks at the character in the same place one line up (about 0.29 of its weight; attention spread evenly would give 0.04). The two lines of a couplet are parallel (对仗), word against word, so that character tells the model what kind of character comes next.",
  },
  {
    name: 'nadaraya-watson',
    task: '1-D kernel regression',
    architecture: 'kernel-regression',
    description: 'Nadaraya-Watson kernel regression, the simplest attention pooling: each query x attends to the 50 training inputs with weights softmax(-((x - x_j) * w)^2 / 2) and returns the weighted mean of their y. The heatmap is a diagonal band: a query looks at training points near it. With the learned w the band is narrower than with w = 1, so the prediction follows the noisy training points more closely (less smooth).',
  },
  {
    name: 'translate-en-zh',
    task: "English numbers, dates and quantities to Chinese",
    architecture: 'encoder-decoder',
    description: "A small translator trained on synthetic pairs (no public-domain English-Chinese parallel text could be installed here): numbers in digits, with thousands separators or in English words, dates and simple quantities, written in Chinese: '1,205' -> 一千二百零五, 'forty-two' -> 四十二, '3 May 2021' -> 2021年5月3日, '12 books' -> 十二本书. Look at the cross-attention while it writes a number: each numeral 一..九 looks at the source digit it reads, left to right, skipping the units 十百千万 and the zeros it reads as 零, so the alignment is a staircase through the digits; for a date it jumps to the year first, then back to the day.",
  },
].map((m) => Object.freeze(m)));

// One file of models/<name>/: Node reads it from the package folder, browsers fetch it from the same origin.
async function readModelFile(name, file, text) {
  const url = new URL(`../../models/${name}/${file}`, import.meta.url);
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    try {
      return await readFile(url, text ? 'utf8' : undefined);
    } catch (e) {
      return fail('Error', `${FN}: could not read ${url.pathname} (${e.code ?? e.message})`);
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    return fail('Error', `${FN}: could not load ${url.pathname} (${e.message})`);
  }
  if (!response.ok) fail('Error', `${FN}: could not load ${url.pathname} (HTTP ${response.status})`);
  return text ? response.text() : new Uint8Array(await response.arrayBuffer());
}

const GENERATE_OPTIONS = { maxNewTokens: int({ optional: true }) };

function options(fn, opts) {
  if (!isPlainObject(opts)) fail('TypeError', `${fn}: options must be an object`);
  return validate(fn, GENERATE_OPTIONS, opts);
}

/**
 * 'gru-bahdanau': d2l's GRU encoder-decoder with additive attention (src/model/gru_seq2seq.h); free it with
 * delete(). Shapes: T decoder steps, S source tokens, L GRU layers, H hidden size, V vocabulary.
 */
export class GruModel extends Handle {
  constructor(handle, info) {
    super(handle, 'model');
    /** { architecture: 'gru-bahdanau', vocabSize, embedSize, numHiddens, numLayers, attentionHidden, name, task }. */
    this.config = Object.freeze({ ...handle.config(), ...info });
  }

  /**
   * Every decoder step of one run. `input`: a string (the source, decoded greedily for at most
   * `options.maxNewTokens` steps, default 32) or `{ source, target }` (teacher forcing: the decoder reads
   * `<s>` + target, so the last step predicts `</s>`). Returns { sourceTokens, sourceIds, inputTokens, inputIds,
   * tokens, ids (each step's argmax), steps, sourceLength, numLayers, hiddenSize, vocabSize,
   * weights [T,S] (the alignment), scores [T,S], contexts [T,H], states [T,L,H], outputs [T,H], logits [T,V],
   * encoderOutputs [S,H], encoderStates [S,L,H], encoderFinal [L,H] }.
   */
  run(input, opts = {}) {
    const h = live(this, 'run');
    const { maxNewTokens = 32 } = options('run', opts);
    let arg;
    if (typeof input === 'string') {
      arg = { source: wellFormed(input) };
    } else if (isPlainObject(input)) {
      arg = sourceTarget('run', input);
    } else {
      fail('TypeError', `run: input must be a string or { source, target }, got ${input === null ? 'null' : typeof input}`);
    }
    return unwrap(h.run(arg, maxNewTokens));
  }

  /**
   * Greedy decoding (argmax, ties to the smaller id) until `</s>` or `options.maxNewTokens` (default 32):
   * { text, ids, tokens, stoppedAtEnd, sourceTokens, steps, sourceLength, alignment [steps, sourceLength] }
   * (`alignment` has a row for every step that ran, the one predicting `</s>` included).
   */
  generate(input, opts = {}) {
    const h = live(this, 'generate');
    const { maxNewTokens = 32 } = options('generate', opts);
    checkString('generate', 'input', input);
    return unwrap(h.generate(wellFormed(input), maxNewTokens));
  }
}

/**
 * 'kernel-regression': Nadaraya-Watson with the fitted bandwidth w; its data is config.json's (`config.w`,
 * `config.xTrain`, `config.yTrain`, `config.xTest`, `config.yTrue`, `config.reference`). Runs
 * `as.kernelRegression`; holds no wasm memory (delete() only marks it deleted).
 */
export class KernelRegressionModel extends Handle {
  constructor(as, c) {
    super(as, 'model');  // holds no wasm object: delete() only marks it deleted
    const f32 = (a) => Float32Array.from(a);
    this.config = Object.freeze({
      name: c.name, task: c.task, architecture: c.architecture, w: c.w,
      xTrain: f32(c.xTrain), yTrain: f32(c.yTrain), xTest: f32(c.xTest), yTrue: f32(c.yTrue),
      reference: c.reference,
    });
  }

  /**
   * `as.kernelRegression({ xTrain, yTrain, xQuery, w })` with the model's data: { weights [nQuery, nTrain], yPred }.
   * `xQuery` defaults to `config.xTest`; `options.w` overrides the fitted w (e.g. 1 for the untrained kernel).
   */
  run(xQuery = this.config.xTest, { w = this.config.w } = {}) {
    return live(this, 'run').kernelRegression({ xTrain: this.config.xTrain, yTrain: this.config.yTrain, xQuery, w });
  }

  /** The predictions alone: run(xQuery, options).yPred. */
  predict(xQuery = this.config.xTest, opts = {}) {
    return this.run(xQuery, opts).yPred;
  }

  /** Kernel regression has no tokens to generate. */
  generate() {
    live(this, 'generate');
    return fail('Error', 'generate: model cannot generate: kernel regression predicts numbers (use run or predict)');
  }
}

/** `as.loadBundled(name)`: the model's files read, then built in wasm (index.js passes the module and `as`). */
export async function loadBundled(module, as, name) {
  if (typeof name !== 'string') {
    fail('TypeError', `${FN}: name must be a string, got ${name === null ? 'null' : typeof name}`);
  }
  const entry = BUNDLED.find((m) => m.name === name);
  if (entry === undefined) {
    fail('RangeError', `${FN}: name (${JSON.stringify(name)}) is not a bundled model (${BUNDLED.map((m) => `'${m.name}'`).join(', ')})`);
  }
  const config = await readModelFile(name, 'config.json', true);
  const info = { name, task: entry.task };
  if (entry.architecture === 'kernel-regression') {
    let parsed;
    try {
      parsed = JSON.parse(config);
    } catch (e) {
      return fail('Error', `${FN}: config: not valid JSON (${e.message})`);
    }
    return new KernelRegressionModel(as, parsed);
  }
  const weights = await readModelFile(name, 'model.safetensors', false);
  if (entry.architecture === 'gru-bahdanau') {
    return new GruModel(createOrThrow(module.GruHandle, (h) => h.load(config, weights)), info);
  }
  return new Model(createOrThrow(module.ModelHandle, (h) => module.loadBundledInto(h, config, weights)), info);
}
