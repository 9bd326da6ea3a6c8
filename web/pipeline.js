// Turns the page state into one trace — every intermediate the views draw (layer: web, runs in the
// worker; no DOM). Text mode: `as.createModel(config).run(text, { trace: 'full', padTo })`
// (bindings/js/model.js), the model cached while only the text changes. Padding is the core's run option
// padTo: '<pad>' keys blocked for every query, pad query rows computed over the real keys (real numbers). Worked example: `as.simpleSelfAttention` on the six
// 3-d vectors, shaped as a one-layer trace so the same views draw it.
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

  /** The full trace for state `s`, plus the PE table for the positional view. */
  async run(s) {
    if (s.mode === 'example') return this.example(s);
    const trace = await this.modelRun(s);
    if (s.positional === 'sinusoidal') {
      trace.peTable = this.as.positionalEncoding({ n: s.pePositions, d: s.dModel, base: s.base });
      trace.pePositions = s.pePositions;
    }
    return trace;
  }

  /** The classic 6-token example: simple X·Xᵀ attention on the (editable) 3-d embeddings. */
  example(s) {
    const x = Float32Array.from(exampleEmbeddings(s).flat());
    const n = 6;
    const d = 3;
    const r = this.as.simpleSelfAttention({ x, n, d });
    return {
      example: true,
      tokens: [...EXAMPLE_TOKENS],
      ids: null,
      offsets: null,
      n, dModel: d, numHeads: 1, headDim: d,
      embeddings: x, positional: new Float32Array(n * d), input: x,
      layers: [{
        kind: 'simple',
        input: x,
        attention: {
          q: x, k: x, v: x, scale: 1, scores: r.scores, weights: r.weights, concat: r.context, output: r.context,
        },
      }],
      output: r.context,
    };
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
    if (key !== this.modelKey) {
      this.model?.delete();
      this.model = null;
      this.modelKey = '';
      const tokenizer = s.tokenizer === 'bpe' ? { kind: 'bpe', ...(await this.bpeData()) } : s.tokenizer;
      this.model = this.as.createModel({ ...config, tokenizer });
      this.modelKey = key;
    }
    const input = s.arch === 'encoder-decoder' ? { source: s.source, target: s.target } : s.text;
    let padTo = 0;
    if (s.padding) {
      padTo = s.padTo;
      if (!padTo) {
        // next multiple of 8 above the token count (the longer side for encoder-decoder)
        const probe = this.model.run(input, { trace: 'none' });
        padTo = Math.ceil((Math.max(probe.n, probe.source?.n ?? 0) + 1) / 8) * 8;
      }
    }
    const trace = this.model.run(input, padTo ? { trace: 'full', padTo } : { trace: 'full' });
    trace.eps = this.model.config.eps;
    trace.normFirst = this.model.config.normFirst;
    if (trace.n > MAX_TOKENS) throw new RangeError(`the input has ${trace.n} tokens; the page shows at most ${MAX_TOKENS}`);
    return trace;
  }
}
