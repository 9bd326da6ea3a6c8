// decoder_layer.h: one transformer decoder layer as torch.nn.TransformerDecoderLayer(batch_first=True,
// dropout=0): causal self-attention, cross-attention over the encoder memory and a feed-forward block,
// each with a residual connection and a LayerNorm (post-norm, or pre-norm with norm_first).
// Layer: model (composes attention/ and ops/).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/multi_head.h"
#include "core/status.h"
#include "model/encoder_layer.h"

namespace attnscope::model {

struct DecoderLayerArgs {
  std::span<const float> x, memory;  // [n, d_model], [m, d_model]
  int n = 0, m = 0, d_model = 0, num_heads = 0, d_ff = 0;
  attention::MhaWeights self_attn, cross_attn;  // JS params.self.{wq..bo}, params.cross.{wq..bo}
  FeedForwardWeights ff;                         // JS params.w1, b1, w2, b2
  NormWeights norm1, norm2, norm3;               // JS params.norm1Gamma .. params.norm3Beta
  bool norm_first = false;
  Activation activation = Activation::kRelu;
  double eps = 1e-5;
  bool causal = true;                         // self-attention: block key j > i
  std::span<const std::uint8_t> self_mask;    // empty or [n, n], 1 = may attend (combined with causal)
  std::span<const std::uint8_t> memory_mask;  // memory_mask: [n, m], 1 = may attend
  bool keep_trace = false;
};

struct DecoderLayerOutput {
  std::vector<float> output, self_weights, cross_weights;  // [n,d_model], [H,n,n], [H,n,m]
  attention::MhaOutput self_attn, cross_attn;              // keep_trace only
  // keep_trace only, [n, d_model] unless noted (JS trace names in brackets, docs/model.md). Block k (1 self-
  // attention, 2 cross-attention, 3 feed-forward): residualK = block input's residual + block output;
  // normK = post-norm: normK(residualK), the block's result; pre-norm: normK(block input), what the block reads.
  std::vector<float> residual1, norm1, residual2, norm2, residual3, norm3;
  std::vector<float> ff_hidden;  // [ffHidden] [n, d_ff]
  std::vector<float> ff_output;  // [ffOutput] ffHidden W2 + b2, before the residual
};

// JS transformerDecoderLayer(...) -> { output, selfWeights, crossWeights }.
//   post-norm: x1 = norm1(x + SA(x)); x2 = norm2(x1 + CA(x1, mem)); out = norm3(x2 + FF(x2))
//   pre-norm:  x1 = x + SA(norm1(x)); x2 = x1 + CA(norm2(x1), mem); out = x2 + FF(norm3(x2))
core::Result<DecoderLayerOutput> decoder_layer(const DecoderLayerArgs& a);

}  // namespace attnscope::model
