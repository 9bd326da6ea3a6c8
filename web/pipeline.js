// Turns the page state into one trace — every intermediate the views draw (layer: web, runs in the
// worker; no DOM). Text mode: `as.createModel(config).run(text, { trace: 'full' })` (bindings/js/model.js),
// the model cached while only the text changes. Worked example: `as.simpleSelfAttention` on the six
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
    let trace = await this.modelRun(s);
    if (s.padding && s.arch !== 'encoder-decoder') {
      const N = s.padTo || Math.ceil((trace.n + 1) / 8) * 8;
      if (N < trace.n) throw new RangeError(`padding: pad to (${N}) must be at least the number of tokens (${trace.n})`);
      trace = padTrace(trace, N);
    }
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
    const trace = this.model.run(input, { trace: 'full' });
    if (trace.n > MAX_TOKENS) throw new RangeError(`the input has ${trace.n} tokens; the page shows at most ${MAX_TOKENS}`);
    return trace;
  }
}

/**
 * The trace of the same text padded to N positions with a padding mask that blocks <pad> as key and as
 * query (mask[i][j] = real(i) && real(j)). Real tokens never see a pad, so every real row is exactly
 * the unpadded run's; pad columns get −∞ scores and zero weights, pad rows are fully blocked (zero
 * weights, as the API defines a fully blocked row). Pad rows of the other tensors are NaN: they are
 * not computed, and the heatmaps draw them as masked.
 */
function padTrace(t, N) {
  const n = t.n;
  if (N === n) return { ...t, nReal: n };
  const rows = (a) => {
    if (!a) return a;
    const w = a.length / n;
    const o = new Float32Array(N * w).fill(NaN);
    o.set(a);
    return o;
  };
  const square = (a, fill) => {
    const H = a.length / (n * n);
    const o = new Float32Array(H * N * N).fill(fill);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < n; i++) o.set(a.subarray((h * n + i) * n, (h * n + i + 1) * n), (h * N + i) * N);
    }
    return o;
  };
  const pads = N - n;
  const ids = new Int32Array(N).fill(-1);
  ids.set(t.ids);
  const offsets = new Int32Array(2 * N).fill(-1);
  offsets.set(t.offsets);
  const attention = (A) => ({
    ...A,
    q: rows(A.q), k: rows(A.k), v: rows(A.v), concat: rows(A.concat), output: rows(A.output),
    scores: square(A.scores, -Infinity), weights: square(A.weights, 0),
  });
  return {
    ...t,
    tokens: [...t.tokens, ...Array(pads).fill('<pad>')],
    ids, offsets, n: N, nReal: n,
    embeddings: rows(t.embeddings), positional: rows(t.positional), input: rows(t.input), output: rows(t.output),
    layers: t.layers.map((L) => ({
      ...L, input: rows(L.input), attention: attention(L.attention), ffHidden: rows(L.ffHidden), output: rows(L.output),
    })),
  };
}
