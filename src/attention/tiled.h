// tiled.h: attention without the n×n matrix, and per-head summaries of attention weights. Layer: attention.
//
// tiled_attention(): flash-attention style. Queries go in blocks of kQueryTile rows; for each block the keys go
// in tiles of kKeyTile: scores of the tile (Q_b K_tᵀ · scale, soft-capped, masked), then the online softmax —
// a running row max m, sum l = Σ exp(s − m) and accumulator acc = Σ exp(s − m) v, rescaled by exp(m_old − m_new)
// when the max grows — and at the end concat row = acc / l. Memory: one [kQueryTile, kKeyTile] score tile and
// one [kQueryTile, head_dim] accumulator per head in flight, never [nq, nk]. The mask is a rule, not an array:
// key j is visible to query i (at position first + i) iff j < nk_real, and when causal j <= first + i, and with a
// window first + i − j < window. A row with no visible key gets zeros (as ops::masked_softmax_rows). Grouped
// heads read kv head h / (num_heads / kv_heads) (repeat_kv); head_keep zeroes an ablated head's columns.
//
// Summaries (both paths give the same numbers): per head, over the summarised rows i < rows,
//   entropy  = mean_i −Σ_j w_ij ln w_ij                          (nats; 0 for an all-zero row)
//   distance = mean_i Σ_j w_ij |i' − j|, i' = first + i           (mean attention distance, in tokens)
//   sink     = mean_i w_i0                                        (the share of weight on the first key)
// and per row the top_k keys by weight (ties: the smaller key first; fewer visible keys: id −1, weight 0).
// summarize_weights() reads materialised weights; tiled_attention() accumulates the same sums online (in double:
// Σ e^(s−m) s for the entropy, Σ e^(s−m) |i − j| for the distance, the top-k by score) and finishes them with
// the row's final max and sum.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace attnscope::attention {

struct HeadSummaries {
  int num_heads = 0, rows = 0, top_k = 0;
  std::vector<float> entropy, distance, sink;  // [num_heads]
  std::vector<std::int32_t> top_ids;           // [num_heads, rows, top_k]
  std::vector<float> top_weights;              // [num_heads, rows, top_k]
};

// From weights [num_heads, nq, nk] (rows 0..rows-1 summarised; query i at position first + i).
HeadSummaries summarize_weights(std::span<const float> weights, int num_heads, int nq, int nk, int rows, int top_k,
                                int first = 0);

struct TiledArgs {
  std::span<const float> q;     // [nq, num_heads · head_dim]
  std::span<const float> k, v;  // [nk, kv_heads · head_dim]
  int nq = 0, nk = 0, num_heads = 0, kv_heads = 0, head_dim = 0;
  double scale = 0.0;    // 0 = 1 / sqrt(head_dim), in float32 as attend_projected
  double softcap = 0.0;  // > 0: s = tanh(s / c) · c before the mask
  bool causal = false;
  int window = 0;   // > 0: sliding window
  int first = 0;    // position of query 0
  int nk_real = -1;  // keys >= nk_real are padding (blocked); -1 = nk
  std::span<const std::uint8_t> head_keep;  // empty or num_heads; 0 = ablated
  bool summaries = false;  // fill TiledOutput::summary
  int summary_rows = -1;   // rows summarised (-1 = nq)
  int top_k = 0;
};

struct TiledOutput {
  std::vector<float> concat;  // [nq, num_heads · head_dim] the heads' weights · V before W_O
  bool overflowed = false;    // a raw score was not finite (float32 overflow)
  HeadSummaries summary;
};

TiledOutput tiled_attention(const TiledArgs& a);

// The full [nq, nk] weights of one head under the same rule (what the materialised path gives for it): a page
// asks for the few heads on screen while the layer runs tiled.
std::vector<float> tiled_head_weights(const TiledArgs& a, int head);

}  // namespace attnscope::attention
