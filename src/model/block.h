// block.h: one transformer block — self-attention, optional cross-attention and a feed-forward network, each a
// sub-block with a residual connection and a LayerNorm, pre- or post-norm. Layer: model (composes attention/
// and ops/). The one owner of this math: encoder_layer(), decoder_layer() (the JS layer functions, which
// validate their arguments first) and the model's stack runner all call run_block(). No validation here:
// callers have checked shapes and finiteness (the model once, when it is created).
//
// Sub-block k = 1 self-attention, 2 cross-attention (when present), then the feed-forward one, with F_k the
// sub-block's function and LN_k its norm (names norm1, norm2, norm3 in that order):
//   post-norm: r_k = x + F_k(x);      x <- LN_k(r_k)     trace: residual[k] = r_k, norm[k] = LN_k(r_k)
//   pre-norm:  y = LN_k(x); r_k = x + F_k(y); x <- r_k   trace: residual[k] = r_k, norm[k] = y (what F_k read)
// with SA(y) = MHA(y, y, y; causal, self_mask), CA(y) = MHA(y, memory, memory; memory_mask),
// FF(y) = act(y W1 + b1) W2 + b2. These are torch.nn.TransformerEncoderLayer / DecoderLayer (batch_first,
// dropout 0), GPT-2's Block (pre-norm, causal) and BERT's BertLayer (post-norm).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/multi_head.h"
#include "attention/tiled.h"
#include "model/description.h"
#include "ops/activations.h"

namespace attnscope::model {

using ops::Activation;

struct FeedForwardWeights {
  core::WeightSpan w1;                    // [d_model,d_ff] (a checkpoint's may be half-width: core/weights.h)
  std::span<const float> b1;              // [d_ff]
  core::WeightSpan w2;                    // [d_ff,d_model]
  std::span<const float> b2;              // [d_model]
  core::WeightSpan w3;                    // gated (FeedForwardSettings::gated): the up projection, as w1 / b1
  std::span<const float> b3;
};
struct NormWeights {
  std::span<const float> gamma, beta;  // [d_model] each
};

struct BlockWeights {
  attention::MhaWeights self_attn, cross_attn;  // cross only with BlockArgs::cross
  FeedForwardWeights ff;
  NormWeights norm[3];  // norm1, norm2, norm3 (norm3 only with cross-attention)
  NormWeights post[2];  // BlockSpec::post_norms: post_attn_norm, post_ff_norm (weight only)
  std::span<const float> q_norm, k_norm;  // AttentionSettings::has_qk_norm: [head_dim] each
  std::span<const float> relative_bias;   // AttentionSettings::relative_table: [relative_buckets, num_heads]
};

// Decoding with a key/value cache (generate): the self-attention keys and values of every earlier position, and
// the projections of the memory (computed on the first step), so a step costs its new rows only.
struct KvCache {
  std::vector<float> k, v;  // [rows, d_model] (decoder checkpoints: [rows, kv_heads·head_dim], after RoPE) self-
                            // attention projections of positions 0..rows-1
  int rows = 0;
  std::vector<float> memory_k, memory_v;  // [m, d_model] cross-attention projections of the memory
};

struct BlockArgs {
  std::span<const float> x;       // [n, d_model]
  std::span<const float> memory;  // [m, d_model], cross-attention only
  int n = 0, m = 0, d_model = 0, num_heads = 0, d_ff = 0;
  const BlockWeights* w = nullptr;
  bool cross = false;
  bool norm_first = false;
  ops::Activation activation = ops::Activation::kRelu;
  double eps = 1e-5;
  bool causal = false;
  std::span<const std::uint8_t> self_mask;    // empty or [n, n], 1 = may attend (combined with causal)
  std::span<const std::uint8_t> memory_mask;  // empty or [n, m]
  std::span<const std::uint8_t> head_keep;  // empty or num_heads: 0 ablates that self-attention head (MhaArgs)
  std::span<const float> head_values;       // heads with head_keep 2: their weights · V [n, heads·head_dim]
  bool keep_trace = false;
  bool norm_stats = false;  // with keep_trace: the per-row mean and biased variance each LayerNorm used
  // Whether BlockOutput::self_attn.weights is wanted: false (run at trace 'none', decoding) leaves it empty, and the
  // self-attention then scores into one [n, nk] buffer per pool thread instead of a zeroed [H, n, nk] (MhaArgs
  // need_weights). keep_trace fills it either way.
  bool weights = true;
  // Decoding: x holds new rows at positions cache->rows.. ; self-attention reads the cache plus these rows and
  // appends their keys and values (the causal rule counts absolute positions). keep_trace must be false.
  KvCache* cache = nullptr;
  // Decoder checkpoints (description.h): when set, the self-attention follows these settings (grouped heads,
  // RoPE, q/k norms, windows, soft-capping), the norms are `norm_kind`, the FFN may be gated and the outputs of
  // the sub-blocks normalised (post_norms). Cross-attention is not combined with these.
  const AttentionSettings* attn = nullptr;
  NormKind norm_kind = NormKind::kLayerNorm;
  FeedForwardSettings ff;
  bool post_norms = false;
  // Tiled self-attention (attention/tiled.h, run option `heads`): the layer never materialises [H, n, n];
  // self_attn.weights stays empty and BlockOutput::head_weights holds the full maps of `want_heads` only. Keys
  // n_real.. are padding (the rule replaces self_mask). Not with keep_trace or a cache.
  bool tiled = false;
  int n_real = -1;
  std::span<const int> want_heads;
  // Run option `summaries`: BlockOutput::summary (rows 0..n_real-1, top_k keys per row), either path.
  bool summaries = false;
  int top_k = 0;
  // With attn: empty, or [num_heads, n, nk] added to the self-attention's scores (T5's relative position bias,
  // computed once per stack by relative_position_bias()); nk counts the cached rows too.
  std::span<const float> position_bias;
};

// T5Attention._relative_position_bucket: the bucket of relative position (key - query).
int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance);
// T5Attention.compute_bias: bias[h, i, j] = table[bucket(j - (first + i)), h] for queries at positions
// first..first+n-1 and keys 0..nk-1; table [num_buckets, num_heads].
std::vector<float> relative_position_bias(std::span<const float> table, int num_heads, int n, int nk, int first,
                                          const AttentionSettings& s);

struct BlockOutput {
  std::vector<float> output;            // [n, d_model]
  attention::MhaOutput self_attn, cross_attn;  // weights (self: with BlockArgs::weights); the rest with keep_trace
  // keep_trace only, [n, d_model] unless noted; index k-1 for sub-block k (2 or 3 sub-blocks)
  std::vector<float> residual[3], norm[3];
  std::vector<float> norm_mean[3], norm_var[3];  // norm_stats: [n] each, the statistics of norm[k]'s input
  std::vector<float> ff_hidden;  // [n, d_ff] act(y W1 + b1)
  std::vector<float> ff_output;  // [n, d_model] before the residual
  int sub_blocks = 2;            // 2, or 3 with cross-attention
  attention::HeadSummaries summary;  // BlockArgs::summaries: the self-attention's, per head
  std::vector<std::vector<float>> head_weights;  // tiled: [n, n] per BlockArgs::want_heads entry
  // Set when a raw attention score overflowed float32 (finite inputs): "selfWeights" or "crossWeights".
  const char* overflowed = nullptr;
};

BlockOutput run_block(const BlockArgs& a);

// LayerNorm of x [n, d_model] into a new vector.
std::vector<float> layer_norm(std::span<const float> x, int n, int d_model, const NormWeights& w, double eps);
// The norm `kind` (LayerNorm, RMSNorm w or (1 + w); the RMS kinds read w.gamma only) of x [n, d] into a new vector.
std::vector<float> normalize(std::span<const float> x, int n, int d, const NormWeights& w, double eps, NormKind kind);

// act(x W1 + b1) W2 + b2 for x [n, d_model]; the hidden activations are moved into *hidden if given. With
// `gated`: (act(x W1 + b1) ⊙ (x W3 + b3)) W2 + b2 (Hugging Face's LlamaMLP: down(act(gate(x)) · up(x))).
// Without `hidden` the rows go through in blocks of kFeedForwardRows, so the [rows, d_ff] activations are bounded
// (a Llama-3.2-1B shape's gate and up at 8,192 tokens are 268 MB each in one pass); the result is bit for bit the
// one-pass one (tests/cpp/feed_forward_rows_test.cpp).
inline constexpr int kFeedForwardRows = 384;  // a multiple of 4, 6, 8, 12, 16, 32, 64 (row tiles, SIMD widths)
std::vector<float> feed_forward(std::span<const float> x, int n, int d_model, int d_ff, const FeedForwardWeights& ff,
                                ops::Activation activation, std::vector<float>* hidden, bool gated = false);

}  // namespace attnscope::model
