// description.h: a transformer as a description, not a code path — embeddings, a list of blocks per stack,
// final norms and heads. Layer: model. config.cpp describes createModel's configurations (encoder, decoder,
// encoder-decoder, the 'simple' first layer); hf_config.cpp describes Hugging Face GPT-2 and BERT checkpoints;
// the runner (stack.cpp, embed.cpp, heads.cpp) reads nothing else.
//
// Parameters are named as docs/model.md's safetensors table ([in, out] layout): a block with prefix
// "encoder.layers.0." owns "encoder.layers.0.self_attn.wq" … "norm3.bias"; a stack "decoder" with a final
// norm owns "decoder.norm.weight/bias"; embeddings own "embedding.weight", "positional.weight",
// "token_type.weight", "embedding.norm.*"; heads own "lm_head.*" and "mlm.*".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ops/activations.h"
#include "ops/rope.h"

namespace attnscope::model {

using ops::Activation;

enum class PositionalKind { kSinusoidal, kLearned, kNone };  // 'sinusoidal' | 'learned' | 'none'

// Where a token's embedding row comes from.
enum class TokenRows {
  kSeeded,  // generated per token from the seed (embedding.h): no table, any vocabulary (createModel)
  kTable,   // "embedding.weight" [vocab_size, d_model]; seeded rows are used for ids the table lacks (createModel
            // BPE with a partial file) only when `seeded_fallback`
};

struct EmbeddingSpec {
  TokenRows rows = TokenRows::kSeeded;
  bool seeded_fallback = true;  // kTable: ids without a loaded row get seeded rows (createModel) or are an error
  int vocab_size = 0;           // kTable: rows of embedding.weight
  float scale = 1.0f;           // token rows are multiplied by this before positions are added
  PositionalKind positional = PositionalKind::kSinusoidal;
  double positional_base = 10000.0;
  int max_positions = 512;      // learned: rows of positional.weight; also the longest text for learned/absolute
  bool bounded = false;         // kNone: max_positions still bounds the text (max_position_embeddings, RoPE models)
  int token_types = 0;          // > 0: "token_type.weight" [token_types, d_model], row 0 added (BERT)
  bool norm = false;            // LayerNorm "embedding.norm.*" after the sum (BERT)
  double norm_eps = 1e-5;
  // Encoder-decoder checkpoints (hf_seq2seq_config.cpp):
  int positional_offset = 0;    // learned: position p reads row p + offset (BART/mBART: 2, the rows of padding)
  bool sinusoid_halves = false; // sinusoidal: sin in columns [0, d/2), cos in [d/2, d) (Marian), not interleaved
  // Each side has its own positions and embedding norm (BART): the source side reads "source.positional.weight"
  // and "source.embedding.norm.*", the target side the usual names; the token table is shared.
  bool per_side = false;
};

enum class BlockKind {
  kSimple,     // weightless X·Xᵀ -> softmax -> ·X; no residual, no FFN, no norms (the classic example)
  kAttention,  // self-attention [+ cross-attention] + feed-forward, each with a residual and a LayerNorm
};

// Which normalisation a block's, a stack's final and (Qwen3, Gemma 3) the per-head q/k norms are.
enum class NormKind {
  kLayerNorm,   // "<norm>.weight" and "<norm>.bias" (torch.nn.LayerNorm)
  kRms,         // "<norm>.weight" only: x / rms(x) · w (LlamaRMSNorm)
  kRmsPlusOne,  // "<norm>.weight" only: x / rms(x) · (1 + w) (GemmaRMSNorm; the stored weight is zero-centred)
};

// Settings of the decoder checkpoints (Llama, Mistral, Qwen2/3, Gemma 1/2/3, Phi-3) that compose into a block:
// the defaults are GPT-2's / torch's, so the blocks described before these existed read them unchanged.
// Self-attention weights: wq [d_model, num_heads·head_dim], wk and wv [d_model, kv_heads·head_dim], wo
// [num_heads·head_dim, d_model]; biases "bq" "bk" "bv" when qkv_bias, "bo" when out_bias.
struct AttentionSettings {
  int kv_heads = 0;         // grouped/multi-query attention (num_key_value_heads); 0 = num_heads
  int head_dim = 0;         // 0 = d_model / num_heads
  bool qkv_bias = true;     // attention_bias (Llama), always (Qwen2), never (Qwen3, Gemma, Phi-3)
  bool out_bias = true;     // attention_bias (Llama); never for Qwen2
  NormKind qk_norm = NormKind::kLayerNorm;  // kRms / kRmsPlusOne: per-head "self_attn.q_norm.weight" [head_dim]
  bool has_qk_norm = false;                 //   and "k_norm", applied before RoPE (Qwen3, Gemma 3)
  double scale = 0.0;       // 0 = head_dim^-0.5; Gemma 2/3: query_pre_attn_scalar^-0.5
  double softcap = 0.0;     // > 0: Gemma 2's attn_logit_softcapping
  int sliding_window = 0;   // > 0: query i sees keys j with i - j < window (and j <= i)
  bool rope = false;        // rotary position embeddings of q and k (rope_theta, rope_scaling, ...)
  ops::RopeSpec rope_spec;
  // T5's relative position bias (T5Attention.compute_bias): a bias [heads, n, nk] added to the scores of the
  // self-attention, read from block 0's "self_attn.relative_bias" [relative_buckets, heads] (the stack's first
  // block owns it: relative_table) and shared by every block of the stack; bidirectional in the encoder.
  int relative_buckets = 0;  // 0 = none
  int relative_max_distance = 128;
  bool relative_bidirectional = true;
  bool relative_table = false;
  // Cross-attention with these settings (head_dim, biases, scale; never RoPE, q/k norms, windows): T5.
  bool cross = false;
};

struct FeedForwardSettings {
  bool gated = false;  // down(act(gate(x)) · up(x)): "linear1" = gate, "linear3" = up, "linear2" = down
  bool bias = true;    // "linear1.bias" … (mlp_bias for the gated ones)
};

struct BlockSpec {
  BlockKind kind = BlockKind::kAttention;
  std::string prefix;  // parameter names: prefix + "self_attn.wq", prefix + "linear1.weight", prefix + "norm1.bias"
  bool causal = false;  // self-attention blocks key j > i
  bool cross = false;   // cross-attention over the memory (the encoder stack's output) after self-attention
  bool norm_first = false;  // pre-norm (GPT-2, norm_first=True) or post-norm (BERT, PyTorch's default)
  Activation activation = Activation::kRelu;
  double eps = 1e-5;
  NormKind norm = NormKind::kLayerNorm;  // norm1, norm2 (and norm3 with cross-attention)
  // Gemma 2/3: the attention's and the feed-forward's outputs are normalised before their residual adds
  // ("post_attn_norm.weight", "post_ff_norm.weight"), with norm1/norm2 before them as usual (pre-norm).
  bool post_norms = false;
  AttentionSettings attn;
  FeedForwardSettings ff;
};

// An attention block with the given settings (the one way config.cpp, hf_config.cpp and bundle.cpp make them).
inline BlockSpec attention_block(std::string prefix, bool causal, bool cross, bool norm_first, Activation activation,
                                 double eps) {
  BlockSpec b;
  b.prefix = std::move(prefix);
  b.causal = causal;
  b.cross = cross;
  b.norm_first = norm_first;
  b.activation = activation;
  b.eps = eps;
  return b;
}

struct StackSpec {
  std::string name;  // "encoder" | "decoder": names the final norm "<name>.norm.*"
  std::vector<BlockSpec> blocks;
  bool final_norm = false;  // "<name>.norm.weight/bias" after the last block (GPT-2's ln_f)
  double final_norm_eps = 1e-5;
  NormKind final_norm_kind = NormKind::kLayerNorm;
};

// Heads on the main stack's output.
struct HeadSpec {
  bool next_token = true;  // logits = h_last · Wᵀ over the vocabulary -> top-k (createModel, GPT-2)
  bool lm_head = false;    // W = "lm_head.weight" [d_model, vocab] (+ "lm_head.bias" when lm_bias); else tied
  bool lm_bias = false;
  bool mlm = false;        // BERT: "mlm.transform.weight/bias", act, "mlm.norm.*", decoder tied, "mlm.bias"
  double softcap = 0.0;    // > 0: logits = tanh(logits / c) · c (Gemma 2's final_logit_softcapping)
  double hidden_scale = 1.0;  // the hidden state is multiplied by this first (T5's tied head: d_model^-0.5)
  bool logits_bias = false;   // "lm_head.final_bias" [vocab] added to the logits (BART/Marian final_logits_bias)
  Activation mlm_activation = Activation::kGelu;
  double mlm_eps = 1e-12;
};

struct ModelDescription {
  std::string architecture;  // as the JS API names it: 'encoder', 'decoder', 'encoder-decoder', 'gpt2', 'bert'
  int d_model = 0, num_heads = 1, d_ff = 0;
  EmbeddingSpec embedding;
  StackSpec main;        // the encoder, the decoder-only stack, or (encoder-decoder) the decoder
  bool has_source = false;
  StackSpec source;      // encoder-decoder: the encoder stack over the source
  HeadSpec head;
  bool wrap_cls_sep = false;  // BERT: [CLS] text [SEP]
  bool target_bos = false;    // encoder-decoder: run()'s target side starts with the begin token (bundled models)
};

// Block l of the main stack: its heads and their width (a 'simple' layer is one head of d_model; a decoder checkpoint
// may set head_dim, which need not be d_model / num_heads: Qwen3, Gemma 2 / 3).
inline int heads_of(const ModelDescription& m, std::size_t l) {
  return m.main.blocks[l].kind == BlockKind::kSimple ? 1 : m.num_heads;
}
inline int head_dim_of(const ModelDescription& m, std::size_t l) {
  const BlockSpec& b = m.main.blocks[l];
  if (b.kind == BlockKind::kSimple) return m.d_model;
  return b.attn.head_dim > 0 ? b.attn.head_dim : m.d_model / m.num_heads;
}
// The model's head width as a run's trace and model.config report it: its first learned attention block's.
inline int model_head_dim(const ModelDescription& m) {
  for (std::size_t l = 0; l < m.main.blocks.size(); ++l) {
    if (m.main.blocks[l].kind != BlockKind::kSimple) return head_dim_of(m, l);
  }
  return m.d_model / m.num_heads;
}

}  // namespace attnscope::model
