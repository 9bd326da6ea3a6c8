// encoder_layer.cpp: self-attention + feed-forward with residuals and LayerNorms. Layer: model.
#include "model/encoder_layer.h"

#include "core/check.h"
#include "ops/activations.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/validate.h"

namespace attnscope::model {

namespace detail {

core::Status check_feed_forward(const char* fn, const FeedForwardWeights& ff, int d_model, int d_ff) {
  using ops::Dims;
  ATTN_TRY(ops::check_array(fn, "params.", "w1", ff.w1, Dims{"dModel*dFF", d_model, d_ff}));
  ATTN_TRY(ops::check_array(fn, "params.", "b1", ff.b1, Dims{"dFF", d_ff}));
  ATTN_TRY(ops::check_array(fn, "params.", "w2", ff.w2, Dims{"dFF*dModel", d_ff, d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", "b2", ff.b2, Dims{"dModel", d_model}));
  return core::Status::Ok();
}

core::Status check_norm(const char* fn, const char* gamma_name, const char* beta_name, const NormWeights& norm,
                        int d_model) {
  ATTN_TRY(ops::check_array(fn, "params.", gamma_name, norm.gamma, ops::Dims{"dModel", d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", beta_name, norm.beta, ops::Dims{"dModel", d_model}));
  return core::Status::Ok();
}

std::vector<float> feed_forward(std::span<const float> x, int n, int d_model, int d_ff, const FeedForwardWeights& ff,
                                Activation activation, std::vector<float>* hidden) {
  // 1. h = act(x W1 + b1) [n, d_ff], activation in place
  std::vector<float> h = ops::linear(x, n, d_model, ff.w1, d_ff, ff.b1);
  if (activation == Activation::kGelu) {
    ops::gelu(h, h);
  } else {
    ops::relu(h, h);
  }
  // 2. y = h W2 + b2 [n, d_model]
  std::vector<float> y = ops::linear(h, n, d_ff, ff.w2, d_model, ff.b2);
  if (hidden != nullptr) *hidden = std::move(h);
  return y;
}

std::vector<float> norm(std::span<const float> x, int n, int d_model, const NormWeights& w, double eps) {
  std::vector<float> y(x.size());
  ops::layer_norm_rows(x, n, d_model, w.gamma, w.beta, static_cast<float>(eps), y);
  return y;
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
  ATTN_TRY(attention::detail::check_mha_weights(fn, "params.", a.attn, a.d_model, a.d_model, a.d_model, false));
  // The layer's attention biases are required (PyTorch's bias=True): an empty one is "not given".
  using ops::Dims;
  ATTN_TRY(ops::check_array(fn, "params.", "bq", a.attn.bq, Dims{"dModel", a.d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", "bk", a.attn.bk, Dims{"dModel", a.d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", "bv", a.attn.bv, Dims{"dModel", a.d_model}));
  ATTN_TRY(ops::check_array(fn, "params.", "bo", a.attn.bo, Dims{"dModel", a.d_model}));
  ATTN_TRY(detail::check_feed_forward(fn, a.ff, a.d_model, a.d_ff));
  ATTN_TRY(detail::check_norm(fn, "norm1Gamma", "norm1Beta", a.norm1, a.d_model));
  ATTN_TRY(detail::check_norm(fn, "norm2Gamma", "norm2Beta", a.norm2, a.d_model));
  ATTN_TRY(ops::check_positive_finite(fn, "eps", a.eps));
  ATTN_TRY(ops::check_mask(fn, "mask", a.mask, a.n, a.n, "n*n"));

  const int n = a.n, d_model = a.d_model;
  EncoderLayerOutput out;
  // 1. self-attention input: x (post-norm) or norm1(x) (pre-norm)
  std::vector<float> x_normed;
  if (a.norm_first) x_normed = detail::norm(a.x, n, d_model, a.norm1, a.eps);
  const std::span<const float> sa_in = a.norm_first ? std::span<const float>(x_normed) : a.x;
  attention::MhaArgs m;
  m.query = m.key = m.value = sa_in;
  m.nq = m.nk = n;
  m.d_model = m.kdim = m.vdim = d_model;
  m.num_heads = a.num_heads;
  m.w = a.attn;
  m.mask = a.mask;
  m.causal = a.causal;
  m.keep_trace = a.keep_trace;
  m.fn = fn;
  attention::MhaOutput sa = attention::detail::multi_head_attention_unchecked(m);
  if (sa.overflowed) return ops::overflow_error(fn, "scores");

  // 2. first residual: r1 = x + SA(.)  (in place unless the trace keeps the attention output)
  std::vector<float> r1 = a.keep_trace ? sa.output : std::move(sa.output);
  ops::add(a.x, r1, r1);
  // 3. x1 = norm1(r1) (post-norm) or r1 (pre-norm)
  std::vector<float> x1;
  if (!a.norm_first) {
    x1 = detail::norm(r1, n, d_model, a.norm1, a.eps);
  } else if (a.keep_trace) {
    x1 = r1;
  } else {
    x1 = std::move(r1);
  }
  // 4. feed-forward on x1 (post-norm) or norm2(x1) (pre-norm)
  std::vector<float> ff_in;
  if (a.norm_first) ff_in = detail::norm(x1, n, d_model, a.norm2, a.eps);
  std::vector<float> f = detail::feed_forward(a.norm_first ? ff_in : x1, n, d_model, a.d_ff, a.ff, a.activation,
                                              a.keep_trace ? &out.ff_hidden : nullptr);
  if (a.keep_trace) out.ff_output = f;
  // 5. second residual, then norm2 in post-norm
  ops::add(x1, f, f);
  if (a.norm_first) {
    if (a.keep_trace) out.residual2 = f;
    out.output = std::move(f);
  } else {
    out.output = detail::norm(f, n, d_model, a.norm2, a.eps);
    if (a.keep_trace) out.residual2 = std::move(f);
  }

  out.weights = a.keep_trace ? sa.weights : std::move(sa.weights);
  if (a.keep_trace) {
    out.attn = std::move(sa);
    out.attn_residual = std::move(r1);
    if (a.norm_first) {
      out.norm1 = std::move(x_normed);
      out.norm2 = std::move(ff_in);
    } else {
      out.norm1 = std::move(x1);
      out.norm2 = out.output;
    }
  }
  ATTN_TRY(ops::check_result(fn, "output", out.output));
  ATTN_TRY(ops::check_result(fn, "weights", out.weights));
  return out;
}

}  // namespace attnscope::model
