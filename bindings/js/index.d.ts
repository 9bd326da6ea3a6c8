// Types for attnscope's public API (hand-written: Emscripten 3.1.6 has no --emit-tsd). Mirrors
// shared/spec/API.md; keep in step with index.js (tests/js/types.test.js checks the names match).
//
// Conventions: tensors are row-major Float32Array with shapes given by the integer arguments; weight
// matrices are [in, out] so that y = x·W + b (PyTorch stores [out, in]); a mask is a Uint8Array of
// nq*nk with 1 = may attend, 0 = blocked; `causal: true` blocks key j > i. A row whose keys are all
// blocked gets zero weights and a zero output row (never NaN). Results are fresh JS-owned copies.
// Bad arguments throw TypeError / RangeError / Error whose message names the function and argument.

/** Anything accepted where a Float32Array tensor is expected (other typed arrays and number[] are converted). */
export type Tensor = Float32Array | Float64Array | ArrayLike<number>;
/** A 0/1 mask (booleans accepted). */
export type Mask = Uint8Array | ArrayLike<number | boolean>;

export interface CreateOptions {
  /** 'auto' (default): SIMD128 when the engine supports it; true: require it (throws otherwise); false: scalar build. */
  simd?: 'auto' | boolean;
  /**
   * 'auto' (default): min(4, cores) in Node and in cross-origin-isolated pages (COOP same-origin + COEP
   * require-corp), 1 elsewhere; or an integer from 1 to 16 (more than 1 throws where threads cannot run, or
   * with simd: false — the threaded build is SIMD128 only). Results equal the single-threaded ones.
   */
  threads?: 'auto' | number;
  /**
   * 'auto' (default): the fused multiply-add (relaxed SIMD) GEMM micro-kernel where the engine validates relaxed
   * SIMD (Chromium; Node with --experimental-wasm-relaxed-simd) and a SIMD128 build runs (one thread or
   * several); true: require it (throws where it cannot run); false: the SIMD128 mul + add kernel. Results
   * differ from it in the last bits only (one rounding per product-sum instead of two).
   */
  relaxedSimd?: 'auto' | boolean;
}

export interface AttentionResult {
  /** [nq, nk] scores before softmax (scaled for scaledDotProductAttention; -Infinity where blocked). */
  scores: Float32Array;
  /** [nq, nk] softmax of the scores, rows sum to 1 (or all 0 for a fully blocked row). */
  weights: Float32Array;
  /** [nq, dv] weights · V. */
  output: Float32Array;
}

export interface AttentionWeightsBlock {
  wq: Tensor; wk: Tensor; wv: Tensor; wo: Tensor;
  bq: Tensor; bk: Tensor; bv: Tensor; bo: Tensor;
}

export interface EncoderLayerParams extends AttentionWeightsBlock {
  /** [dModel, dFF] */ w1: Tensor; /** [dFF] */ b1: Tensor;
  /** [dFF, dModel] */ w2: Tensor; /** [dModel] */ b2: Tensor;
  norm1Gamma: Tensor; norm1Beta: Tensor; norm2Gamma: Tensor; norm2Beta: Tensor;
}

export interface DecoderLayerParams {
  self: AttentionWeightsBlock;
  cross: AttentionWeightsBlock;
  w1: Tensor; b1: Tensor; w2: Tensor; b2: Tensor;
  norm1Gamma: Tensor; norm1Beta: Tensor; norm2Gamma: Tensor; norm2Beta: Tensor; norm3Gamma: Tensor; norm3Beta: Tensor;
}

export interface Tokenization {
  tokens: string[];
  /** [start, end) per token (2 entries each), in UTF-16 code units of the input string. */
  offsets: Int32Array;
}

export interface BpeEncoding extends Tokenization {
  ids: Int32Array;
}

/** Returned by createMultiHeadAttention: multi-head attention with its weights held in wasm memory. */
export interface MultiHeadAttention {
  /**
   * As multiHeadAttention with this module's weights: query [nq,dModel], key [nk,kdim] (default query),
   * value [nk,vdim] (default key); output [nq,dModel], weights [numHeads,nq,nk] (omitted when needWeights is false).
   * Throws `forward: this attention module has been deleted` after delete().
   * @example mha.forward({ query: x, nq: 4 }).output
   */
  forward(args: {
    query: Tensor; key?: Tensor; value?: Tensor; nq: number; nk?: number; mask?: Mask; causal?: boolean;
    needWeights?: boolean;
  }): { output: Float32Array; weights?: Float32Array };
  /** Frees the wasm copy of the weights; safe to call twice. */
  delete(): void;
}

export interface BpeTokenizer {
  readonly vocabSize: number;
  /** GPT-2 ids of `text` (identical to GPT-2's encoder), the tokens' text and UTF-16 offsets. */
  encode(text: string): BpeEncoding;
  /** Text of the ids; byte sequences that are not valid UTF-8 decode to U+FFFD. */
  decode(ids: Int32Array | ArrayLike<number>): string;
  /** Frees the tokenizer; later calls throw. */
  delete(): void;
}

/** as.loadTokenizer(tokenizerJson).encode()'s result. */
export interface HfEncoding {
  /** The ids Hugging Face's tokenizers library gives for the file (`Tokenizer.encode(text).ids`). */
  ids: Int32Array;
  /** Vocabulary strings ("Ġworld", "▁Hello", "<0x0A>") and added tokens' contents. */
  tokens: string[];
  /** [start, end) UTF-16 offsets into the text, 2 per token; post-processor tokens have [0, 0). */
  offsets: Int32Array;
}

/**
 * T5's SentencePiece model file (`spiece.model`) as a tokenizer (API.md "Encoder–decoder checkpoints"): ids as
 * transformers' `T5Tokenizer` (SentencePiece's own encode with the model's charsmap; `</s>`, `<unk>`, `<pad>` and
 * `<extra_id_0>`…`<extra_id_99>` written in the text stay whole; `encode` appends `</s>` unless
 * `addSpecialTokens: false`). Unigram and BPE models; Llama 1/2's `tokenizer.model` and other `.model` files read too.
 */
export interface SentencePieceFiles {
  /** The bytes of the .model / .spm file. */
  sentencepiece: Uint8Array | ArrayBuffer;
}

/**
 * Marian's (opus-mt-*) files: ids as transformers' `MarianTokenizer` (the source model's pieces mapped through
 * `vocab.json`; a piece it lacks is `<unk>`'s id; a leading `>>xx<<` language code is one token; `</s>` appended).
 * `decode` uses the target model.
 */
export interface MarianFiles {
  /** source.spm bytes. */
  source: Uint8Array | ArrayBuffer;
  /** target.spm bytes. */
  target: Uint8Array | ArrayBuffer;
  /** vocab.json, as text or parsed. */
  vocab: string | Record<string, number>;
}

/** A Hugging Face tokenizer.json loaded on its own (as.loadTokenizer). */
export interface HfTokenizer {
  /** Ids in use, added tokens included (Llama 3.2: 128256). */
  readonly vocabSize: number;
  /**
   * Tokens of `text`. `addSpecialTokens` (default true) applies the file's post-processor template (Llama 3.2's
   * `<|begin_of_text|>`, Gemma's `<bos>`, Llama 2's `<s>`; Qwen adds none). WordPiece (BERT) files: the
   * post-processor is not applied ([CLS]/[SEP] are not added) either way.
   */
  encode(text: string, options?: { addSpecialTokens?: boolean }): HfEncoding;
  /**
   * Text of the ids through the file's decoder (special tokens are kept). SentencePiece files (T5, Marian): as
   * `tokenizer.decode(ids, skip_special_tokens=True)`: the special ids dropped, SentencePiece's decode of the rest,
   * trimmed.
   */
  decode(ids: Int32Array | ArrayLike<number>): string;
  /** Frees the tokenizer; later calls throw. */
  delete(): void;
}

export interface MemoryStats {
  /** Size of the wasm memory in bytes. */
  heapSize: number;
  /** Bytes currently allocated by malloc inside the module. */
  allocated: number;
}

// ---- the model pipeline (README "Model pipeline")

export interface ModelConfig {
  architecture?: 'encoder' | 'decoder' | 'encoder-decoder';
  tokenizer?: 'word' | 'char' | { kind: 'bpe'; vocab: string | Record<string, number>; merges: string };
  dModel?: number;
  numHeads?: number;
  numLayers?: number;
  numDecoderLayers?: number;
  dFF?: number;
  normFirst?: boolean;
  /** 'gelu' is exact (erf); 'gelu-tanh' the tanh approximation (GPT-2's gelu_new). */
  activation?: 'relu' | 'gelu' | 'gelu-tanh';
  eps?: number;
  positional?: 'sinusoidal' | 'learned' | 'none';
  positionalBase?: number;
  maxPositions?: number;
  attention?: 'learned' | 'simple';
  seed?: number;
  embeddings?: Record<string, ArrayLike<number>>;
  weights?: Uint8Array | ArrayBuffer;
  topK?: number;
  maxTokens?: number;
}

export interface AttentionTrace {
  q?: Float32Array; k?: Float32Array; v?: Float32Array;
  /** full trace: [H, n, m] q_i·k_j per head, before the scale and the mask */
  dots?: Float32Array;
  scores?: Float32Array; weights?: Float32Array; concat?: Float32Array; output?: Float32Array;
  /** full trace: [H, n] the softmax's row max over unmasked scores and Σ exp(score − max) (0 for a fully blocked row) */
  rowMax?: Float32Array; rowSum?: Float32Array;
  /** trace 'full': the factor applied to q·k (float32 1/√headDim; 1 for a 'simple' layer). */
  scale?: number;
  /** run option summaries (self-attention only): computed in the core from every head, whether or not its map is kept */
  summary?: HeadSummary;
}

/**
 * Run option `summaries`: one layer's self-attention per head, without keeping its [n, n] weights. Means are over
 * the text's rows i < nReal; w the head's weights.
 */
export interface HeadSummary {
  /** [numHeads] mean over rows of −Σ_j w_ij ln w_ij (nats; 0 for an all-zero row, e.g. an ablated head) */
  entropy: Float32Array;
  /** [numHeads] mean over rows of Σ_j w_ij |i − j| (mean attention distance, in tokens) */
  distance: Float32Array;
  /** [numHeads] mean over rows of w_i0: the share of weight on the first token (the attention sink; BOS when the tokenizer adds one) */
  sink: Float32Array;
  /** keys kept per row */
  topK: number;
  /** [numHeads, nReal, topK]: each row's heaviest keys, descending, ties to the smaller id; −1 where a row has fewer non-zero weights */
  topIds: Int32Array;
  /** [numHeads, nReal, topK]: their weights (0 where topIds is −1) */
  topWeights: Float32Array;
}

/** Run option `heads` (a list): one requested self-attention map. */
export interface HeadMap { layer: number; head: number; /** [n, n] query-major */ weights: Float32Array }

/**
 * One layer. The [n, dModel] residual/norm tensors come with trace 'full' (not for 'simple' layers).
 * Sub-block k — encoder: 1 self-attention, 2 feed-forward; decoder with `cross`: 1 self-attention,
 * 2 cross-attention, 3 feed-forward. residualK = the block's residual input + the block's output;
 * normK = LayerNorm normK: post-norm normK(residualK) (the block's result; the last one equals `output`),
 * pre-norm normK(block input) (what the block reads; then the last residual equals `output`).
 */
export interface LayerTrace {
  kind: 'encoder' | 'decoder' | 'simple';
  /** this layer kept the full trace (trace 'full', or listed in run option `full`) */
  full: boolean;
  input?: Float32Array;
  attention: AttentionTrace;
  cross?: AttentionTrace;
  residual1?: Float32Array; norm1?: Float32Array;
  residual2?: Float32Array; norm2?: Float32Array;
  /** decoder layers with cross-attention only */
  residual3?: Float32Array; norm3?: Float32Array;
  /** [n] the per-row mean and biased variance LayerNorm normK normalised with (full trace) */
  norm1Mean?: Float32Array; norm1Var?: Float32Array; norm2Mean?: Float32Array; norm2Var?: Float32Array;
  norm3Mean?: Float32Array; norm3Var?: Float32Array;
  /** [n, dFF] activation(y·W1 + b1), y the feed-forward input */
  ffHidden?: Float32Array;
  /** [n, dModel] ffHidden·W2 + b2, before the residual */
  ffOutput?: Float32Array;
  /**
   * [n, dModel] the layer's output; absent when run option `layerOutputs` is false (its default with `heads` 'none'
   * or a list), except for layers kept in full
   */
  output?: Float32Array;
  /**
   * run option lens (the logit lens): [n, k] row-major, at every position the top-k of
   * softmax(LM head(final norm(output))), descending, ties to the smaller id; the last layer's last row equals `next`
   */
  lens?: { ids: Int32Array; probs: Float32Array; k: number; /** the ids' vocabulary texts, [n, k] */ tokens: string[] };
}

export interface SideTrace {
  /** n counts the '<pad>' tokens of run option padTo; nReal the text's own tokens (rows 0..nReal-1). */
  tokens: string[]; ids: Int32Array; offsets: Int32Array; n: number; nReal: number;
  embeddings: Float32Array; positional: Float32Array; input: Float32Array;
  layers: LayerTrace[];
  /** the stack's result (GPT-2: after ln_f) */
  output: Float32Array;
  /** stacks with a final norm (GPT-2): the last layer's output before it */
  lastLayerOutput?: Float32Array;
}

export interface TopK { tokens: string[]; ids: Int32Array; probs: Float32Array }

export interface ModelRun extends SideTrace {
  dModel: number; numHeads: number; headDim: number; dFF: number;
  /** top-k next token of the last real token (models with a next-token head; empty otherwise) */
  next: TopK;
  /** BERT with an MLM head: the top-k at each [MASK] (position = index into tokens) */
  masks?: (TopK & { position: number })[];
  source?: SideTrace;
  /** run option positionalTable: the first rows of the positional table [positionalRows, dModel] */
  positionalTable?: Float32Array; positionalRows?: number;
  /** run option logProbs: [n − 1] ln p(token i+1 | tokens 0..i); −mean is Hugging Face's labels=input_ids loss */
  logProbs?: Float32Array;
  /** run option heads (a list): the maps asked for, in that order */
  heads?: HeadMap[];
}

export interface RunOptions {
  /** what every layer keeps: 'full' (default), 'weights' (attention weights + output), 'none' (output) */
  trace?: 'full' | 'weights' | 'none';
  /** layer indices that keep the full trace whatever `trace` says; fullSource: the encoder side's */
  full?: ArrayLike<number>; fullSource?: ArrayLike<number>;
  /** also return this many rows of the positional table (positionalTable) */
  positionalTable?: number;
  /** pad with '<pad>' keys to this many positions, or to the next multiple of padMultiple (at least one pad) */
  padTo?: number; padMultiple?: number;
  /** size of next / masks (default: the model's topK) */
  topK?: number;
  /** also return logProbs (models with a next-token head) */
  logProbs?: boolean;
  /**
   * heads to ablate, 0-based, of the main side (decoder-only, encoder-only, or an encoder-decoder's decoder):
   * their weights and weights · V are zero (Hugging Face's head_mask with zeros there); a layer or head out of
   * range is a RangeError naming `ablate`
   */
  ablate?: {
    layer: number; head: number;
    /**
     * mean ablation: the head's weights · V becomes this instead of zero — headDim values (every position; e.g.
     * `as.headMeans(model, texts)`'s mean) or n·headDim (one row per position); another length is a RangeError
     */
    mean?: Float32Array;
  }[];
  /** the logit lens: every layers[i].lens holds the top-k (k = lens) at every position; needs a language-model head */
  lens?: number;
  /**
   * Which self-attention maps of the main side are computed. 'all' (default): as `trace` says. 'none' or a list:
   * the layers not in `full` run a tiled, online-softmax attention that never holds an [n, n] matrix (memory grows
   * with n × layers, not n² × layers × heads); no layer keeps `attention.weights`, and the listed maps alone come
   * back in `heads` of the result. Needs `trace: 'none'` (its default then); out-of-range pairs are a RangeError
   * naming `heads`. Outputs equal the materialised path's within float32 rounding (1e-5 of the values' scale).
   */
  heads?: 'all' | 'none' | { layer: number; head: number }[];
  /** per-head summaries of every self-attention layer in `attention.summary` (true: topK 5 keys per row) */
  summaries?: boolean | { topK?: number };
  /**
   * Whether every layer of the main side keeps `layers[i].output` [n, dModel] (layers in `full` always do; an
   * encoder-decoder's `source.layers` always keep theirs). Default true, but false
   * with `heads` 'none' or a list: a long run then holds one layer's activations, not every layer's output
   * (16 MB a layer at 2,048 tokens of a Llama-3.2-1B shape; 1.07 GB for its 16 layers at 8,192).
   */
  layerOutputs?: boolean;
}

export interface Generation {
  text: string; ids: Int32Array; tokens: string[]; stoppedAtEnd: boolean;
  /** beam search (`numBeams` > 1) only: the returned hypothesis' score, its summed log-probabilities (end token
   * included when it ended) / generated length^length_penalty, the length counting the end token (Hugging Face's
   * `sequences_scores`) */
  score?: number;
}

export interface Model {
  /** The model's config with every default applied, read back from the core. */
  readonly config: Readonly<Record<string, unknown> & { architecture: string; dModel: number; numHeads: number; dFF: number }>;
  /**
   * Encoder-decoder checkpoints (loadPretrained t5, mt5, bart, mbart, marian) also take `{ source, target? }`
   * (target defaults to '') or `{ source, targetIds }`: the decoder reads [config.decoderStartTokenId] + the
   * target's ids without special tokens; `source.layers[i].attention.weights` are the encoder's attentions,
   * `layers[i].attention.weights` the decoder's, `layers[i].cross.weights` [H, targetLength, sourceLength] the
   * cross-attentions (API.md "Encoder–decoder checkpoints").
   */
  run(input: string | { source: string; target?: string } | { source: string; targetIds: ArrayLike<number> }, options?: RunOptions): ModelRun;
  /**
   * Greedy decoding (argmax, ties to the smaller id) with a key/value cache; stops at the end token or after
   * maxNewTokens (default 32). Language models continue `input`; encoder-decoder models translate it.
   * `numBeams` > 1 (encoder-decoder models): beam search as Hugging Face's BeamSearchScorer, with the checkpoint's
   * length_penalty and early_stopping (generation_config.json, else config.json); `ids` are the best hypothesis'.
   * @example const t = model.generate('Hello', { numBeams: 4 }); model.run({ source: 'Hello', targetIds: t.ids })
   */
  generate(input: string, options?: { maxNewTokens?: number; numBeams?: number }): Generation;
  parameters(): { name: string; shape: number[] }[];
  delete(): void;
}

/** One safetensors file: a Blob/File is read in chunks; a string is the file's path (Node only, read with node:fs). */
export type SafetensorsFile = Uint8Array | ArrayBuffer | Blob | string;

/** as.loadPretrained's options (API.md "Pretrained checkpoints", "Modern decoder checkpoints"). */
export interface PretrainedOptions {
  /**
   * config.json (text or parsed): model_type 'gpt2', 'bert', or a decoder-only checkpoint's 'llama', 'mistral',
   * 'qwen2', 'qwen3', 'gemma', 'gemma2', 'gemma3_text', 'phi3' (the Hugging Face config class's defaults apply; a
   * field value attnscope does not implement, e.g. rope_scaling.rope_type 'longrope', is an Error naming it), or an
   * encoder-decoder's 't5', 'mt5', 'bart', 'mbart', 'marian' (e.g. feed_forward_proj 'gated-foo' is an Error).
   */
  config: string | Record<string, unknown>;
  /**
   * model.safetensors, or the shards model.safetensors.index.json lists, in any order (a tensor in no shard or
   * in two is an Error naming it). F32, F16 and BF16 tensors: BF16 / F16 weight matrices and embedding tables stay
   * 2 bytes per value in the wasm heap and are widened inside the kernels (exact), so a model whose weights take up
   * to 3 GB at their stored width loads (a Llama-3.2-1B's 2.47 GB of BF16); norms and biases are widened at load.
   */
  weights: SafetensorsFile | SafetensorsFile[];
  /**
   * generation_config.json (text or parsed): its eos_token_id (an id or a list) replaces config.json's as the
   * ids generate() stops at. Encoder-decoder checkpoints also read decoder_start_token_id (when config.json has
   * none), length_penalty and early_stopping (beam search).
   */
  generationConfig?: string | { eos_token_id?: number | number[]; decoder_start_token_id?: number; length_penalty?: number; early_stopping?: boolean | 'never'; [key: string]: unknown };
  /** tokenizer.json (text or parsed), { vocab, merges } (GPT-2 files) or { vocab, lowercase } (BERT vocab.txt) */
  tokenizer: string | Record<string, unknown> | { vocab: string | Record<string, number>; merges: string } | { vocab: string; lowercase?: boolean };
  /**
   * Decoder checkpoints (and GPT-2 / BERT): quantise every projection and head matrix to 8-bit blocks as it
   * loads, GGUF's Q8_0 scheme (32 weights along the input dimension + one float32 scale: value = q · scale, q an
   * integer in [-127, 127]); about 1.1 bytes per weight instead of 2 (BF16/F16) or 4 (F32), for models that would
   * not fit otherwise (Llama-3.2-3B is 6.4 GB of BF16). A tied head's embedding table is quantised too (blocks along
   * the hidden size: the lookup dequantises a row); an untied model's embedding table stays at its stored width. Each
   * matrix product with these weights also rounds its input rows to 8-bit blocks (weights and activations 8-bit, as
   * llama.cpp's Q8_0; decoding steps and short prompts then run in integer dot products). Results are then
   * APPROXIMATE: on the tiny random test checkpoints attention weights moved by up to 0.10 and hidden states by up
   * to 1.11 (at most 6.1 % of a layer output's largest value) against the same checkpoint at its stored width, the
   * next token unchanged on every test text (README "8-bit weights"). Default false.
   */
  weights8?: boolean;
  /**
   * Decoder-only checkpoints: keep every decoder layer's weights in the file and read each layer into ONE reusable
   * layer buffer in the wasm heap right before its forward (run, generate, next, the logit lens, ...); the token
   * tables stay in the file too: the embedding lookup reads the rows of the run's token ids, and the LM head (the
   * tied embedding, or lm_head.weight) reads its table in 8 MiB pieces after the last layer; the final norm and the
   * RoPE tables stay resident. Results are BIT-IDENTICAL to the resident model's (the same bytes reach the same
   * kernels; BF16 / F16 matrices stay 2 bytes a value). A Llama-3.2-1B then holds ~0.13 GB of weights instead of
   * 2.47 GB (README "Streamed weights"). Each run reads every layer once (~121 MB each for the 1B) and the head's
   * table once (525 MB for the 1B; once per 64 MiB of logits with `lens` or `logProbs`), and so does each generated
   * token. The reads are synchronous, so `weights`
   * must be: a Blob/File in a Web Worker (FileReaderSync; elsewhere a TypeError naming this option), a file path
   * (Node: fs.readSync), or bytes in memory (Uint8Array / ArrayBuffer: keeps them out of the wasm heap only). In a
   * cross-origin-isolated worker a Blob's layers are read by a helper worker into one SharedArrayBuffer (no new
   * ArrayBuffer a read; ended by the model's delete()), elsewhere with FileReaderSync on the model's thread. A read
   * that fails, or a file whose size changed since the load, makes that run / generate throw an Error naming the
   * file and the tensor; the model works again once the file is readable. Not with `weights8`. Default false.
   */
  streamWeights?: boolean;
  /** called while the weights load, non-decreasing in [0, 1] */
  onProgress?: (fraction: number) => void;
  /**
   * Stops the load: the weights are fed tensor by tensor with a turn of the event loop between them, and an abort
   * rejects with name 'AbortError', frees what the load allocated and leaves the module and earlier models working.
   * (Running out of memory rejects with an Error saying "out of memory"; the heap goes back to where it was.)
   */
  signal?: AbortSignal;
}

/**
 * A checkpoint model's `config` also holds its layout, read from what the core runs (for a one-line summary such as
 * "Llama · 16 layers · 32 query heads sharing 8 K/V heads · RoPE θ 500000, llama3 ×32 · RMSNorm · SwiGLU · BF16 2.47 GB").
 */
export interface CheckpointLayout {
  numLayers: number;
  numHeads: number;
  numKeyValueHeads: number;
  headDim: number;
  /** 'layernorm' | 'rmsnorm' | 'rmsnorm1p' (Gemma's x / rms(x) · (1 + w)) */
  norm: string;
  /** a gated MLP (SwiGLU / GeGLU): down(act(gate(x)) · up(x)) */
  gated: boolean;
  activation: string;
  rope: { theta: number; type: 'default' | 'linear' | 'dynamic' | 'llama3' | 'yarn'; factor: number; rotaryDim: number } | null;
  /** the widest sliding window (0: none) and how many layers have none */
  slidingWindow: number;
  globalLayers: number;
  attnSoftcap: number;
  finalSoftcap: number;
  qkNorm: boolean;
  /** loadPretrained only: config.model_type, the float tensors' stored dtype(s) ('BF16', 'F32', 'BF16+F32') and bytes */
  checkpoint?: { modelType: string; dtype: string; bytes: number; /** loaded with streamWeights */ streamed: boolean };
}

// ---- looking inside (bindings/js/analysis.js; README "Looking inside")

/** Per-head scores of headScores: one value per head, [numLayers, numHeads] row-major (layer-major). */
export interface HeadScores {
  numLayers: number;
  numHeads: number;
  /** mean over rows i >= 1 of w[i, i-1]. A head that always attends to the previous token scores 1; uniform, 1/n. */
  previousToken: Float32Array;
  /** mean over rows of w[i, 0]: the share of attention on the first position (an attention sink). */
  sinkShare: Float32Array;
  /**
   * Only with `ids`: mean, over the rows that have an earlier identical id, of the weight on those earlier
   * occurrences; NaN for every head when no row has one.
   */
  duplicateToken?: Float32Array;
  /**
   * Only with `period` T: mean over the last T rows of w[i, i-T+1], the induction stripe of [BOS?] + R + R
   * (TransformerLens's induction score on a repeated random sequence).
   */
  induction?: Float32Array;
}

/** qkMap's result. */
export interface QkMap {
  /** [nq, 2]: each query's coordinates on the two components. */
  queries: Float32Array;
  /** [nk, 2]: each key's coordinates. */
  keys: Float32Array;
  /** [2]: the fraction of the joint set's total variance along each component. */
  explainedVariance: Float32Array;
  /** [2, d]: the unit principal directions; each one's largest-magnitude coordinate is positive. */
  components: Float32Array;
}

/** A token the user picks: an id, or a text that is one token (' Mary', or the vocabulary's spelling 'ĠMary'). */
export type TokenChoice = number | string;

/** Progress and cancellation of a sweep (patch, ablationSweep). */
export interface SweepControl {
  /** called with (sites done, sites in all) after each chunk of sites (about 40 ms of work) */
  onProgress?: (done: number, total: number) => void;
  /** aborting rejects the sweep with the signal's reason (an AbortError) before the next chunk */
  signal?: AbortSignal;
}

/** headMeans' result: every head's mean weights · V over every position of the texts. */
export interface HeadMeans {
  numLayers: number; numHeads: number; headDim: number;
  /** rows averaged (every position of every text) */
  positions: number;
  /** [numLayers, numHeads, headDim] */
  means: Float32Array;
}

/** patch's result: metric = logit[tokens[0]] − logit[tokens[1]] at the last position. */
export interface PatchResult {
  granularity: 'head' | 'residual';
  numLayers: number;
  /** numHeads ('head') or n ('residual') */
  cols: number;
  /** [numLayers, cols]: the metric of the corrupted run with that one site taken from the clean run */
  values: Float32Array;
  /** (values − corrupted) / (clean − corrupted): 0 = no effect, 1 = the clean run's metric */
  normalized: Float32Array;
  clean: number; corrupted: number;
  /** the two token ids of the metric */
  ids: number[];
  /** the corrupted prompt's tokens */
  tokens: string[];
}

/** ablationSweep's result. */
export interface AblationSweep {
  metric: 'loss' | 'logit';
  numLayers: number; numHeads: number;
  /** [numLayers, numHeads]: the metric with that one head ablated */
  values: Float32Array;
  /** the metric of the unablated run */
  base: number;
  /** values − base */
  delta: Float32Array;
  /** every head, largest |delta| first */
  ranking: { layer: number; head: number; delta: number }[];
  tokens: string[];
}

/** logitAttribution's result. */
export interface LogitAttribution {
  numLayers: number; numHeads: number;
  /** [numLayers, numHeads]: each head's direct contribution to the token's logit at the last position */
  values: Float32Array;
  id: number;
  /** the token's logit (before final soft-capping) */
  logit: number;
  /** the final norm's scale, frozen: sqrt(var + eps) (LayerNorm) or rms (RMSNorm) of the last residual; 1 without */
  scale: number;

/** ropeExplain's arguments: a model's RoPE settings (config.json's names in camelCase), one q and one k. */
export interface RopeExplainArgs {
  /** values per head; the first int(headDim · partialRotaryFactor) rotate, in pairs (i, i + r/2) (rotate_half) */
  headDim: number;
  /** rope_theta (default 10000) */
  theta?: number;
  /** partial_rotary_factor in (0, 1] (default 1) */
  partialRotaryFactor?: number;
  /** max_position_embeddings: needed by 'dynamic' and 'yarn' */
  maxPositions?: number;
  /** rope_scaling; absent = 'default' */
  scaling?: {
    type?: 'default' | 'linear' | 'dynamic' | 'llama3' | 'yarn';
    factor?: number; lowFreqFactor?: number; highFreqFactor?: number; originalMaxPositions?: number;
    attentionFactor?: number; betaFast?: number; betaSlow?: number;
  };
  /** [headDim] each: a query and a key before rotation */
  q: Tensor; k: Tensor;
  /** the query's and the key's positions (>= 0) */
  m: number; n: number;
  /** the offsets m − n of `curve`, from <= to (default 0, 0; at most 65,536 points) */
  from?: number; to?: number;
}

/** ropeExplain's result. */
export interface RopeExplain {
  rotaryDim: number;
  /** [rotaryDim/2] the inverse frequencies θᵢ after scaling (Hugging Face's modeling_rope_utils) */
  invFreq: Float64Array;
  /** yarn's cos/sin factor; 1 otherwise */
  attentionScaling: number;
  /** [headDim] R(m)·q and R(n)·k, as a model run rotates them (float32) */
  qRotated: Float32Array; kRotated: Float32Array;
  /** [rotaryDim/2] the angles m·θᵢ and n·θᵢ (radians) */
  angleQ: Float64Array; angleK: Float64Array;
  /** (R(m)q)·(R(n)k) in float64, before the 1/√d scale */
  score: number;
  from: number; to: number;
  /** [to − from + 1]: the score with the key at p = max(0, −from) and the query at p + offset (float64) */
  curve: Float64Array;
}

export interface AttnScope {
  /** The package version. */
  readonly version: string;
  /** True when the SIMD128 build is running. */
  readonly simd: boolean;
  /** Threads the computations use; 1 means the single-threaded build is running. */
  readonly threads: number;
  /** True when the fused multiply-add (relaxed SIMD) GEMM micro-kernel runs. */
  readonly relaxedSimd: boolean;
  /**
   * How the running build was chosen. With the options left at 'auto', a build that fails to start (a script
   * refused for its MIME type or missing, a failed compile or instantiation, pool threads that never come up)
   * gives way to the next: threaded SIMD128, then single-threaded SIMD128, then scalar.
   * @example as.startup // { fallbacks: [{ build: 'simd-threads', reason: 'dist/attnscope.simd.mt.worker.cjs is served as application/octet-stream, …' }], singleThread: 'failed' }
   */
  readonly startup: {
    /** The builds that failed to start before this one, in order, each with its reason. */
    readonly fallbacks: ReadonlyArray<{ readonly build: 'simd-threads' | 'simd' | 'scalar'; readonly reason: string }>;
    /**
     * Why one thread runs; null when several do. 'requested' (threads: 1), 'no-simd' (the threaded build is SIMD128
     * only), 'not-isolated' (no SharedArrayBuffer: the page lacks COOP + COEP), 'not-embedded' (the single-file
     * page embeds no threaded build), 'one-core', 'failed' (the threaded build failed to start: see fallbacks).
     */
    readonly singleThread: null | 'requested' | 'no-simd' | 'not-isolated' | 'not-embedded' | 'one-core' | 'failed';
  };

  /**
   * Sinusoidal positional encoding [n, d]: PE[p,2i] = sin(p / base^(2i/d)), PE[p,2i+1] = cos(p / base^(2i/d)).
   * @example as.positionalEncoding({ n: 6, d: 8 })
   */
  positionalEncoding(args: { n: number; d: number; base?: number }): Float32Array;

  /**
   * Row-wise, max-subtracted softmax of x [rows, cols]; -Infinity entries give 0, an all -Infinity row gives zeros.
   * @example as.softmax({ x: new Float32Array([1, 2, 3]), rows: 1, cols: 3 })
   */
  softmax(args: { x: Tensor; rows: number; cols: number }): Float32Array;

  /**
   * Per-row LayerNorm of x [n, d] with biased variance, as torch.nn.LayerNorm (gamma 1 / beta 0 when omitted).
   * @example as.layerNorm({ x, n: 2, d: 4, eps: 1e-5 })
   */
  layerNorm(args: { x: Tensor; n: number; d: number; gamma?: Tensor; beta?: Tensor; eps?: number }): Float32Array;

  /**
   * scores = X·Xᵀ (unscaled), weights = softmax(scores), context = weights·X. X is [n, d].
   * @example as.simpleSelfAttention({ x, n: 6, d: 3 }).weights
   */
  simpleSelfAttention(args: { x: Tensor; n: number; d: number }): { scores: Float32Array; weights: Float32Array; context: Float32Array };

  /**
   * scores = scale·Q·Kᵀ (blocked entries -Infinity), weights = row softmax, output = weights·V.
   * q [nq, dk], k [nk, dk], v [nk, dv]; scale defaults to 1/sqrt(dk).
   * @example as.scaledDotProductAttention({ q, k, v, nq: 2, nk: 3, dk: 4, dv: 4, causal: true })
   */
  scaledDotProductAttention(args: {
    q: Tensor; k: Tensor; v: Tensor; nq: number; nk: number; dk: number; dv: number;
    mask?: Mask; causal?: boolean; scale?: number;
  }): AttentionResult;

  /**
   * torch.nn.MultiheadAttention(batch_first=True) with need_weights=True, average_attn_weights=False.
   * wq [dModel,dModel], wk [kdim,dModel], wv [vdim,dModel], wo [dModel,dModel]; output [nq,dModel];
   * weights [numHeads, nq, nk] (omitted when needWeights is false). key defaults to query, value to key.
   * @example as.multiHeadAttention({ query: x, nq: 4, dModel: 8, numHeads: 2, wq, wk, wv, wo })
   */
  multiHeadAttention(args: {
    query: Tensor; key?: Tensor; value?: Tensor; nq: number; nk?: number; dModel: number; numHeads: number;
    kdim?: number; vdim?: number; wq: Tensor; wk: Tensor; wv: Tensor; wo: Tensor;
    bq?: Tensor; bk?: Tensor; bv?: Tensor; bo?: Tensor; mask?: Mask; causal?: boolean; needWeights?: boolean;
  }): { output: Float32Array; weights?: Float32Array };

  /**
   * A "prepared" multiHeadAttention: the weights are validated once (finiteness included) and kept in wasm
   * memory, so each forward() copies only its inputs. Same shapes and defaults as multiHeadAttention
   * (kdim, vdim default to dModel); forward() gives bit-identical results and the same errors (named
   * `forward: …`). Free it with delete().
   * @example
   *   const mha = as.createMultiHeadAttention({ dModel: 8, numHeads: 2, wq, wk, wv, wo, bq, bk, bv, bo });
   *   const { output, weights } = mha.forward({ query: x, nq: 4, causal: true }); // output [4,8], weights [2,4,4]
   *   mha.delete();
   */
  createMultiHeadAttention(args: {
    dModel: number; numHeads: number; kdim?: number; vdim?: number; wq: Tensor; wk: Tensor; wv: Tensor; wo: Tensor;
    bq?: Tensor; bk?: Tensor; bv?: Tensor; bo?: Tensor;
  }): MultiHeadAttention;

  /**
   * Bahdanau additive attention: score[i,j] = wv · tanh(q_i·Wq + k_j·Wk); keys j >= validLen are blocked.
   * @example as.additiveAttention({ queries, keys, values, nq: 1, nk: 10, dq: 20, dk: 2, dv: 4, hidden: 8, wq, wk, wv, validLen: 2 })
   */
  additiveAttention(args: {
    queries: Tensor; keys: Tensor; values: Tensor; nq: number; nk: number; dq: number; dk: number; dv: number;
    hidden: number; wq: Tensor; wk: Tensor; wv: Tensor; validLen?: number;
  }): AttentionResult;

  /**
   * Nadaraya–Watson kernel regression: weights[i,j] = softmax_j(-((xQuery_i - xTrain_j)·w)² / 2), yPred = weights·yTrain.
   * @example as.kernelRegression({ xTrain, yTrain, xQuery, w: 1 })
   */
  kernelRegression(args: { xTrain: Tensor; yTrain: Tensor; xQuery: Tensor; w?: number }): { weights: Float32Array; yPred: Float32Array };

  /**
   * torch.nn.TransformerEncoderLayer(batch_first=True, dropout=0); weights: [numHeads, n, n] of its self-attention.
   * @example as.transformerEncoderLayer({ x, n: 4, dModel: 8, numHeads: 2, dFF: 16, params })
   */
  transformerEncoderLayer(args: {
    x: Tensor; n: number; dModel: number; numHeads: number; dFF: number; params: EncoderLayerParams;
    normFirst?: boolean; activation?: 'relu' | 'gelu'; eps?: number; mask?: Mask; causal?: boolean;
  }): { output: Float32Array; weights: Float32Array };

  /**
   * torch.nn.TransformerDecoderLayer(batch_first=True, dropout=0): causal self-attention (default), cross-attention
   * over memory [m, dModel] (memoryMask [n, m]), feed-forward. selfWeights [numHeads,n,n], crossWeights [numHeads,n,m].
   * @example as.transformerDecoderLayer({ x, memory, n: 3, m: 5, dModel: 8, numHeads: 2, dFF: 16, params })
   */
  transformerDecoderLayer(args: {
    x: Tensor; memory: Tensor; n: number; m: number; dModel: number; numHeads: number; dFF: number;
    params: DecoderLayerParams; normFirst?: boolean; activation?: 'relu' | 'gelu'; eps?: number;
    causal?: boolean; memoryMask?: Mask;
  }): { output: Float32Array; selfWeights: Float32Array; crossWeights: Float32Array };

  // ---- looking inside (bindings/js/analysis.js; README "Looking inside")

  /**
   * Head detectors for every head. `weights`: one layer's [H, n, n] (head, query, key) or an array of them, one
   * per layer (e.g. a trace's layers[l].attention.weights). `ids` (length n) adds duplicateToken; `period` T
   * (1 <= T, 2T <= n) adds induction, for an input built by repeatedTokens({ length: T }).
   * @example
   *   const { ids, period } = as.repeatedTokens({ vocabSize: 50257, length: 20, seed: 1, bos: 50256 });
   *   const run = gpt2.run(text);  // your model on these ids (e.g. decoded to text that re-encodes to them)
   *   const s = as.headScores({ weights: run.layers.map((l) => l.attention.weights), numHeads: 12, n: ids.length, ids, period });
   *   s.induction  // [numLayers * 12]
   */
  headScores(args: {
    weights: Tensor | Tensor[]; numHeads: number; n: number; ids?: Int32Array | ArrayLike<number>; period?: number;
  }): HeadScores;

  /**
   * [bos] + R + R where R is `length` ids drawn uniformly from [0, vocabSize) by a seeded SplitMix64 generator:
   * the same seed gives the same ids in every build. `period` is `length`, ready for headScores.
   * @example as.repeatedTokens({ vocabSize: 100, length: 4, seed: 7 }).ids.length  // 8
   */
  repeatedTokens(args: { vocabSize: number; length: number; seed: number; bos?: number }): { ids: Int32Array; period: number };

  /**
   * Attention flow (Abnar & Zuidema 2020): per layer M = rows-renormalised(mean over heads of A + I); a graph with
   * an edge from (layer l+1, i) to (layer l, j) of capacity M_l[i, j]; flow[o, v] = the maximum flow from output
   * position o at the top to input position v at the bottom. `flow` is [n, n] (every output) or [1, n] (`output`).
   * Divide a row by its sum for the paper's normalised relevance. numLayers·n² is at most 2^22 (the graph's edges).
   * @example as.attentionFlow({ layers: run.layers.map((l) => l.attention.weights), numHeads: 2, n, output: n - 1 }).flow
   */
  attentionFlow(args: { layers: Tensor[]; numHeads: number; n: number; output?: number }): { flow: Float32Array };

  /**
   * AttentionViz's joint query/key map (Yeh et al. 2023): with `normalize` (default true) keys are translated so
   * their mean is the queries' mean and queries/keys scaled (q*c, k/c) to equal mean norms — each q·k changes only
   * by a per-query constant, so nearness reads as attention — then both sets are projected on the first two
   * principal components of the joint set (float64 PCA). 2 <= d <= 1024.
   * @example const { queries, keys } = as.qkMap({ q, k, nq: 10, nk: 10, d: 64 });
   */
  qkMap(args: { q: Tensor; k: Tensor; nq: number; nk: number; d: number; normalize?: boolean }): QkMap;

  /**
   * Every head's mean output (its weights · V, before W_O) over every position of `texts`, for mean ablation:
   * `run(text, { ablate: [{ layer, head, mean: means.subarray(((layer * numHeads) + head) * headDim, …) }] })`.
   * Language models and encoders; not encoder-decoder models.
   */
  headMeans(model: Model, texts: string[]): HeadMeans;

  /**
   * Activation patching between a clean and a corrupted prompt of the same token length: for every site (a head's
   * weights · V at every position, or the input of layer l at position p) the corrupted run with that site taken
   * from the clean run, scored by logit[tokens[0]] − logit[tokens[1]] at the last position. Each site costs one
   * forward from its layer on (both prompts are traced once). Needs a language-model head.
   * @example
   *   const r = await as.patch(gpt2, { clean: 'When Mary and John went to the store, John gave a drink to',
   *     corrupted: 'When Mary and John went to the store, Mary gave a drink to', tokens: [' Mary', ' John'] });
   */
  patch(model: Model, args: {
    clean: string; corrupted: string; tokens: [TokenChoice, TokenChoice]; granularity?: 'head' | 'residual';
  } & SweepControl): Promise<PatchResult>;

  /**
   * Ablates every head in turn (zero, or with `means` from headMeans mean ablation) and measures the effect:
   * metric 'loss' (default: the text's loss, Hugging Face's labels = input_ids) or 'logit' (tokens[0]'s logit at
   * the last position). Each head costs one forward from its layer on, from the cached run.
   */
  ablationSweep(model: Model, text: string, args?: {
    metric?: 'loss' | 'logit'; tokens?: [TokenChoice]; means?: Float32Array;
  } & SweepControl): Promise<AblationSweep>;

  /**
   * Direct logit attribution at the last position toward `token`, per head, with the final norm's scale frozen
   * (TransformerLens's apply_ln_to_stack): head output · W_O[head rows], centred for LayerNorm, / the final norm's
   * scale on the full residual, · (gamma ⊙ the token's unembedding). Biases and soft-capping are no head's and are
   * left out. Pre-norm models only (a post-norm block's output is normalised again: an error says so).
   */
  logitAttribution(model: Model, text: string, token: TokenChoice): LogitAttribution;

   * RoPE for one query and one key (issue 28, the page's RoPE panel), from the same frequency tables and rotation a
   * model run uses: q and k rotated to positions m and n, the angles per pair, and the score against the relative
   * offset m − n (which is all it depends on: R(m)ᵀR(n) = R(n − m)). Dynamic NTK takes its frequencies for a
   * sequence holding every position used.
   * @example as.ropeExplain({ headDim: 64, theta: 500000, scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 }, q, k, m: 5, n: 2, from: -64, to: 64 }).curve
   */
  ropeExplain(args: RopeExplainArgs): RopeExplain;

  /**
   * word: runs of Unicode letters/digits are tokens, every other non-space character is its own token;
   * char: every user-perceived character (grapheme cluster) except whitespace.
   * @example as.tokenize('Hello, world!', { kind: 'word' }).tokens // ['Hello', ',', 'world', '!']
   */
  tokenize(text: string, options?: { kind?: 'word' | 'char' }): Tokenization;

  /**
   * GPT-2 byte-level BPE from encoder.json (string or parsed object) and vocab.bpe text.
   * @example const bpe = as.createBpeTokenizer({ vocab, merges }); bpe.encode('Hello world').ids // [15496, 995]
   */
  createBpeTokenizer(args: { vocab: string | Record<string, number>; merges: string }): BpeTokenizer;

  /**
   * Builds a transformer pipeline (text -> tokens -> embeddings + positions -> layers -> every intermediate).
   * Free it with delete().
   * @example const model = as.createModel({ dModel: 16, numHeads: 2, numLayers: 2 }); model.run('Hello world').layers[0].attention.weights
   */
  createModel(config?: ModelConfig): Model;

  /**
   * Loads a Hugging Face GPT-2 or BERT checkpoint (the user's own files; nothing leaves the process/page).
   * @example const gpt2 = await as.loadPretrained({ config, weights: file, tokenizer }); gpt2.generate('Hello', { maxNewTokens: 8 })
   */
  loadPretrained(options: PretrainedOptions): Promise<Model>;

  /**
   * The config.model_type values whose layers `streamWeights` keeps in the file (the decoder-only families: 'llama',
   * 'mistral', 'qwen2', …); any other is an Error naming streamWeights. From the core, a fresh array each time.
   * @example as.streamableModelTypes.includes(JSON.parse(configText).model_type)
   */
  get streamableModelTypes(): string[];

  /**
   * Loads a Hugging Face tokenizer.json (text or parsed object) on its own: GPT-2/BERT files, SentencePiece-style
   * BPE with byte fallback (Llama 2, TinyLlama, Mistral, Gemma) and byte-level BPE with a Split regex (Llama 3,
   * Qwen2/3). A component or Split pattern attnscope does not implement throws an Error naming it. Also SentencePiece
   * model files: `{ sentencepiece }` (T5's spiece.model) and `{ source, target, vocab }` (Marian); a truncated or
   * malformed file throws an Error naming it (`loadTokenizer: tokenizer.sentencepiece is truncated or malformed in …`).
   * @example const tok = as.loadTokenizer(await (await fetch('tokenizer.json')).text()); tok.encode('Hello world').ids
   * @example const t5 = as.loadTokenizer({ sentencepiece: new Uint8Array(await (await fetch('spiece.model')).arrayBuffer()) })
   */
  loadTokenizer(tokenizerJson: string | object | SentencePieceFiles | MarianFiles): HfTokenizer;

  /** Wasm heap facts, for leak checks. */
  memoryStats(): MemoryStats;

  // ---- bundled trained models (types at the end of this file; API.md "Bundled trained models")

  /** The models shipped in the package, from their config.json: [{ name, task, architecture, description }]. */
  get bundledModels(): BundledModelInfo[];

  /**
   * Loads a shipped model from the package (Node) or the same origin (browsers), offline. An unknown name is a
   * RangeError listing the bundled names. Free the model with delete().
   * @example (await as.loadBundled('dates')).generate('November 22, 2026').text  // '2026-11-22'
   */
  loadBundled(name: 'dates' | 'reverse' | 'english' | 'translate-en-zh'): Promise<Model>;
  loadBundled(name: 'dates-bahdanau'): Promise<GruModel>;
  loadBundled(name: 'nadaraya-watson'): Promise<KernelRegressionModel>;
  loadBundled(name: string): Promise<Model | GruModel | KernelRegressionModel>;

  /**
   * Reads attention computed elsewhere (PyTorch `output_attentions=True`, written by the Python helper
   * `attnscope.save`): a safetensors file with tensors `attentions.<i>` `[heads, n, n]` or `[1, heads, n, n]`
   * (F32, F16 or BF16, widened to float32), optional `cross_attentions.<i>` `[heads, n, m]`, and `__metadata__`
   * `tokens` (a JSON array of n strings), `source_tokens` (m strings, with cross-attention), `model` (optional).
   * The head count may differ between layers. A malformed or truncated file, a shape that disagrees with the
   * tokens, or weights that are not probability rows (negative, non-finite, a row summing to more than 1 + 1e-3
   * for F32 or 1 + 1e-2 for F16/BF16) throw an Error naming the tensor or field.
   * @example
   *   const file = as.readAttentionFile(new Uint8Array(await (await fetch('gpt2.attn.safetensors')).arrayBuffer()));
   *   file.layers[5].attention.weights;  // Float32Array [heads, n, n]
   */
  readAttentionFile(bytes: Uint8Array | ArrayBuffer): AttentionFile;

  /**
   * Opens an attention file lazily, for files too big to hold (a 32-layer x 32-head x 1024-token F32 file is 4 GiB):
   * only the header is read when it opens; `head()` reads exactly one head's bytes (Blob.slice in browsers) and
   * checks them with the same rules as readAttentionFile (errors name the tensor, head, row and column).
   * @example
   *   const f = await as.openAttentionFile(fileInput.files[0]);
   *   const w = await f.head(5, 3);  // Float32Array [n, n], layer 5 head 3
   *   f.close();
   */
  openAttentionFile(source: Blob | { size: number; read(begin: number, end: number): Promise<Uint8Array> }): Promise<LazyAttentionFile>;
}

/**
 * Loads the WebAssembly module (from the package in Node, next to the module in browsers).
 * @example
 *   import { createAttnScope } from 'attnscope';
 *   const as = await createAttnScope();
 */
export function createAttnScope(options?: CreateOptions): Promise<AttnScope>;

// ---- bundled trained models (bindings/js/bundled.js)

/** One matrix stack of an attention file: `weights` [numHeads, n, keys] (keys: n, or m for cross-attention). */
export interface AttentionFileWeights {
  weights: Float32Array;
  /** This layer's head count (layers may differ). */
  numHeads: number;
}

/** `readAttentionFile`'s result (API.md "Attention files"). */
export interface AttentionFile {
  /** The n query tokens (`__metadata__.tokens`). */
  tokens: string[];
  /** The m cross-attention key tokens (`__metadata__.source_tokens`), when the file has them. */
  sourceTokens?: string[];
  /** `__metadata__.model`, when given. */
  model?: string;
  n: number;
  /** The largest head count over the layers (every layer's when they agree). */
  numHeads: number;
  layers: { attention: AttentionFileWeights; cross?: AttentionFileWeights }[];
}

/** `openAttentionFile`'s result: the header read, each head's weights read when asked for. */
export interface LazyAttentionFile {
  tokens: string[];
  sourceTokens?: string[];
  model?: string;
  n: number;
  numHeads: number;
  layers: { numHeads: number; crossHeads?: number }[];
  /** One head's weights [n, keys], read and checked now. */
  head(layer: number, head: number, attention?: 'self' | 'cross'): Promise<Float32Array>;
  /** One layer's weights [heads, n, keys], read head by head. */
  layer(layer: number, attention?: 'self' | 'cross'): Promise<AttentionFileWeights>;
  close(): void;
}

export interface BundledModelInfo {
  name: string;
  task: string;
  architecture: 'encoder-decoder' | 'decoder' | 'gru-bahdanau' | 'kernel-regression';
  description: string;
}

/** Every decoder step of a GRU run: T steps, S source tokens, L layers, H hidden size, V vocabulary. */
export interface GruRun {
  sourceTokens: string[]; sourceIds: Int32Array;
  /** The token each step reads (<s>, then the previous one) and each step's argmax prediction. */
  inputTokens: string[]; inputIds: Int32Array; tokens: string[]; ids: Int32Array;
  steps: number; sourceLength: number; numLayers: number; hiddenSize: number; vocabSize: number;
  /** [T, S] the alignment: row t = the additive attention of step t over the source. */
  weights: Float32Array;
  /** [T, S] wv · tanh(q Wq + k_j Wk). */
  scores: Float32Array;
  contexts: Float32Array;       // [T, H]
  states: Float32Array;         // [T, L, H] every decoder layer's state after step t
  outputs: Float32Array;        // [T, H] the top layer's state after step t
  logits: Float32Array;         // [T, V]
  encoderOutputs: Float32Array; // [S, H]
  encoderStates: Float32Array;  // [S, L, H]
  encoderFinal: Float32Array;   // [L, H] the decoder's initial state
}

/** 'dates-bahdanau': d2l's GRU encoder-decoder with additive (Bahdanau) attention. */
export interface GruModel {
  readonly config: { architecture: 'gru-bahdanau'; name: string; task: string; vocabSize: number; embedSize: number;
    numHiddens: number; numLayers: number; attentionHidden: number };
  /** A string: greedy decoding, every step traced; { source, target }: teacher forcing on <s> + target. */
  run(input: string | { source: string; target: string }, options?: { maxNewTokens?: number }): GruRun;
  /** Greedy decoding; `alignment` [steps, sourceLength] has a row per step that ran (the </s> step included). */
  generate(input: string, options?: { maxNewTokens?: number }): {
    text: string; ids: Int32Array; tokens: string[]; stoppedAtEnd: boolean;
    sourceTokens: string[]; steps: number; sourceLength: number; alignment: Float32Array;
  };
  delete(): void;
}

/** 'nadaraya-watson': kernel regression with the fitted w; the data is config.json's. */
export interface KernelRegressionModel {
  readonly config: { architecture: 'kernel-regression'; name: string; task: string; w: number; xTrain: Float32Array;
    yTrain: Float32Array; xTest: Float32Array; yTrue: Float32Array;
    reference: { yPredLearned: number[]; yPredW1: number[] } };
  /** as.kernelRegression with the model's data; xQuery defaults to config.xTest, options.w to config.w. */
  run(xQuery?: Float32Array, options?: { w?: number }): { weights: Float32Array; yPred: Float32Array };
  predict(xQuery?: Float32Array, options?: { w?: number }): Float32Array;
  /** Throws: kernel regression generates no tokens. */
  generate(): never;
  delete(): void;
}
