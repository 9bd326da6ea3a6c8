// decoder_layer.cpp: causal self-attention, cross-attention, feed-forward; residuals and LayerNorms.
// Layer: model.
#include "model/decoder_layer.h"

#include "core/check.h"
#include "ops/validate.h"

namespace attnscope::model {

core::Result<DecoderLayerOutput> decoder_layer(const DecoderLayerArgs& a) {
  constexpr const char* fn = "transformerDecoderLayer";
  ATTN_TRY(core::check_positive(fn, "n", a.n));
  ATTN_TRY(core::check_positive(fn, "m", a.m));
  ATTN_TRY(core::check_positive(fn, "dModel", a.d_model));
  ATTN_TRY(core::check_positive(fn, "numHeads", a.num_heads));
  ATTN_TRY(core::check_positive(fn, "dFF", a.d_ff));
  ATTN_TRY(ops::check_divisible(fn, a.d_model, a.num_heads));
  ATTN_TRY(ops::check_array(fn, "", "x", a.x, ops::Dims{"n*dModel", a.n, a.d_model}));
  ATTN_TRY(ops::check_array(fn, "", "memory", a.memory, ops::Dims{"m*dModel", a.m, a.d_model}));
  ATTN_TRY(detail::check_attention_block(fn, "params.self.", a.self_attn, a.d_model));
  ATTN_TRY(detail::check_attention_block(fn, "params.cross.", a.cross_attn, a.d_model));
  ATTN_TRY(detail::check_feed_forward(fn, a.ff, a.d_model, a.d_ff));
  ATTN_TRY(detail::check_norm(fn, "norm1Gamma", "norm1Beta", a.norm1, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm2Gamma", "norm2Beta", a.norm2, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm3Gamma", "norm3Beta", a.norm3, a.d_model));
  ATTN_TRY(ops::check_positive_finite(fn, "eps", a.eps));
  ATTN_TRY(ops::check_mask(fn, "memoryMask", a.memory_mask, a.n, a.m, "n*m"));
  ATTN_TRY(ops::check_mask(fn, "selfMask", a.self_mask, a.n, a.n, "n*n"));

  BlockWeights w;
  w.self_attn = a.self_attn;
  w.cross_attn = a.cross_attn;
  w.ff = a.ff;
  w.norm[0] = a.norm1;
  w.norm[1] = a.norm2;
  w.norm[2] = a.norm3;
  BlockArgs b;
  b.x = a.x;
  b.memory = a.memory;
  b.n = a.n, b.m = a.m, b.d_model = a.d_model, b.num_heads = a.num_heads, b.d_ff = a.d_ff;
  b.w = &w;
  b.cross = true;
  b.norm_first = a.norm_first;
  b.activation = a.activation;
  b.eps = a.eps;
  b.causal = a.causal;
  b.self_mask = a.self_mask;
  b.memory_mask = a.memory_mask;
  b.keep_trace = a.keep_trace;
  BlockOutput o = run_block(b);
  if (o.overflowed != nullptr) return ops::overflow_error(fn, o.overflowed);
  const bool keep = a.keep_trace;
  DecoderLayerOutput out;
  out.output = std::move(o.output);
  out.self_weights = keep ? o.self_attn.weights : std::move(o.self_attn.weights);
  out.cross_weights = keep ? o.cross_attn.weights : std::move(o.cross_attn.weights);
  if (keep) {
    out.self_attn = std::move(o.self_attn);
    out.cross_attn = std::move(o.cross_attn);
    out.residual1 = std::move(o.residual[0]);
    out.norm1 = std::move(o.norm[0]);
    out.residual2 = std::move(o.residual[1]);
    out.norm2 = std::move(o.norm[1]);
    out.residual3 = std::move(o.residual[2]);
    out.norm3 = std::move(o.norm[2]);
    out.ff_hidden = std::move(o.ff_hidden);
    out.ff_output = std::move(o.ff_output);
  }
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  ATTN_TRY(ops::check_result(fn, "selfWeights", out.self_weights));
  ATTN_TRY(ops::check_result(fn, "crossWeights", out.cross_weights));
  return out;
}

}  // namespace attnscope::model
