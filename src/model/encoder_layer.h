// encoder_layer.h: one transformer encoder layer as torch.nn.TransformerEncoderLayer(batch_first=True,
// dropout=0): self-attention and a two-layer feed-forward block, each with a residual connection and a
// LayerNorm, post-norm (default) or pre-norm (norm_first). Layer: model (composes attention/ and ops/).
// The math is model/block.h's run_block(); this file validates the JS function's arguments.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/multi_head.h"
#include "core/status.h"
#include "model/block.h"

namespace attnscope::model {

struct EncoderLayerArgs {
  std::span<const float> x;  // [n, d_model]
  int n = 0, d_model = 0, num_heads = 0, d_ff = 0;
  attention::MhaWeights attn;  // JS params.wq .. params.bo (biases required by the layer)
  FeedForwardWeights ff;       // JS params.w1, b1, w2, b2
  NormWeights norm1, norm2;    // JS params.norm1Gamma, norm1Beta, norm2Gamma, norm2Beta
  bool norm_first = false;
  Activation activation = Activation::kRelu;
  double eps = 1e-5;
  std::span<const std::uint8_t> mask;  // empty or n*n, 1 = may attend
  bool causal = false;
  bool keep_trace = false;
};

struct EncoderLayerOutput {
  std::vector<float> output;         // [n, d_model]
  std::vector<float> weights;        // [num_heads, n, n] of the self-attention (on norm1(x) when norm_first)
  attention::MhaOutput attn;         // keep_trace: the full MHA trace
  // keep_trace only, each [n, d_model] unless noted (JS trace names in brackets, docs/model.md):
  std::vector<float> attn_residual;  // [residual1] x + attention output (before norm1 in post-norm)
  std::vector<float> norm1;          // [norm1] post-norm: norm1(residual1); pre-norm: norm1(x), the attention input
  std::vector<float> ff_hidden;      // [ffHidden] activation(y W1 + b1) [n, d_ff], y the feed-forward input
  std::vector<float> ff_output;      // [ffOutput] ffHidden W2 + b2, before the residual
  std::vector<float> residual2;      // [residual2] feed-forward input's residual + ffOutput (pre-norm: = output)
  std::vector<float> norm2;          // [norm2] post-norm: norm2(residual2) = output; pre-norm: the FFN input
};

// JS transformerEncoderLayer(...) -> { output, weights }.
//   post-norm: x1 = norm1(x + SA(x));         out = norm2(x1 + FF(x1))
//   pre-norm:  x1 = x + SA(norm1(x));          out = x1 + FF(norm2(x1))
// with FF(y) = act(y W1 + b1) W2 + b2. A fully blocked query row follows multi_head_attention (zero
// weights, attention output = bo) where PyTorch gives NaN.
core::Result<EncoderLayerOutput> encoder_layer(const EncoderLayerArgs& a);

namespace detail {

// params.w1/b1/w2/b2 present with the right lengths and finite.
core::Status check_feed_forward(const char* fn, const FeedForwardWeights& ff, int d_model, int d_ff);
// params.<gamma_name>/<beta_name> present, [d_model], finite.
core::Status check_norm(const char* fn, const char* gamma_name, const char* beta_name, const NormWeights& norm,
                        int d_model);
// A layer's attention weights under `prefix` ("params.", "params.self."), its biases required (PyTorch's bias=True).
core::Status check_attention_block(const char* fn, const char* prefix, const attention::MhaWeights& w, int d_model);
}  // namespace detail

}  // namespace attnscope::model
