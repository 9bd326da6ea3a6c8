// encoder_layer.cpp: transformerEncoderLayer: argument checks, then model/block.cpp. Layer: model.
#include "model/encoder_layer.h"

#include "core/check.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace detail {

core::Status check_feed_forward(const char* fn, const FeedForwardWeights& ff, int d_model, int d_ff) {
  using ops::Dims;
  ATTN_TRY(ops::check_array(fn, "params.", "w1", ff.w1.f32(), Dims{"dModel*dFF", d_model, d_ff}));
  ATTN_TRY(ops::check_array(fn, "params.", "b1", ff.b1, Dims{"dFF", d_ff}));
  ATTN_TRY(ops::check_array(fn, "params.", "w2", ff.w2.f32(), Dims{"dFF*dModel", d_ff, d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", "b2", ff.b2, Dims{"dModel", d_model}));
  return core::Status::Ok();
}

core::Status check_attention_block(const char* fn, const char* prefix, const attention::MhaWeights& w, int d_model) {
  using ops::Dims;
  ATTN_TRY(attention::detail::check_mha_weights(fn, prefix, w, d_model, d_model, d_model, false));
  // The layer's attention biases are required (PyTorch's bias=True): an empty one is "not given".
  ATTN_TRY(ops::check_array(fn, prefix, "bq", w.bq, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bk", w.bk, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bv", w.bv, Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, prefix, "bo", w.bo, Dims{"dModel", d_model}));
  return core::Status::Ok();
}

core::Status check_norm(const char* fn, const char* gamma_name, const char* beta_name, const NormWeights& norm,
                        int d_model) {
  ATTN_TRY(ops::check_array(fn, "params.", gamma_name, norm.gamma, ops::Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", beta_name, norm.beta, ops::Dims{"dModel", d_model}));
  return core::Status::Ok();
}

}  // namespace detail

core::Result<EncoderLayerOutput> encoder_layer(const EncoderLayerArgs& a) {
  constexpr const char* fn = "transformerEncoderLayer";
  ATTN_TRY(core::check_positive(fn, "n", a.n));
  ATTN_TRY(core::check_positive(fn, "dModel", a.d_model));
  ATTN_TRY(core::check_positive(fn, "numHeads", a.num_heads));
  ATTN_TRY(core::check_positive(fn, "dFF", a.d_ff));
  ATTN_TRY(ops::check_divisible(fn, a.d_model, a.num_heads));
  ATTN_TRY(ops::check_array(fn, "", "x", a.x, ops::Dims{"n*dModel", a.n, a.d_model}));
  ATTN_TRY(detail::check_attention_block(fn, "params.", a.attn, a.d_model));
  ATTN_TRY(detail::check_feed_forward(fn, a.ff, a.d_model, a.d_ff));
  ATTN_TRY(detail::check_norm(fn, "norm1Gamma", "norm1Beta", a.norm1, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm2Gamma", "norm2Beta", a.norm2, a.d_model));
  ATTN_TRY(ops::check_positive_finite(fn, "eps", a.eps));
  ATTN_TRY(ops::check_mask(fn, "mask", a.mask, a.n, a.n, "n*n"));

  BlockWeights w;
  w.self_attn = a.attn;
  w.ff = a.ff;
  w.norm[0] = a.norm1;
  w.norm[1] = a.norm2;
  BlockArgs b;
  b.x = a.x;
  b.n = a.n, b.d_model = a.d_model, b.num_heads = a.num_heads, b.d_ff = a.d_ff;
  b.w = &w;
  b.norm_first = a.norm_first;
  b.activation = a.activation;
  b.eps = a.eps;
  b.causal = a.causal;
  b.self_mask = a.mask;
  b.keep_trace = a.keep_trace;
  BlockOutput o = run_block(b);
  if (o.overflowed != nullptr) return ops::overflow_error(fn, "scores");
  EncoderLayerOutput out;
  out.output = std::move(o.output);
  out.weights = a.keep_trace ? o.self_attn.weights : std::move(o.self_attn.weights);
  if (a.keep_trace) {
    out.attn = std::move(o.self_attn);
    out.attn_residual = std::move(o.residual[0]);
    out.norm1 = std::move(o.norm[0]);
    out.ff_hidden = std::move(o.ff_hidden);
    out.ff_output = std::move(o.ff_output);
    out.residual2 = std::move(o.residual[1]);
    out.norm2 = std::move(o.norm[1]);
  }
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  return out;
}

}  // namespace attnscope::model
