// Turns the page state into one trace — every number the views draw (layer: web, runs in the worker; no
// DOM, no model math). Text mode: one `model.run(input, options)` (bindings/js/model.js) that asks for
// exactly what is on screen: attention weights of every layer (heatmaps, model view, rollout), the full
// trace of the one layer the attention detail and step-by-step view show (`full: [layer]`), the PE rows
// the positional view plots (`positionalTable`), and padding decided by the core (`padMultiple: 8` or
// `padTo`). The model is cached while only the text or the options change. Worked example: a one-layer
// 'simple' model over the six (editable) 3-d embeddings, so the same views draw the core's trace.
// Loaded models (state.model): a bundled one by name (`as.loadBundled`) or the user's own checkpoint
// (`as.loadPretrained` on the files they chose — read here, in the browser, never sent anywhere); both
// are feature-detected, since older builds of the module have neither.
import { exampleEmbeddings, EXAMPLE_TOKENS } from './state.js';
import { AttentionFiles } from './attnfile.js';
import { longRun, mayBeLong, looksShort, usualMax, MAX_TOKENS } from './long.js';
import { streamChoice } from './stream-weights.js';

async function fetchText(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`could not load ${url} (HTTP ${r.status})`);
  return r.text();
}

export class Pipeline {
  constructor(as) {
    this.as = as;
    this.model = null;
    this.modelKey = '';
    this.bpeFiles = null;
    this.checkpoint = null; // the user's checkpoint, kept until a newer one loads
    this.bundled = new Map(); // name -> Promise<Model>
    this.files = new AttentionFiles(as); // the user's attention file (web/attnfile.js)
    this.bytesPerToken = new WeakMap(); // model → its last text's UTF-8 bytes per token (web/long.js looksShort)
  }

  /** GPT-2's encoder.json and vocab.bpe, fetched once, the first time BPE is chosen. */
  async bpeData() {
    if (!this.bpeFiles) {
      const [vocab, merges] = await Promise.all([
        fetchText('./assets/gpt2/encoder.json'), fetchText('./assets/gpt2/vocab.bpe'),
      ]);
      this.bpeFiles = { vocab, merges };
    }
    return this.bpeFiles;
  }

  /**
   * The trace for state `s`: what the views draw, nothing more. `need` (default: everything) narrows it to what
   * the views on screen draw — { all: every layer's attention weights, full: the shown layer's full trace } —
   * and the page asks for the rest when it is idle (web/compute.js complete): at 512 tokens × 6 layers × 12 heads the
   * weights of every layer are 72 MB of fresh arrays, most of a keystroke's time.
   */
  async run(s, need = { all: true, full: true }) {
    if (s.mode === 'example') return this.example(s);
    if (s.model === 'file') return this.files.run(s);
    if (s.model === 'random') return this.randomRun(s, need);
    return this.loadedRun(s, await this.loaded(s.model), need);
  }

  /** The user's checkpoint ('checkpoint') or a bundled model (by name), each loaded once. */
  async loaded(name) {
    if (name === 'checkpoint') {
      if (!this.checkpoint) throw new Error('no checkpoint is loaded: choose its config.json, model.safetensors and tokenizer.json');
      return this.checkpoint;
    }
    if (typeof this.as.loadBundled !== 'function') throw new Error(`this build of attnscope has no bundled models, so '${name}' cannot be loaded`);
    if (!this.bundled.has(name)) {
      const p = this.as.loadBundled(name);
      this.bundled.set(name, p);
      p.catch(() => this.bundled.delete(name)); // a failed load is tried again next time
    }
    return this.bundled.get(name);
  }

  /**
   * Loads the user's checkpoint files (File objects: config, weights, and tokenizer — tokenizer.json, or
   * { vocab, merges } / { vocab, tokenizerConfig } for the older vocabulary files). The previous checkpoint
   * stays until this one has loaded; an error names the file it is about. Returns the model's config.
   */
  async loadCheckpoint(files, onProgress, signal) {
    if (typeof this.as.loadPretrained !== 'function') throw new Error('this build of attnscope cannot load checkpoints (no as.loadPretrained)');
    const config = await readText(files.config);
    const t = files.tokenizer;
    let tokenizer;
    if (t instanceof Blob) tokenizer = await readText(t);
    else if (t.sentencepiece) tokenizer = { sentencepiece: await readBytes(t.sentencepiece) }; // T5's spiece.model
    else if (t.source) tokenizer = { source: await readBytes(t.source), target: await readBytes(t.target), vocab: await readText(t.vocab) }; // Marian
    else if (t.merges) tokenizer = { vocab: await readText(t.vocab), merges: await readText(t.merges) };
    else tokenizer = { vocab: await readText(t.vocab), lowercase: await lowercaseOf(t.tokenizerConfig) };
    const extra = files.generationConfig ? { generationConfig: await readText(files.generationConfig) } : {};
    // above the budget, a model_type the module streams (as.streamableModelTypes): the layers stay in the file
    const streamed = streamChoice(config, files.weights, { types: this.as.streamableModelTypes });
    if (streamed.stream) extra.streamWeights = true;
    let model;
    try {
      model = await this.as.loadPretrained({ config, weights: files.weights, tokenizer, onProgress, signal, ...extra });
    } catch (err) {
      const message = String(err?.message ?? err);
      const e = err?.name === 'AbortError' ? new Error(message.replace(/^loadPretrained: /, ''))
        : new Error(`${blame(message, files)}: ${message.replace(/^loadPretrained: /, '')}`);
      e.name = err?.name ?? 'Error';
      throw e;
    }
    this.checkpoint?.delete();
    this.checkpoint = model;
    // an encoder–decoder's shared token table's rows (its architecture line says them): the model's own parameter
    const table = model.config.architecture === 'encoder-decoder' ? model.parameters().find((p) => p.name === 'embedding.weight') : null;
    return { ...model.config, ...(table ? { vocabSize: table.shape[0] } : {}), ...(streamed.stream ? { streamBudget: streamed.budget } : {}) };
  }

  /**
   * A bundled model's held-out score measured here, with attnscope's own generate: for an 'exact' metric the
   * share of models/<name>/heldout.json items whose greedy output equals the target; for a language model's
   * 'loss', the mean negative log-probability per predicted token over its texts (run option logProbs, each
   * text truncated to maxPositions as the training script's loss is). Yields between chunks so the page's runs
   * are not held up.
   */
  async heldout(name, onProgress) {
    const model = await this.loaded(name);
    const url = new URL(`../models/${encodeURIComponent(name)}/heldout.json`, import.meta.url);
    const r = await fetch(url);
    if (!r.ok) throw new Error(`could not load ${url.pathname} (HTTP ${r.status})`);
    const data = await r.json();
    const t0 = performance.now();
    if (data.metric === 'loss' && Array.isArray(data.texts)) {
      let total = 0;
      let count = 0;
      const max = model.config.maxPositions ?? Infinity;
      for (let k = 0; k < data.texts.length; k++) {
        const text = Array.from(data.texts[k]).slice(0, max).join('');
        const { logProbs } = model.run(text, { trace: 'none', topK: 0, logProbs: true });
        for (const v of logProbs) total -= v;
        count += logProbs.length;
        if (k % 20 === 19) {
          onProgress((k + 1) / data.texts.length);
          await new Promise((resolve) => { setTimeout(resolve, 0); });
        }
      }
      return {
        metric: 'loss', rule: data.rule, loss: total / count, count, texts: data.texts.length,
        reference: data.pytorchLoss, ms: performance.now() - t0,
      };
    }
    if (data.metric !== 'exact' || !Array.isArray(data.items)) return { metric: data.metric, rule: data.rule };
    let correct = 0;
    for (let k = 0; k < data.items.length; k++) {
      const { input, target } = data.items[k];
      if (model.generate(input, { maxNewTokens: 64 }).text === target) correct += 1;
      if (k % 20 === 19) {
        onProgress((k + 1) / data.items.length);
        await new Promise((resolve) => { setTimeout(resolve, 0); });
      }
    }
    return { metric: 'exact', rule: data.rule, correct, total: data.items.length, ms: performance.now() - t0 };
  }

  /** Greedy continuation of the text (causal LMs) with the current model: { text, tokens, ids, stoppedAtEnd }. */
  async generate(s, maxNewTokens) {
    const model = s.model === 'random' ? await this.randomModel(s) : await this.loaded(s.model);
    return model.generate(s.text, { maxNewTokens });
  }

  /**
   * The next-token top-k after token `position` of a causal model with a fixed vocabulary (a loaded one): the
   * model's `next` (its `topK` run option) for the text up to that token's end — the same distribution, since
   * no row of a causal model sees a later token. The prefix must tokenize into the same first ids; if it
   * does not (a BPE merge across the cut), the error says so rather than showing another sequence's guess.
   */
  async nextAt(s, position, ids, end, topK) {
    if (s.model === 'random') throw new Error("the seeded model's vocabulary is the words of the whole text, so only the last token's prediction is its own");
    const model = await this.loaded(s.model);
    if (model.config.architecture !== 'decoder') throw new Error(`a ${model.config.architecture} model has no causal next-token prediction per position`);
    const r = model.run(s.text.slice(0, end), { trace: 'none', topK });
    const same = r.ids.length === position + 1 && r.ids.every((id, k) => id === ids[k]);
    if (!same) throw new Error(`the text up to token ${position} tokenizes into other tokens (${r.tokens.join(' ')}), so its prediction is not this sequence's`);
    if (!r.next) throw new Error('this model gives no next-token prediction');
    return { position, tokens: r.next.tokens, ids: r.next.ids, probs: r.next.probs };
  }

  /** The model for `config`, rebuilt only when its key changes. */
  cached(key, build) {
    if (key !== this.modelKey) {
      this.model?.delete();
      this.model = null;
      this.modelKey = '';
      this.model = build();
      this.modelKey = key;
    }
    return this.model;
  }

  /** The classic 6-token example: simple X·Xᵀ attention (no weights, no positions) on the 3-d embeddings. */
  example(s) {
    const rows = exampleEmbeddings(s);
    const embeddings = Object.fromEntries(EXAMPLE_TOKENS.map((t, i) => [t, rows[i]]));
    const config = {
      attention: 'simple', numLayers: 1, dModel: 3, numHeads: 1, positional: 'none', tokenizer: 'word', embeddings,
    };
    const model = this.cached(JSON.stringify(config), () => this.as.createModel(config));
    const trace = model.run(EXAMPLE_TOKENS.join(' '), { trace: 'full' });
    trace.example = true;
    trace.complete = true;
    return trace;
  }

  /** The seeded random model the controls describe (cached while they do not change). */
  async randomModel(s) {
    const config = {
      architecture: s.arch,
      dModel: s.dModel,
      numHeads: s.attention === 'multi' ? s.numHeads : 1,
      numLayers: s.numLayers,
      dFF: s.dFF,
      normFirst: s.normFirst,
      activation: s.activation,
      positional: s.positional,
      positionalBase: s.base,
      attention: s.attention === 'simple' ? 'simple' : 'learned',
      seed: s.seed,
    };
    const key = JSON.stringify({ ...config, tokenizer: s.tokenizer });
    const tokenizer = s.tokenizer === 'bpe' ? { kind: 'bpe', ...(await this.bpeData()) } : s.tokenizer;
    return this.cached(key, () => this.as.createModel({ ...config, tokenizer }));
  }

  async randomRun(s, need) {
    const model = await this.randomModel(s);
    const texts = s.arch === 'encoder-decoder' ? { source: s.source, target: s.target } : { text: s.text };
    const pad = !s.padding ? {} : s.padTo ? { padTo: s.padTo } : { padMultiple: 8 }; // 8: next multiple above n
    return this.traced(model, s, texts, pad, need);
  }

  /**
   * A loaded model: the text is the input; an encoder–decoder reads it as the source and writes the target,
   * shown whole or (state.grow = k) as its first k tokens — greedy decoding is prefix-consistent, so the
   * first k rows are what the model attended to while writing them.
   */
  async loadedRun(s, model, need) {
    if (model.config.architecture !== 'encoder-decoder') return this.maybeLong(model, s, need);
    const out = model.generate(s.text, { maxNewTokens: 64 });
    const grow = s.grow > 0 && s.grow < out.ids.length;
    const shown = grow ? model.generate(s.text, { maxNewTokens: s.grow }) : out;
    // a checkpoint's decoder reads the generated ids themselves (its text may tokenize otherwise: SentencePiece adds a
    // '▁' before it), so the attention drawn is that of the returned sequence
    const ids = model.config.decoderStartTokenId !== undefined ? { targetIds: Array.from(shown.ids) } : {};
    const trace = this.traced(model, s, { source: s.text, target: shown.text, ...ids }, {}, need);
    trace.generated = { text: out.text, tokens: out.tokens, count: out.ids.length, shown: shown.ids.length };
    return trace;
  }

  /**
   * A decoder's (or encoder's) text that may be over the usual path's tokens for this model (web/long.js usualMax:
   * 512, fewer where every map would take more than the page holds): summaries and the heads on screen only; a
   * short one the usual way. Texts of this model that looked short by its bytes per token are run the usual way
   * first (no probe run), and long only if that says there are too many tokens (a RangeError: the count, or out of
   * memory).
   */
  maybeLong(model, s, need) {
    const max = usualMax(model.config);
    const bytes = new TextEncoder().encode(s.text).length;
    const done = (trace) => {
      this.bytesPerToken.set(model, bytes / Math.max(1, trace.n));
      return trace;
    };
    if (!mayBeLong(s.text, max)) return done(this.traced(model, s, { text: s.text }, {}, need, max));
    if (!looksShort(bytes, this.bytesPerToken.get(model) ?? 0, max)) {
      return done(longRun(model, s, max) ?? this.traced(model, s, { text: s.text }, {}, need, max));
    }
    try {
      return done(this.traced(model, s, { text: s.text }, {}, need, max));
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      const long = longRun(model, s, max);
      if (!long) throw err;
      return done(long);
    }
  }

  /**
   * One run asking for what is on screen: every layer's weights (need.all; the source side's layers as weights
   * only), the shown layer in full (need.full), the PE rows the positional view plots. `trace.complete` says
   * whether it holds both. More than `max` tokens is a RangeError (maybeLong then runs it the long way).
   */
  traced(model, s, texts, pad, need = { all: true, full: true }, max = MAX_TOKENS) {
    const c = model.config;
    const layers = c.architecture === 'encoder-decoder' ? c.numDecoderLayers : c.numLayers;
    const options = { trace: need.all ? 'weights' : 'none', full: need.full ? [Math.max(0, Math.min(s.layer, layers - 1))] : [], ...pad };
    if (c.positional === 'sinusoidal') options.positionalTable = s.pePositions;
    const pair = texts.targetIds ? { source: texts.source, targetIds: texts.targetIds } : { source: texts.source, target: texts.target };
    const trace = model.run(texts.text ?? pair, options);
    if (trace.n > max) throw new RangeError(`the input has ${trace.n} tokens; the page shows at most ${max}`);
    // an encoder–decoder's source is drawn too (encoder grid, cross-attention columns)
    if (trace.source?.n > MAX_TOKENS) throw new RangeError(`the source has ${trace.source.n} tokens; the page shows at most ${MAX_TOKENS}`);
    trace.eps = c.eps;
    trace.normFirst = c.normFirst;
    trace.config = { ...c };
    trace.texts = texts;
    trace.complete = !!(need.all && need.full);
    return trace;
  }
}

/** A chosen file's text; an error names the file. */
async function readText(file) {
  try {
    return await file.text();
  } catch (err) {
    throw new Error(`${file.name}: could not be read (${err?.message ?? err})`);
  }
}

/** A chosen file's bytes; an error names the file. */
async function readBytes(file) {
  try {
    return new Uint8Array(await file.arrayBuffer());
  } catch (err) {
    throw new Error(`${file.name}: could not be read (${err?.message ?? err})`);
  }
}

/** BERT's vocab.txt form: lowercase as tokenizer_config.json says (do_lower_case), else as BertTokenizer (true). */
async function lowercaseOf(file) {
  if (!file) return true;
  const text = await readText(file);
  try {
    return JSON.parse(text).do_lower_case !== false;
  } catch (err) {
    throw new Error(`${file.name}: not valid JSON (${err.message})`);
  }
}

/** The name(s) of the file an error of loadPretrained is about, from the argument its message names. */
function blame(message, files) {
  const t = files.tokenizer;
  const tokNames = t instanceof Blob ? t.name : Object.values(t).filter(Boolean).map((f) => f.name).join(' + ');
  const m = /^loadPretrained: (config|weights|tokenizer|generationConfig)\b/.exec(message);
  // a SentencePiece file named by its argument (tokenizer.source, tokenizer.sentencepiece, tokenizer.vocab)
  const part = /^loadPretrained: tokenizer\.(sentencepiece|source|target|vocab)\b/.exec(message)?.[1];
  if (part && t[part] instanceof Blob) return t[part].name;
  const shards = [files.weights].flat();
  const shard = /^loadPretrained: weights\[(\d+)\]/.exec(message) ?? /\bweights\[(\d+)\]/.exec(message);
  if (m?.[1] === 'config') return files.config.name;
  if (m?.[1] === 'generationConfig') return files.generationConfig?.name ?? 'generation_config.json';
  if (shard && shards[Number(shard[1])]) return shards[Number(shard[1])].name;
  if (m?.[1] === 'weights' || /safetensors|tensor/.test(message)) return shards.map((f) => f.name).join(', ');
  if (m?.[1] === 'tokenizer') return tokNames;
  return [files.config.name, ...shards.map((f) => f.name), tokNames].join(', ');
}
