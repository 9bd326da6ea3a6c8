// Turns the page state into one trace — every number the views draw (layer: web, runs in the worker; no
// DOM, no model math). Text mode: one `model.run(input, options)` (bindings/js/model.js) that asks for
// exactly what is on screen: attention weights of every layer (heatmaps, model view, rollout), the full
// trace of the one layer the attention detail and step-by-step view show (`full: [layer]`), the PE rows
// the positional view plots (`positionalTable`), and padding decided by the core (`padMultiple: 8` or
// `padTo`). The model is cached while only the text or the options change. Worked example: a one-layer
// 'simple' model over the six (editable) 3-d embeddings, so the same views draw the core's trace.
import { exampleEmbeddings, EXAMPLE_TOKENS } from './state.js';

export const MAX_TOKENS = 512;

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

  /** The trace for state `s`: what the views draw, nothing more. */
  async run(s) {
    return s.mode === 'example' ? this.example(s) : this.modelRun(s);
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
    return trace;
  }

  async modelRun(s) {
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
    const model = this.cached(key, () => this.as.createModel({ ...config, tokenizer }));
    const input = s.arch === 'encoder-decoder' ? { source: s.source, target: s.target } : s.text;
    // the shown layer in full; the source side's layers are drawn as weights only
    const options = { trace: 'weights', full: [Math.min(s.layer, s.numLayers - 1)] };
    if (s.positional === 'sinusoidal') options.positionalTable = s.pePositions;
    if (s.padding) {
      if (s.padTo) options.padTo = s.padTo;
      else options.padMultiple = 8; // next multiple of 8 above the token count (the longer side)
    }
    const trace = model.run(input, options);
    trace.eps = model.config.eps;
    trace.normFirst = model.config.normFirst;
    if (trace.n > MAX_TOKENS) throw new RangeError(`the input has ${trace.n} tokens; the page shows at most ${MAX_TOKENS}`);
    return trace;
  }
}
